/**
 * @module The SQLite store with group commit (what the HTTP service runs):
 * the whole Store contract still holds, and concurrent writes are committed
 * in batches while each caller resolves only after its batch is durable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/store/sqlite.js';
import { defineStoreContract, receipt } from './store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'aov-group-'));
const file = join(dir, 'verifier.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

defineStoreContract('sqlite + group commit', {
  open: async () => createSqliteStore({ file, groupCommit: true }),
  async consumeFromWorkers({ clientKey, day, limit, workers, attemptsPerWorker }) {
    // Independent handles in this process, each batching its own writes.
    const handles = Array.from({ length: workers }, () => createSqliteStore({ file, groupCommit: true }));
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
  },
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
