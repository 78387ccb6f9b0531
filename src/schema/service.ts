import { builder } from './builder.js';

export const SERVICE_VERSION = '1';

builder.queryField('apiVersion', (t) =>
  t.string({ description: 'Version of the API this server speaks.', resolve: () => SERVICE_VERSION }),
);
