/**
 * @module A WAL sync that fails, on the SQLite writer thread. Every receipt is answered only after a
 * sync of the WAL that started after its commit; when that sync fails, the write is committed but not
 * durable, so it must be answered as a store fault (never as stored), and a unit taken with it must go
 * back. The failure is a real one from the kernel: the WAL's path is made to name /dev/null, which
 * fdatasync refuses (EINVAL), while SQLite keeps writing the WAL it has open; the writer opens the path
 * anew when it names another file, so its next sync fails. Linux only.
 */
import { existsSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteOffloadStore } from '../src/store/sqlite-offload.js';
import { storeFaultReason } from '../src/store/faults.js';
import { receipt } from './store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'aov-walsync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DAY = '2026-12-03';
const at = '2026-12-03T12:00:00Z';
const linux = process.platform === 'linux' && existsSync('/dev/null');

/** Runs fn while the WAL's path names /dev/null (the file SQLite writes stays open, aside), then puts it back. */
async function withFailingWalSync<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const wal = `${file}-wal`;
  renameSync(wal, `${wal}.aside`);
  symlinkSync('/dev/null', wal);
  try {
    return await fn();
  } finally {
    unlinkSync(wal);
    renameSync(`${wal}.aside`, wal);
  }
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe.skipIf(!linux)('SQLite writer: a WAL sync that fails', () => {
  it('a receipt with its unit is answered as a store fault and the unit goes back', async () => {
    const file = join(dir, 'unit.db');
    const store = createSqliteOffloadStore({ file });
    try {
      // A first receipt makes the WAL and syncs its directory.
      const first = await store.consumeAllowanceAndSaveReceipt('c1', DAY, 5, receipt('agent-a', at, 'pass'));
      expect(first.used).toBe(1);

      const err = await withFailingWalSync(file, () => rejection(store.consumeAllowanceAndSaveReceipt('c1', DAY, 5, receipt('agent-a', at, 'pass'))));
      // Committed, not durable: a fault the service answers with a 503, nothing acknowledged.
      expect((err as { committed?: boolean }).committed).toBe(true);
      expect(storeFaultReason(err)).toBe('disk sync failed');
      // The unit taken with it went back.
      expect((await store.peekAllowance('c1', DAY, 5)).used).toBe(1);

      // With the WAL back, writes are acknowledged again.
      const next = await store.consumeAllowanceAndSaveReceipt('c1', DAY, 5, receipt('agent-a', at, 'pass'));
      expect(next).toMatchObject({ allowed: true, used: 2 });
    } finally {
      await store.close();
    }
  });

  it('a receipt without a unit is answered as a store fault; the writer carries on', async () => {
    const file = join(dir, 'plain.db');
    const store = createSqliteOffloadStore({ file });
    try {
      await store.saveReceipt(receipt('agent-b', at, 'pass'));
      // Several at once, in one or a few batches: every receipt of a batch whose sync failed gets that failure.
      const outcomes = await withFailingWalSync(file, () =>
        Promise.allSettled(Array.from({ length: 12 }, () => store.saveReceipt(receipt('agent-b', at, 'fail')))),
      );
      expect(outcomes.every((o) => o.status === 'rejected')).toBe(true);
      for (const o of outcomes) expect(storeFaultReason((o as PromiseRejectedResult).reason)).toBe('disk sync failed');
      await store.saveReceipt(receipt('agent-b', at, 'pass'));
      expect(await store.health()).toBe(true);
    } finally {
      await store.close();
    }
  });
});
