/**
 * @module The Store contract against PostgreSQL at 127.0.0.1:5432 db `test`, in a
 * throwaway schema per run (dropped afterwards). Independent pools stand in for
 * independent instances behind a load balancer.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/index.js';
import { POSTGRES_MIGRATIONS } from '../src/store/migrations/postgres.js';
import { createPostgresStore, type PostgresStore } from '../src/store/postgres.js';
import { defineStoreContract } from './store-contract.js';
import { postgresTestTarget } from './postgres-helpers.js';

const pg = await postgresTestTarget('store-postgres', 'aov_test');
const { url: URL, schema, available } = pg;

describe.skipIf(!available)('postgres', () => {
  afterAll(async () => {
    await pg.dropSchema();
  });

  defineStoreContract('postgres', {
    open: async () => createPostgresStore({ connectionString: URL, schema, poolSize: 5 }),
    async consumeFromWorkers({ clientKey, day, limit, workers, attemptsPerWorker }) {
      const stores = await Promise.all(Array.from({ length: workers }, () => createPostgresStore({ connectionString: URL, schema, poolSize: 4 })));
      try {
        // Each worker keeps 4 calls in flight on its own pool.
        return await Promise.all(
          stores.map(async (s) => {
            let granted = 0;
            const lane = async (n: number) => {
              for (let i = 0; i < n; i++) if ((await s.consumeAllowance(clientKey, day, limit)).allowed) granted++;
            };
            await Promise.all([lane(attemptsPerWorker / 4), lane(attemptsPerWorker / 4), lane(attemptsPerWorker / 4), lane(attemptsPerWorker / 4)]);
            return granted;
          }),
        );
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    },
  });

  describe('postgres specifics', () => {
    it('instances starting together on a fresh schema migrate once (advisory lock)', async () => {
      const fresh = `${schema}_m`;
      const stores: PostgresStore[] = await Promise.all(Array.from({ length: 4 }, () => createPostgresStore({ connectionString: URL, schema: fresh, poolSize: 1 })));
      try {
        for (const s of stores) expect(await s.appliedMigrations()).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
      } finally {
        await stores[0].dropSchema();
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it('openStore with a postgres:// URL selects PostgreSQL', async () => {
      const s = await openStore({ databaseUrl: URL.replace('postgresql://', 'postgres://'), dataDir: '/nonexistent-not-used', schema });
      try {
        expect(await s.health()).toBe(true);
        expect((s as unknown as PostgresStore).schema).toBe(schema);
      } finally {
        await s.close();
      }
    });

    it('health is false when the server cannot be reached', async () => {
      const s = await createPostgresStore({ connectionString: URL, schema, poolSize: 1 });
      await s.close();
      expect(await s.health()).toBe(false);
      await expect(createPostgresStore({ connectionString: 'postgresql://postgres@127.0.0.1:1/test', schema: `x${randomUUID().slice(0, 8)}` })).rejects.toThrow();
    });

    it('rejects an unsafe schema name', async () => {
      await expect(createPostgresStore({ connectionString: URL, schema: 'a"; DROP TABLE x; --' })).rejects.toThrow(TypeError);
    });
  });
});
