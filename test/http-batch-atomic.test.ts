/**
 * @module POST /verify/batch is all or nothing, against a live server on a real socket,
 * on SQLite and on PostgreSQL: the free allowance is taken for N items in one statement
 * or not at all; an item whose run fails, or a store write that fails, leaves nothing
 * stored (no receipt, no log queue entry) and gives every unit back; and once the fault
 * is gone the same batch stores every receipt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/store.js';
import { postJson, startApp, tempDir, type Running } from './http-helpers.js';
import { postgresTestTarget } from './postgres-helpers.js';

const schema = { type: 'object', required: ['qty'], properties: { qty: { type: 'integer', minimum: 0 } } };
const LIMIT = 20;

function batch(agentId: string, n: number): string {
  return JSON.stringify({
    expected_schema: schema,
    items: Array.from({ length: n }, (_, i) => ({ task_id: `t-${i}`, agent_id: agentId, submitted_output: { qty: i % 2 === 0 ? i : -i } })),
  });
}

/** Replace one store method until restored (the app's store is a proxy over the real one: the guard still applies). */
function injectFault<K extends keyof Store>(store: Store, method: K, fail: () => Error): () => void {
  const target = store as unknown as Record<string, unknown>;
  const original = target[method as string];
  target[method as string] = async () => {
    throw fail();
  };
  return () => {
    target[method as string] = original;
  };
}

const diskFull = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
const pgDown = () => Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
const pg = await postgresTestTarget('batch atomicity (PostgreSQL)', 'aov_batch');

const backends: Array<{ name: string; env: () => Record<string, string>; fault: () => Error; run: boolean }> = [
  { name: 'SQLite', env: () => ({}), fault: diskFull, run: true },
  { name: 'PostgreSQL', env: () => ({ DATABASE_URL: pg.url, DATABASE_SCHEMA: pg.schema }), fault: pgDown, run: pg.available },
];

for (const backend of backends) {
  describe.runIf(backend.run)(`POST /verify/batch is all or nothing (${backend.name})`, () => {
    let tmp: ReturnType<typeof tempDir>;
    let srv: Running;
    const client = '127.0.0.1';

    beforeAll(async () => {
      tmp = tempDir('aov-batch-atomic-');
      srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: String(LIMIT), ...backend.env() });
    });
    afterAll(async () => {
      await srv?.close();
      tmp?.cleanup();
      if (backend.name === 'PostgreSQL') await pg.dropSchema();
    });

    const used = async () => (await srv.handle.pipeline.peekAllowance({ clientKey: client })).used;
    const stored = async (agentId: string) => (await srv.handle.store.reputation(agentId, { limit: 100 })).verifications;
    /** Log queue rows of this agent's receipts, or of receipts that are not there (a queue row must never outlive a rollback). */
    const queued = async (agentId: string) =>
      (await srv.handle.store.logPending(100_000)).filter((p) => p.record === null || p.record.agentId === agentId).length;

    it('a store write that fails: 503, nothing stored or queued for the log, every unit given back; then the batch goes through', async () => {
      const agent = `atomic-write-${backend.name}`;
      const before = await used();
      const restore = injectFault(srv.handle.store, 'saveReceipts', backend.fault);
      let res: Response;
      try {
        res = await postJson(srv.base, '/verify/batch', batch(agent, 6));
      } finally {
        restore();
      }
      expect(res.status).toBe(503);
      expect(((await res.json()) as { code: string; charged: boolean })).toMatchObject({ code: 'unavailable', charged: false });
      expect(await stored(agent)).toBe(0);
      expect(await queued(agent)).toBe(0);
      expect(await used()).toBe(before);

      const ok = await postJson(srv.base, '/verify/batch', batch(agent, 6));
      expect(ok.status).toBe(200);
      const body = (await ok.json()) as { summary: unknown; receipts: Array<{ verification_id: string }> };
      expect(body.summary).toEqual({ total: 6, passed: 3, failed: 3 });
      expect(await stored(agent)).toBe(6);
      expect(await used()).toBe(before + 6);
      expect(Number(ok.headers.get('free-allowance-remaining'))).toBe(LIMIT - before - 6);
      // Each receipt that reached the client is stored byte for byte.
      for (const r of body.receipts) expect(await srv.handle.store.getReceipt(r.verification_id)).toBe(JSON.stringify(r));
    });

    it('an item whose run fails: an error, none of the batch stored, every unit given back', async () => {
      const agent = `atomic-run-${backend.name}`;
      const before = await used();
      const runner = srv.handle.runner;
      const original = runner.run.bind(runner);
      let calls = 0;
      runner.run = async (prepared) => {
        // The third item fails; the others run (and sign) normally.
        if (++calls === 3) throw new Error('worker crashed');
        return original(prepared);
      };
      let res: Response;
      try {
        res = await postJson(srv.base, '/verify/batch', batch(agent, 5));
      } finally {
        runner.run = original;
      }
      expect(res.status).toBe(500);
      expect(((await res.json()) as { code: string; charged: boolean })).toMatchObject({ code: 'internal_error', charged: false });
      expect(calls).toBe(5);
      expect(await stored(agent)).toBe(0);
      expect(await used()).toBe(before);
    });

    it('fewer units left than items: 429, nothing taken; exactly the units left still fit', async () => {
      const agent = `atomic-short-${backend.name}`;
      const before = await used();
      const left = LIMIT - before;
      expect(left).toBeGreaterThan(1);
      const refused = await postJson(srv.base, '/verify/batch', batch(agent, left + 1));
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { code: string }).code).toBe('free_allowance_exhausted');
      expect(refused.headers.get('free-allowance-remaining')).toBe(String(left));
      expect(await used()).toBe(before);
      expect(await stored(agent)).toBe(0);
      const fits = await postJson(srv.base, '/verify/batch', batch(agent, left));
      expect(fits.status).toBe(200);
      expect(fits.headers.get('free-allowance-remaining')).toBe('0');
      expect(await stored(agent)).toBe(left);
    });
  });
}
