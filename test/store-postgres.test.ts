/**
 * @module The Store contract against PostgreSQL at 127.0.0.1:5432 db `test`, in a
 * throwaway schema per run (dropped afterwards). Independent pools stand in for
 * independent instances behind a load balancer.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { receiptValues } from '../src/store/common.js';
import { openStore } from '../src/store/index.js';
import { POSTGRES_MIGRATIONS } from '../src/store/migrations/postgres.js';
import { createPostgresStore, type PostgresStore } from '../src/store/postgres.js';
import { createPostgresAllowanceCounter, createPostgresReceiptWriter } from '../src/store/postgres-writer.js';
import { defineStoreContract, receipt } from './store-contract.js';
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

  describe('group commit (postgres-writer.ts)', () => {
    // The writer and counter on a plain pool over the migrated schema, so their statement counts can be read.
    const Pool = (createRequire(import.meta.url)('pg') as { Pool: new (o: object) => { query: (...a: never[]) => Promise<never>; end(): Promise<void> } }).Pool;
    const q = `"${schema}"`;

    it('200 concurrent saves commit in far fewer statements; each resolves only once its row is readable', async () => {
      const store = await createPostgresStore({ connectionString: URL, schema, poolSize: 2 });
      const pool = new Pool({ connectionString: URL, max: 2, options: '-c synchronous_commit=on' });
      const writer = createPostgresReceiptWriter({ pool: pool as never, q, maxInFlight: 2 });
      try {
        const records = Array.from({ length: 200 }, (_, i) => receipt('writer-agent', `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`, 'pass'));
        await Promise.all(
          records.map(async (r) => {
            await writer.save([receiptValues(r)]);
            // Resolved ⇒ committed: another connection reads it right away.
            expect(await store.getReceipt(r.verificationId)).toBe(r.receipt);
          }),
        );
        const { flushes, rows } = writer.stats();
        expect(rows).toBe(200);
        expect(flushes).toBeLessThan(20);
      } finally {
        await writer.close();
        await pool.end();
        await store.close();
      }
    });

    it('a duplicate verification id in a flush fails only its own save', async () => {
      const store = await createPostgresStore({ connectionString: URL, schema, poolSize: 2 });
      const pool = new Pool({ connectionString: URL, max: 1, options: '-c synchronous_commit=on' });
      const writer = createPostgresReceiptWriter({ pool: pool as never, q, maxInFlight: 1 });
      try {
        const existing = receipt('dup-agent', '2026-01-02T00:00:00Z', 'pass');
        await store.saveReceipt(existing);
        const others = Array.from({ length: 20 }, () => receipt('dup-agent', '2026-01-02T00:00:01Z', 'fail'));
        const clash = { ...receipt('dup-agent', '2026-01-02T00:00:02Z', 'fail'), verificationId: existing.verificationId };
        const outcomes = await Promise.allSettled([...others.slice(0, 10), clash, ...others.slice(10)].map((r) => writer.save([receiptValues(r)])));
        expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(1);
        expect(outcomes[10]?.status).toBe('rejected');
        for (const r of others) expect(await store.getReceipt(r.verificationId)).toBe(r.receipt);
        expect(await store.getReceipt(existing.verificationId)).toBe(existing.receipt);
      } finally {
        await writer.close();
        await pool.end();
        await store.close();
      }
    });

    it('allowance: 300 concurrent calls over 5 clients from two counters, limit 40: exactly 40 each, in far fewer statements, no deadlock', async () => {
      const store = await createPostgresStore({ connectionString: URL, schema, poolSize: 2 });
      const pools = [0, 1].map(() => new Pool({ connectionString: URL, max: 2, options: '-c synchronous_commit=off' }));
      const counters = pools.map((pool) => createPostgresAllowanceCounter({ pool: pool as never, q, maxInFlight: 2 }));
      const clients = Array.from({ length: 5 }, () => `group-${randomUUID()}`);
      try {
        // Clients interleaved differently on each counter, so their flushes would deadlock without one lock order.
        const calls = Array.from({ length: 300 }, (_, i) => {
          const counter = counters[i % 2]!;
          const client = clients[(i % 2 === 0 ? i : 299 - i) % 5]!;
          return counter.consume(client, '2026-01-03', 40).then((r) => ({ client, ...r }));
        });
        const results = await Promise.all(calls);
        for (const c of clients) {
          const mine = results.filter((r) => r.client === c);
          const granted = mine.filter((r) => r.allowed);
          expect(granted).toHaveLength(40);
          // Each granted call reports its own unit: 1 … 40, each once.
          expect(granted.map((r) => r.used).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
          for (const r of mine.filter((x) => !x.allowed)) expect(r.used).toBe(40);
          expect((await store.peekAllowance(c, '2026-01-03', 40)).used).toBe(40);
        }
        const statements = counters.reduce((n, c) => n + c.stats().flushes, 0);
        expect(statements).toBeLessThan(100);
      } finally {
        await Promise.all(counters.map((c) => c.close()));
        await Promise.all(pools.map((p) => p.end()));
        await store.close();
      }
    });
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
