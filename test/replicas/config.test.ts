import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const PRIMARY = { DATABASE_URL: 'postgres://crm@db:5432/crm', WEB_CONCURRENCY: '1' };

describe('DATABASE_REPLICA_URLS', () => {
  it('is a comma-separated list of PostgreSQL URLs; unset, there are none', () => {
    const config = loadConfig({ ...PRIMARY, DATABASE_REPLICA_URLS: ' postgres://crm@replica-1/crm, postgresql://crm:secret@replica-2:6432/crm ' });
    expect(config.replicaUrls).toEqual(['postgres://crm@replica-1/crm', 'postgresql://crm:secret@replica-2:6432/crm']);
    expect(loadConfig(PRIMARY).replicaUrls).toBeUndefined();
  });

  it('needs DATABASE_URL: the embedded database has no replicas', () => {
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://replica/crm' })).toThrow(/^DATABASE_REPLICA_URLS needs DATABASE_URL/);
  });

  it('refuses an entry that is not a PostgreSQL URL, naming its place but not its text (it may hold a password)', () => {
    const refuse = (value: string) => () => loadConfig({ ...PRIMARY, DATABASE_REPLICA_URLS: value });
    expect(refuse('postgres://replica/crm,mysql://root:hunter2@replica-2/crm')).toThrow('DATABASE_REPLICA_URLS must be postgres:// URLs separated by commas (entry 2 is not one)');
    expect(refuse('postgres://replica/crm,,postgres://other/crm')).toThrow(/entry 2 is not one/);
    expect(refuse('replica-host:5432')).toThrow(/entry 1 is not one/);
  });

  it('needs REDIS_URL when several server processes share the positions of each key’s writes', () => {
    const env = { ...PRIMARY, DATABASE_REPLICA_URLS: 'postgres://replica/crm', WEB_CONCURRENCY: '4' };
    expect(() => loadConfig(env)).toThrow(/^DATABASE_REPLICA_URLS needs REDIS_URL when more than one server process runs \(WEB_CONCURRENCY is 4\)/);
    expect(loadConfig({ ...env, REDIS_URL: 'redis://cache:6379' }).replicaUrls).toEqual(['postgres://replica/crm']);
  });
});
