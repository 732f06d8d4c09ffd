/**
 * @module The SQLite store variants the HTTP service can run: group commit on
 * the main thread, and the worker-thread writer. The whole Store contract
 * holds for both, and each write resolves only after its batch is committed.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/store/sqlite.js';
import { createSqliteOffloadStore } from '../src/store/sqlite-offload.js';
import type { Store } from '../src/store/store.js';
import { parseVerificationRequest } from '../src/core/request.js';
import { createSchemaEngine } from '../src/core/schema/index.js';
import { createVerifier } from '../src/core/verify.js';
import { draftReceipt, finishReceipt, type UnsignedReceipt } from '../src/receipts/issue-receipt.js';
import { keyObjectOf, type KeyRing } from '../src/receipts/key-ring.js';
import { createStaticKeyRing, privateKeyPemFromSeed } from '../src/receipts/index.js';
import { createPresigner } from '../src/receipts/v1/attestation.js';
import { verifyReceipt } from '../src/receipts/verify-receipt.js';
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

const verifier = createVerifier({ engine: createSchemaEngine() });
const invoice = readFileSync(join(import.meta.dirname, 'fixtures/invoice.request.json'), 'utf8');

/** A real draft of the invoice's receipt and the ring key it is for (what the service hands the store). */
function draftFor(ring: KeyRing, agentId: string, verifiedAt: string): UnsignedReceipt {
  const signer = ring.signer(verifiedAt);
  const parsed = parseVerificationRequest(invoice.replace(/"agent_id":\s*"[^"]*"/, `"agent_id":"${agentId}"`));
  const draft = draftReceipt(parsed, { verificationId: randomUUID(), verifiedAt }, signer.keyVersion, {
    verifier,
    presigner: createPresigner({ serviceName: 'agent-output-verifier', baseUrl: 'http://127.0.0.1' }),
    verifierVersion: '0.0.0-test',
  });
  return { draft, signer };
}

describe('worker-thread writer: receipts signed as they are stored', () => {
  const ringA = createStaticKeyRing(privateKeyPemFromSeed(new Uint8Array(32).fill(3)), { keyVersion: 'k-a', notBefore: '2020-01-01T00:00:00Z' });
  const ringB = createStaticKeyRing(privateKeyPemFromSeed(new Uint8Array(32).fill(4)), { keyVersion: 'k-b', notBefore: '2020-01-01T00:00:00Z' });

  it('stores, and answers the signature of, exactly the bytes a signature made on this thread gives; each key signs its own receipts', async () => {
    const a = createSqliteOffloadStore({ file: offloadFile });
    try {
      // Two keys interleaved in the same batches: each crosses to the writer once, and signs only its own drafts.
      const drafts = Array.from({ length: 40 }, (_, i) => draftFor(i % 2 ? ringB : ringA, 'signing-agent', `2026-01-05T00:00:${String(i).padStart(2, '0')}Z`));
      const texts = await Promise.all(drafts.map((u) => a.signAndSaveReceipt(u.draft, keyObjectOf(u.signer)!)));
      for (const [i, u] of drafts.entries()) {
        const here = finishReceipt(u.draft, u.signer);
        const stored = await a.getReceipt(u.draft.verificationId);
        expect(stored).toBe(here.text);
        expect(texts[i]).toBe(here.text);
        const ring = i % 2 ? ringB : ringA;
        expect(verifyReceipt(stored!, { publicKey: ring.active().publicKey })).toMatchObject({ valid: true });
        const other = i % 2 ? ringA : ringB;
        expect(verifyReceipt(stored!, { publicKey: other.active().publicKey }).valid).toBe(false);
      }
    } finally {
      await a.close();
    }
  });

  it('with a unit: exactly the units left are granted under concurrency; a refused one is neither stored nor answered', async () => {
    const a = createSqliteOffloadStore({ file: offloadFile });
    try {
      const drafts = Array.from({ length: 24 }, (_, i) => draftFor(ringA, 'signing-unit', `2026-01-06T00:00:${String(i).padStart(2, '0')}Z`));
      const states = await Promise.all(
        drafts.map((u) => a.consumeAllowanceAndSignAndSaveReceipt('signing-client', '2026-01-06', 5, u.draft, keyObjectOf(u.signer)!)),
      );
      expect(states.filter((st) => st.allowed)).toHaveLength(5);
      for (const [i, st] of states.entries()) {
        const stored = await a.getReceipt(drafts[i]!.draft.verificationId);
        if (st.allowed) {
          expect(stored).toBe(finishReceipt(drafts[i]!.draft, drafts[i]!.signer).text);
          expect(st.receipt).toBe(stored);
        } else {
          expect(st.receipt).toBeNull();
          expect(stored).toBeNull();
        }
      }
      expect((await a.peekAllowance('signing-client', '2026-01-06', 5)).used).toBe(5);
      // A limit of 0 grants nothing and stores nothing.
      const zero = draftFor(ringA, 'signing-unit', '2026-01-06T00:01:00Z');
      const st = await a.consumeAllowanceAndSignAndSaveReceipt('signing-client-0', '2026-01-06', 0, zero.draft, keyObjectOf(zero.signer)!);
      expect(st).toMatchObject({ allowed: false, used: 0, receipt: null });
      expect(await a.getReceipt(zero.draft.verificationId)).toBeNull();
    } finally {
      await a.close();
    }
  });

  it('a duplicate id rejects alone and leaves the first receipt as it was', async () => {
    const a = createSqliteOffloadStore({ file: offloadFile });
    try {
      const u = draftFor(ringA, 'signing-dup', '2026-01-07T00:00:00Z');
      await a.signAndSaveReceipt(u.draft, keyObjectOf(u.signer)!);
      const again = { ...u, draft: { ...u.draft, result: 'fail' as const } };
      const other = draftFor(ringB, 'signing-dup', '2026-01-07T00:00:01Z');
      const results = await Promise.allSettled([
        a.signAndSaveReceipt(again.draft, keyObjectOf(again.signer)!),
        a.signAndSaveReceipt(other.draft, keyObjectOf(other.signer)!),
      ]);
      expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: expect.stringMatching(/^SQLITE_CONSTRAINT/) } });
      expect(results[1].status).toBe('fulfilled');
      expect(await a.getReceipt(u.draft.verificationId)).toBe(finishReceipt(u.draft, u.signer).text);
    } finally {
      await a.close();
    }
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
