// The tenant-scoped client: which models it reaches comes from the Prisma schema, and the
// rest are out of reach at compile time and at run time.
import { describe, expect, it } from 'vitest';
import { BUSINESS_MODELS, scopeArgs, type TenantClient } from '../../src/db/tenant.js';
import '../../src/schema/index.js';
import { registeredResources } from '../../src/schema/registry.js';

describe('the tenant-scoped client', () => {
  it('reaches the tenant-shaped models of the Prisma schema, not keys, users or sessions', () => {
    // Every resource, the line items of invoices and estimates, and the organization's own rows.
    const resources = registeredResources().map((resource) => resource.type as string);
    expect([...BUSINESS_MODELS].sort()).toEqual(
      [
        ...resources, 'EstimateLineItem', 'Event', 'IdempotencyKey', 'Import', 'InvoiceLineItem', 'OrganizationCounter',
        'RecordCount', 'RequestLog', 'WebhookAttempt', 'WebhookDelivery', 'WebhookEndpoint',
      ].sort(),
    );
    expect(resources).toContain('Customer');
    for (const model of ['ApiKey', 'User', 'Session', 'ServiceKey']) {
      expect(() => scopeArgs(model, 'findMany', {}, 'org-1')).toThrow(/not reachable/);
    }
  });

  it('filters every read and stamps every write with the organization', () => {
    expect(scopeArgs('Customer', 'findMany', { where: { name: 'Ada' } }, 'org-1')).toEqual({ where: { deletedAt: null, name: 'Ada', organizationId: 'org-1' } });
    expect(scopeArgs('Customer', 'create', { data: { name: 'Ada', organizationId: 'org-2' } }, 'org-1')).toEqual({ data: { name: 'Ada', organizationId: 'org-1' } });
  });

  it('leaves deleted records out unless the query names deletedAt, and deletes by organization only', () => {
    expect(scopeArgs('Job', 'updateMany', { where: { id: 'j' }, data: {} }, 'org-1').where).toEqual({ deletedAt: null, id: 'j', organizationId: 'org-1' });
    expect(scopeArgs('Job', 'findMany', { where: { deletedAt: undefined } }, 'org-1').where).toEqual({ deletedAt: undefined, organizationId: 'org-1' });
    expect(scopeArgs('InvoiceLineItem', 'findMany', {}, 'org-1').where).toEqual({ organizationId: 'org-1' });
    expect(scopeArgs('Customer', 'deleteMany', { where: {} }, 'org-1').where).toEqual({ organizationId: 'org-1' });
  });
});

// Checked by `tsc --noEmit` (the first half of `npm test`): resolvers cannot even name
// keys, users or sessions on their client. Removing either directive fails the type check.
export function offeredToResolvers(client: TenantClient) {
  return [
    // @ts-expect-error API keys are not business data
    client.apiKey,
    // @ts-expect-error nor are users
    client.user,
    client.customer,
  ];
}
