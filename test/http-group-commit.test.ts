/**
 * @module The SQLite store variants the HTTP service can run: group commit on
 * the main thread, and the worker-thread writer. The whole Store contract
 * holds for both, and each write resolves only after its batch is committed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/store/sqlite.js';
import { createSqliteOffloadStore } from '../src/store/sqlite-offload.js';
import type { Store } from '../src/store/store.js';
import { defineStoreContract, receipt, type StoreHarness } from './store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'aov-group-'));
const file = join(dir, 'verifier.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each worker is its own store handle, with all its attempts in flight at once. */
function consumeFromHandles(open: () => Store): StoreHarness['consumeFromWorkers'] {
  return async ({ clientKey, day, limit, workers, attemptsPerWorker }) => {
    const handles = Array.from({ length: workers }, open);
    try {
      return await Promise.all(
        handles.map(async (h) => {
          const states = await Promise.all(Array.from({ length: attemptsPerWorker }, () => h.consumeAllowance(clientKey, day, limit)));
          return states.filter((s) => s.allowed).length;
        }),
      );
    } finally {
      await Promise.all(handles.map((h) => h.close()));
    }
  };
}

defineStoreContract('sqlite + group commit', {
  open: async () => createSqliteStore({ file, groupCommit: true }),
  // Independent handles in this process, each batching its own writes.
  consumeFromWorkers: consumeFromHandles(() => createSqliteStore({ file, groupCommit: true })),
});

const offloadFile = join(dir, 'offload.db');
defineStoreContract('sqlite + worker-thread writer', {
  open: async () => createSqliteOffloadStore({ file: offloadFile }),
  // Independent stores, each with its own writer thread and connection.
  consumeFromWorkers: consumeFromHandles(() => createSqliteOffloadStore({ file: offloadFile })),
});

describe('worker-thread writer specifics', () => {
  it('writes in flight at close() are committed; afterwards calls are refused', async () => {
    const a = createSqliteOffloadStore({ file: offloadFile });
    const b = createSqliteStore({ file: offloadFile });
    const records = Array.from({ length: 50 }, (_, i) => receipt('offload-agent', `2026-01-03T00:00:${String(i).padStart(2, '0')}Z`, 'pass'));
    const saves = records.map((r) => a.saveReceipt(r));
    const closed = a.close();
    await Promise.all(saves);
    await closed;
    for (const r of records) expect(await b.getReceipt(r.verificationId)).toBe(r.receipt);
    await expect(a.saveReceipt(receipt('offload-agent', '2026-01-03T00:01:00Z', 'pass'))).rejects.toThrow();
    expect(await a.health()).toBe(false);
    await b.close();
  });

  it('a duplicate id rejects alone with the driver error code', async () => {
    const a = createSqliteOffloadStore({ file: offloadFile });
    const r1 = receipt('offload-dup', '2026-01-04T00:00:00Z', 'pass');
    await a.saveReceipt(r1);
    const r2 = receipt('offload-dup', '2026-01-04T00:00:01Z', 'fail');
    const results = await Promise.allSettled([a.saveReceipt(r1), a.saveReceipt(r2)]);
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: expect.stringMatching(/^SQLITE_CONSTRAINT/) } });
    expect(results[1].status).toBe('fulfilled');
    await a.close();
  });
});

describe('group commit specifics', () => {
  it('a batch that resolved is visible to another handle; close() commits what is queued', async () => {
    const a = createSqliteStore({ file, groupCommit: true });
    const b = createSqliteStore({ file });
    const records = Array.from({ length: 20 }, (_, i) => receipt('group-agent', `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`, 'pass'));
    await Promise.all(records.map((r) => a.saveReceipt(r)));
    for (const r of records) expect(await b.getReceipt(r.verificationId)).toBe(r.receipt);

    const late = receipt('group-agent', '2026-01-01T00:01:00Z', 'fail');
    const saved = a.saveReceipt(late);
    await a.close();
    await saved;
    expect(await b.getReceipt(late.verificationId)).toBe(late.receipt);
    await b.close();
  });

  it('a failing write rejects alone; the rest of its batch commits', async () => {
    const a = createSqliteStore({ file, groupCommit: true });
    const r1 = receipt('dup-agent', '2026-01-02T00:00:00Z', 'pass');
    await a.saveReceipt(r1);
    const r2 = receipt('dup-agent', '2026-01-02T00:00:01Z', 'pass');
    const results = await Promise.allSettled([a.saveReceipt(r1), a.saveReceipt(r2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect(await a.getReceipt(r2.verificationId)).toBe(r2.receipt);
    await a.close();
  });
});
