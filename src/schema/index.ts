import { builder } from './builder.js';
import './service.js';

export const schema = builder.toSchema();
