// Who gets refused before any work: requests without a valid key are counted per client
// address, and never at the expense of valid keys from the same address (a shared proxy).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startApi, type Api } from '../helpers/api.js';
import { DB_KINDS } from '../helpers/databases.js';

const MAX = 5;

describe.each(DB_KINDS)('admission on %s', (kind) => {
  describe('without a proxy', () => {
    let api: Api;
    beforeAll(async () => {
      api = await startApi(kind, { acme: { org: 'Acme' } }, { RATE_LIMIT_MAX: String(MAX) });
    });
    afterAll(() => api.stop());

    it('a bad-key flood from one address is refused with 429, and valid keys from it are unaffected', async () => {
      const bad = [];
      for (let i = 0; i < MAX + 3; i++) bad.push((await call(`${api.url}/v1/customers`, { key: `svc_live_guess${i}` })).status);
      expect(bad.slice(0, MAX)).toEqual(Array(MAX).fill(401));
      expect(bad.slice(MAX)).toEqual([429, 429, 429]);
      const valid = await call(`${api.url}/v1/customers`, { key: api.keys.acme });
      expect(valid.status).toBe(200);
      expect(valid.headers.get('ratelimit-remaining')).toBe(String(MAX - 1));
      const graph = await call(`${api.url}/graphql`, { method: 'POST', key: api.keys.acme, json: { query: '{ apiVersion }' } });
      expect(graph.status).toBe(200);
    });
  });

  describe('behind a proxy (TRUST_PROXY=1)', () => {
    let api: Api;
    beforeAll(async () => {
      api = await startApi(kind, { acme: { org: 'Acme' } }, { RATE_LIMIT_MAX: String(MAX), TRUST_PROXY: '1' });
    });
    afterAll(() => api.stop());

    it('counts each client by the address the proxy saw, not what the client claims', async () => {
      const from = (address: string, claimed = '') => ({ 'x-forwarded-for': claimed ? `${claimed}, ${address}` : address });
      for (let i = 0; i < MAX; i++) expect((await call(`${api.url}/v1/customers`, { key: 'svc_live_bad', headers: from('203.0.113.7') })).status).toBe(401);
      expect((await call(`${api.url}/v1/customers`, { key: 'svc_live_bad', headers: from('203.0.113.7') })).status).toBe(429);
      // A forged left-most entry does not escape the count.
      expect((await call(`${api.url}/v1/customers`, { key: 'svc_live_bad', headers: from('203.0.113.7', '198.51.100.1') })).status).toBe(429);
      expect((await call(`${api.url}/v1/customers`, { key: 'svc_live_bad', headers: from('203.0.113.8') })).status).toBe(401);
    });
  });
});
