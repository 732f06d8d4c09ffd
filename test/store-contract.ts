/**
 * @module The one behavioural contract of the store, port by port (StoreOps,
 * AllowanceStore, ReceiptStore, PaymentStore, KeyStore, LogNoteKeyStore,
 * StoreMetrics), registered as vitest tests against a harness: each port's tests
 * see the store as that port only. test/store-sqlite.test.ts and
 * test/store-postgres.test.ts run it against each backend, so both give the same answers.
 */
import { generateKeyPairSync, randomUUID, verify, type KeyObject } from 'node:crypto';
import { signedResponseText, signingInputOfText } from '../src/receipts/v1/attestation.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError } from '../src/errors.js';
import type { TransparencyLogStore } from '../src/store/log-store.js';
import type { AllowanceStore, KeyStore, LogNoteKeyStore, PaymentEvent, PaymentStore, ReceiptRecord, ReceiptStore, SigningKeyRecord, Store, StoreMetrics, StoreOps } from '../src/store/store.js';

export interface StoreHarness {
  /** Open a new handle/pool on the same database (migrating it). */
  open(): Promise<Store>;
  /**
   * Consume from `workers` independent handles (other processes or other pools)
   * at the same time; returns how many calls each worker was granted.
   */
  consumeFromWorkers(args: { clientKey: string; day: string; limit: number; workers: number; attemptsPerWorker: number }): Promise<number[]>;
}

const uniq = (prefix: string) => `${prefix}-${randomUUID()}`;

export function receipt(agentId: string | null, verifiedAt: string, result: 'pass' | 'fail', extra: Partial<ReceiptRecord> = {}): ReceiptRecord {
  const verificationId = extra.verificationId ?? randomUUID();
  return {
    verificationId,
    agentId,
    taskId: extra.taskId ?? `task-${verificationId.slice(0, 8)}`,
    result,
    overallRatio: extra.overallRatio ?? (result === 'pass' ? 1 : 0.5),
    verifiedAt,
    keyVersion: extra.keyVersion ?? 'k1',
    receipt: extra.receipt ?? JSON.stringify({ verification_id: verificationId, result, verified_at: verifiedAt }),
  };
}

async function rejectsWithCode(p: Promise<unknown>, code: string): Promise<void> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  expect(isApiError(caught), `expected ApiError ${code}, got ${String(caught)}`).toBe(true);
  expect((caught as { code: string }).code).toBe(code);
}

export function defineStoreContract(name: string, harness: StoreHarness): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeAll(async () => {
      store = await harness.open();
    });
    afterAll(async () => {
      await store?.close();
    });
    // Each port's contract sees the store as that port only (and, to read its writes back, the few methods named).
    const ctx: PortContext<Store> = { store: () => store, harness, day: '2026-03-01' };
    storeOpsContract(ctx);
    allowanceContract(ctx);
    receiptContract(ctx);
    paymentContract(ctx);
    keyContract(ctx);
    logNoteKeyContract(ctx);
    metricsContract(ctx);
  });
}

/** What one port's contract is given: the store under test, as that port, and the harness for other handles. */
interface PortContext<P> {
  store(): P;
  harness: StoreHarness;
  /** The UTC day most allowance calls use. */
  day: string;
}

/** The StoreOps contract: the database: its migrations, health, the readiness check and close. */
function storeOpsContract(ctx: PortContext<StoreOps>): void {
  const { harness } = ctx;
  describe('StoreOps', () => {
    let store: StoreOps;
    beforeAll(() => {
      store = ctx.store();
    });

    describe('migrations', () => {
      it('are recorded and idempotent (migrate twice, and a second handle migrating again)', async () => {
        const before = await store.appliedMigrations();
        expect(before.length).toBeGreaterThan(0);
        expect(before).toEqual([...before].sort((a, b) => a - b));
        await store.migrate();
        await store.migrate();
        expect(await store.appliedMigrations()).toEqual(before);
        const other = await harness.open();
        try {
          await other.migrate();
          expect(await other.appliedMigrations()).toEqual(before);
        } finally {
          await other.close();
        }
      });
    });

    describe('lifecycle', () => {
      it('health is true while open, false after close; close is idempotent', async () => {
        const s = await harness.open();
        expect(await s.health()).toBe(true);
        await s.close();
        await s.close();
        expect(await s.health()).toBe(false);
      });

      it('check commits while open (null) and names the reason once closed', async () => {
        expect(await store.check()).toBeNull();
        const s = await harness.open();
        expect(await s.check()).toBeNull();
        await s.close();
        expect(await s.check()).toEqual(expect.any(String));
      });
    });
  });
}

/** The AllowanceStore contract: the free allowance counter. */
function allowanceContract(ctx: PortContext<AllowanceStore>): void {
  const { harness, day } = ctx;
  describe('AllowanceStore', () => {
    let store: AllowanceStore;
    beforeAll(() => {
      store = ctx.store();
    });

    describe('free allowance', () => {
      it('grants exactly `limit` of 200 concurrent consumes (limit 50)', async () => {
        const key = uniq('ip');
        const states = await Promise.all(Array.from({ length: 200 }, () => store.consumeAllowance(key, day, 50)));
        const granted = states.filter((s) => s.allowed);
        expect(granted).toHaveLength(50);
        // Each grant saw a distinct count 1..50: no two calls shared a unit.
        expect(granted.map((s) => s.used).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
        for (const s of states.filter((x) => !x.allowed)) expect(s).toEqual({ allowed: false, limit: 50, used: 50, remaining: 0 });
        expect(await store.peekAllowance(key, day, 50)).toEqual({ allowed: false, limit: 50, used: 50, remaining: 0 });
      });

      it('grants exactly `limit` across independent workers sharing the database', async () => {
        const key = uniq('ip');
        const limit = 60;
        const perWorker = await harness.consumeFromWorkers({ clientKey: key, day, limit, workers: 4, attemptsPerWorker: 40 });
        expect(perWorker).toHaveLength(4);
        expect(perWorker.reduce((a, b) => a + b, 0)).toBe(limit);
        expect((await store.peekAllowance(key, day, limit)).used).toBe(limit);
      });

      it('counts each UTC day and each client separately', async () => {
        const key = uniq('ip');
        for (let i = 0; i < 3; i++) expect((await store.consumeAllowance(key, '2026-03-02', 3)).allowed).toBe(true);
        expect((await store.consumeAllowance(key, '2026-03-02', 3)).allowed).toBe(false);
        expect(await store.consumeAllowance(key, '2026-03-03', 3)).toEqual({ allowed: true, limit: 3, used: 1, remaining: 2 });
        expect(await store.consumeAllowance(uniq('ip'), '2026-03-02', 3)).toEqual({ allowed: true, limit: 3, used: 1, remaining: 2 });
      });

      it('peek does not consume', async () => {
        const key = uniq('ip');
        for (let i = 0; i < 5; i++) expect(await store.peekAllowance(key, day, 2)).toEqual({ allowed: true, limit: 2, used: 0, remaining: 2 });
        expect(await store.consumeAllowance(key, day, 2)).toEqual({ allowed: true, limit: 2, used: 1, remaining: 1 });
        expect(await store.peekAllowance(key, day, 2)).toEqual({ allowed: true, limit: 2, used: 1, remaining: 1 });
        await store.consumeAllowance(key, day, 2);
        expect(await store.peekAllowance(key, day, 2)).toEqual({ allowed: false, limit: 2, used: 2, remaining: 0 });
      });

      it('refund gives one unit back and never goes below zero', async () => {
        const key = uniq('ip');
        await store.refundAllowance(key, day);
        expect((await store.peekAllowance(key, day, 2)).used).toBe(0);
        await store.consumeAllowance(key, day, 2);
        await store.consumeAllowance(key, day, 2);
        expect((await store.consumeAllowance(key, day, 2)).allowed).toBe(false);
        await store.refundAllowance(key, day);
        expect(await store.consumeAllowance(key, day, 2)).toEqual({ allowed: true, limit: 2, used: 2, remaining: 0 });
        for (let i = 0; i < 5; i++) await store.refundAllowance(key, day);
        expect((await store.peekAllowance(key, day, 2)).used).toBe(0);
      });

      it('takeAllowance takes N units in one go, or none when fewer than N remain', async () => {
        const key = uniq('ip');
        expect(await store.takeAllowance(key, day, 10, 4)).toEqual({ allowed: true, limit: 10, used: 4, remaining: 6 });
        expect(await store.takeAllowance(key, day, 10, 6)).toEqual({ allowed: true, limit: 10, used: 10, remaining: 0 });
        expect(await store.takeAllowance(key, day, 10, 1)).toEqual({ allowed: false, limit: 10, used: 10, remaining: 0 });
        await store.refundAllowanceUnits(key, day, 3);
        // 3 left: a batch of 4 is refused whole and takes nothing; 3 fit exactly.
        expect(await store.takeAllowance(key, day, 10, 4)).toEqual({ allowed: false, limit: 10, used: 7, remaining: 3 });
        expect(await store.peekAllowance(key, day, 10)).toEqual({ allowed: true, limit: 10, used: 7, remaining: 3 });
        expect(await store.takeAllowance(key, day, 10, 3)).toEqual({ allowed: true, limit: 10, used: 10, remaining: 0 });
        // More units than the limit: refused, nothing recorded, also for a client without a row.
        const fresh = uniq('ip');
        expect(await store.takeAllowance(fresh, day, 5, 6)).toEqual({ allowed: false, limit: 5, used: 0, remaining: 5 });
        expect((await store.peekAllowance(fresh, day, 5)).used).toBe(0);
        // The single-unit path shares the counter.
        expect(await store.consumeAllowance(fresh, day, 5)).toEqual({ allowed: true, limit: 5, used: 1, remaining: 4 });
        expect(await store.takeAllowance(fresh, day, 5, 4)).toEqual({ allowed: true, limit: 5, used: 5, remaining: 0 });
        await expect(store.takeAllowance(fresh, day, 5, 0)).rejects.toThrow(TypeError);
      });

      it('takeAllowance under concurrency: 40 batches of 7 against a limit of 100 take exactly 14 batches (98 units), never a part', async () => {
        const key = uniq('ip');
        const states = await Promise.all(Array.from({ length: 40 }, () => store.takeAllowance(key, day, 100, 7)));
        const granted = states.filter((s) => s.allowed);
        expect(granted).toHaveLength(14);
        expect(granted.map((s) => s.used).sort((a, b) => a - b)).toEqual(Array.from({ length: 14 }, (_, i) => (i + 1) * 7));
        expect((await store.peekAllowance(key, day, 100)).used).toBe(98);
      });

      it('refundAllowanceUnits gives N back and never goes below zero', async () => {
        const key = uniq('ip');
        await store.takeAllowance(key, day, 10, 5);
        await store.refundAllowanceUnits(key, day, 2);
        expect((await store.peekAllowance(key, day, 10)).used).toBe(3);
        await store.refundAllowanceUnits(key, day, 50);
        expect((await store.peekAllowance(key, day, 10)).used).toBe(0);
        await store.refundAllowanceUnits(uniq('ip'), day, 3);
      });

      it('a limit of 0 grants nothing and records nothing', async () => {
        const key = uniq('ip');
        expect(await store.consumeAllowance(key, day, 0)).toEqual({ allowed: false, limit: 0, used: 0, remaining: 0 });
        expect((await store.peekAllowance(key, day, 5)).used).toBe(0);
      });

      it('rejects a malformed day (programming error)', async () => {
        await expect(store.consumeAllowance('x', '2026-3-1', 5)).rejects.toThrow(TypeError);
      });

      it('the counter survives close and reopen', async () => {
        const key = uniq('ip');
        const a = await harness.open();
        for (let i = 0; i < 7; i++) await a.consumeAllowance(key, day, 100);
        await a.close();
        const b = await harness.open();
        try {
          expect(await b.peekAllowance(key, day, 100)).toEqual({ allowed: true, limit: 100, used: 7, remaining: 93 });
        } finally {
          await b.close();
        }
      });
    });

    describe('allowance pruning', () => {
      it('deletes rows of days before the given day only', async () => {
        const k = uniq('prune');
        for (const day of ['2020-01-01', '2020-01-02', '2020-01-03']) await store.consumeAllowance(k, day, 5);
        expect(await store.pruneAllowance('2020-01-03')).toBeGreaterThanOrEqual(2);
        expect((await store.peekAllowance(k, '2020-01-01', 5)).used).toBe(0);
        expect((await store.peekAllowance(k, '2020-01-02', 5)).used).toBe(0);
        expect((await store.peekAllowance(k, '2020-01-03', 5)).used).toBe(1);
      });
    });

  });
}

/** The ReceiptStore contract: receipts, alone, with their unit, in batches, signed as they are stored; reputation (read back through the allowance and the log queue). */
function receiptContract(ctx: PortContext<ReceiptStore & Pick<AllowanceStore, 'consumeAllowance' | 'peekAllowance'> & Pick<TransparencyLogStore, 'logPending'>>): void {
  const { harness, day } = ctx;
  describe('ReceiptStore', () => {
    let store: ReceiptStore & Pick<AllowanceStore, 'consumeAllowance' | 'peekAllowance'> & Pick<TransparencyLogStore, 'logPending'>;
    beforeAll(() => {
      store = ctx.store();
    });

    describe('receipts', () => {
      it('round-trip byte-identical, including unicode, and across reopen', async () => {
        const text =
          '{"verification_id":"x","note":"Grüße – 日本語 – 🚀👩‍👩‍👧 – e\u0301 – \u2028\u2029 – \\u0000 – \\"q\\" – \\\\","n":1.0e-7,"big":"' +
          'a'.repeat(100_000) +
          '"}';
        const rec = receipt(uniq('agent'), '2026-03-01T10:00:00.123Z', 'pass', { receipt: text });
        await store.saveReceipt(rec);
        const got = await store.getReceipt(rec.verificationId);
        expect(got).toBe(text);
        expect(Buffer.compare(Buffer.from(got ?? '', 'utf8'), Buffer.from(text, 'utf8'))).toBe(0);
        const other = await harness.open();
        try {
          expect(await other.getReceipt(rec.verificationId)).toBe(text);
        } finally {
          await other.close();
        }
      });

      it('unknown verification id → null', async () => {
        expect(await store.getReceipt(randomUUID())).toBeNull();
      });

      it('refuses a second receipt with the same verification id (the stored one is kept)', async () => {
        const rec = receipt(uniq('agent'), '2026-03-01T10:00:00Z', 'pass');
        await store.saveReceipt(rec);
        await expect(store.saveReceipt({ ...rec, receipt: '{"other":true}' })).rejects.toThrow();
        expect(await store.getReceipt(rec.verificationId)).toBe(rec.receipt);
      });
    });

    describe('a unit and its receipt in one transaction (consumeAllowanceAndSaveReceipt)', () => {
      it('stores the receipt with its unit while units are left, and nothing once they are gone', async () => {
        const take = store.consumeAllowanceAndSaveReceipt.bind(store);
        const client = uniq('combined');
        const agent = uniq('combined-agent');
        const recs = [0, 1, 2].map((i) => receipt(agent, `2026-03-01T11:00:0${i}Z`, 'pass'));
        const states = [];
        for (const r of recs) states.push(await take(client, day, 2, r));
        expect(states.map((st) => [st.allowed, st.used, st.remaining])).toEqual([
          [true, 1, 1],
          [true, 2, 0],
          [false, 2, 0],
        ]);
        expect(await store.getReceipt(recs[0]!.verificationId)).toBe(recs[0]!.receipt);
        expect(await store.getReceipt(recs[1]!.verificationId)).toBe(recs[1]!.receipt);
        expect(await store.getReceipt(recs[2]!.verificationId)).toBeNull();
        const queued = new Set((await store.logPending(100_000)).map((p) => p.verificationId));
        expect([recs[0], recs[1], recs[2]].map((r) => queued.has(r!.verificationId))).toEqual([true, true, false]);
        expect((await store.peekAllowance(client, day, 2)).used).toBe(2);
      });

      it('exact under concurrency, mixed with plain consumes on another handle: 60 calls against a limit of 25 store 25 receipts at most', async () => {
        const take = store.consumeAllowanceAndSaveReceipt.bind(store);
        const other = await harness.open();
        const client = uniq('combined-race');
        const agent = uniq('combined-race-agent');
        const recs = Array.from({ length: 40 }, (_, i) => receipt(agent, `2026-03-01T12:00:${String(i).padStart(2, '0')}Z`, 'pass'));
        const [withReceipts, plain] = await Promise.all([
          Promise.all(recs.map((r) => take(client, day, 25, r))),
          Promise.all(Array.from({ length: 20 }, () => other.consumeAllowance(client, day, 25))),
        ]).finally(() => other.close());
        const granted = withReceipts.filter((st) => st.allowed).length + plain.filter((st) => st.allowed).length;
        expect(granted).toBe(25);
        expect((await store.peekAllowance(client, day, 25)).used).toBe(25);
        // Exactly the receipts whose unit was granted are stored.
        expect((await store.reputation(agent, { limit: 100 })).verifications).toBe(withReceipts.filter((st) => st.allowed).length);
        for (const [i, st] of withReceipts.entries()) expect(await store.getReceipt(recs[i]!.verificationId)).toBe(st.allowed ? recs[i]!.receipt : null);
      });

      it('a receipt that cannot be stored (a duplicate id) takes no unit', async () => {
        const take = store.consumeAllowanceAndSaveReceipt.bind(store);
        const client = uniq('combined-dup');
        const existing = receipt(uniq('combined-dup-agent'), '2026-03-01T13:00:00Z', 'pass');
        await store.saveReceipt(existing);
        await expect(take(client, day, 5, { ...existing, receipt: '{"other":true}' })).rejects.toThrow();
        expect((await store.peekAllowance(client, day, 5)).used).toBe(0);
        expect(await store.getReceipt(existing.verificationId)).toBe(existing.receipt);
      });
    });

    describe('signed as they are stored (signAndSaveReceipt, consumeAllowanceAndSignAndSaveReceipt)', () => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      /** A receipt to sign: its record without the text, and a response text with unicode in it. */
      const unsigned = (agentId: string, at: string) => {
        const { receipt: text, ...facts } = receipt(agentId, at, 'pass');
        return { ...facts, unsignedText: text.slice(0, -1) + ',"note":"Grüße 🚀","n":1e-7}' };
      };
      /**
       * The answered text is the stored one, byte for byte, and the signed response of the unsigned text:
       * its signature is over the signing input of that text.
       */
      const expectSigned = async (u: ReturnType<typeof unsigned>, text: string, key: KeyObject = publicKey) => {
        const signature = (JSON.parse(text) as { attestation: { signature: string } }).attestation.signature;
        const input = signingInputOfText(u.unsignedText, 'verify', u.keyVersion, u.verifiedAt);
        expect(verify(null, Buffer.from(input, 'utf8'), key, Buffer.from(signature, 'base64'))).toBe(true);
        expect(text).toBe(signedResponseText(u.unsignedText, u.keyVersion, u.verifiedAt, signature));
        expect(await store.getReceipt(u.verificationId)).toBe(text);
      };

      it('stores the signed text and answers it as stored; a signing input given with the draft gives the same bytes', async () => {
        const agent = uniq('signed-agent');
        const u = unsigned(agent, '2026-03-01T14:00:00Z');
        const text = await store.signAndSaveReceipt(u, privateKey);
        await expectSigned(u, text);
        const v = unsigned(agent, '2026-03-01T14:00:01Z');
        const input = signingInputOfText(v.unsignedText, 'verify', v.keyVersion, v.verifiedAt);
        await expectSigned(v, await store.signAndSaveReceipt({ ...v, input }, privateKey));
        const queued = new Set((await store.logPending(100_000)).map((p) => p.verificationId));
        expect(queued.has(u.verificationId) && queued.has(v.verificationId)).toBe(true);
        // Ed25519 is deterministic: the same receipt signed again has the same signature (the duplicate id is refused).
        await expect(store.signAndSaveReceipt(u, privateKey)).rejects.toThrow();
        expect(await store.getReceipt(u.verificationId)).toBe(text);
      });

      it('with its unit: signed and stored while units are left, nothing stored and no receipt answered once they are gone', async () => {
        const client = uniq('signed-client');
        const agent = uniq('signed-unit-agent');
        const drafts = [0, 1, 2].map((i) => unsigned(agent, `2026-03-01T15:00:0${i}Z`));
        const states = [];
        for (const d of drafts) states.push(await store.consumeAllowanceAndSignAndSaveReceipt(client, day, 2, d, privateKey));
        expect(states.map((st) => [st.allowed, st.used, st.receipt === null])).toEqual([
          [true, 1, false],
          [true, 2, false],
          [false, 2, true],
        ]);
        await expectSigned(drafts[0]!, states[0]!.receipt!);
        await expectSigned(drafts[1]!, states[1]!.receipt!);
        expect(await store.getReceipt(drafts[2]!.verificationId)).toBeNull();
        // A limit of 0 grants nothing, stores nothing and records nothing.
        const zero = unsigned(agent, '2026-03-01T15:00:09Z');
        expect(await store.consumeAllowanceAndSignAndSaveReceipt(uniq('signed-zero'), day, 0, zero, privateKey)).toEqual({ allowed: false, limit: 0, used: 0, remaining: 0, receipt: null });
        expect(await store.getReceipt(zero.verificationId)).toBeNull();
      });

      it('a text that cannot be signed (not JSON) is not stored and takes no unit', async () => {
        const client = uniq('signed-bad');
        const bad = { ...unsigned(uniq('signed-bad-agent'), '2026-03-01T16:00:00Z'), unsignedText: '{not json' };
        await expect(store.signAndSaveReceipt(bad, privateKey)).rejects.toThrow();
        await expect(store.consumeAllowanceAndSignAndSaveReceipt(client, day, 5, bad, privateKey)).rejects.toThrow();
        expect(await store.getReceipt(bad.verificationId)).toBeNull();
        expect((await store.peekAllowance(client, day, 5)).used).toBe(0);
      });
    });

    describe('receipts in one transaction (saveReceipts)', () => {
      it('stores every receipt byte-identical and queues each for the transparency log', async () => {
        const agent = uniq('batch-agent');
        const recs = Array.from({ length: 25 }, (_, i) => receipt(agent, `2026-03-01T10:00:${String(i).padStart(2, '0')}Z`, i % 4 === 0 ? 'fail' : 'pass', { receipt: `{"i":${i},"t":"ü"}` }));
        await store.saveReceipts(recs);
        for (const r of recs) expect(await store.getReceipt(r.verificationId)).toBe(r.receipt);
        expect((await store.reputation(agent, { limit: 100 })).verifications).toBe(25);
        const queued = new Set((await store.logPending(100_000)).map((p) => p.verificationId));
        for (const r of recs) expect(queued.has(r.verificationId)).toBe(true);
      });

      it('all or nothing: one bad receipt (a duplicate id) leaves none of the batch stored or queued', async () => {
        const agent = uniq('batch-agent');
        const existing = receipt(agent, '2026-03-01T10:00:00Z', 'pass');
        await store.saveReceipt(existing);
        const recs = [receipt(agent, '2026-03-01T10:00:01Z', 'pass'), receipt(agent, '2026-03-01T10:00:02Z', 'fail'), { ...existing, receipt: '{"other":1}' }, receipt(agent, '2026-03-01T10:00:03Z', 'pass')];
        await expect(store.saveReceipts(recs)).rejects.toThrow();
        for (const r of [recs[0]!, recs[1]!, recs[3]!]) expect(await store.getReceipt(r.verificationId)).toBeNull();
        expect(await store.getReceipt(existing.verificationId)).toBe(existing.receipt);
        expect((await store.reputation(agent, { limit: 100 })).verifications).toBe(1);
        const queued = new Set((await store.logPending(100_000)).map((p) => p.verificationId));
        for (const r of [recs[0]!, recs[1]!, recs[3]!]) expect(queued.has(r.verificationId)).toBe(false);
        // Stored concurrently with single saves, a batch still commits whole.
        const again = [recs[0]!, recs[1]!, recs[3]!];
        await Promise.all([store.saveReceipts(again), store.saveReceipt(receipt(agent, '2026-03-01T10:00:04Z', 'pass'))]);
        expect((await store.reputation(agent, { limit: 100 })).verifications).toBe(5);
      });

      it('an empty list stores nothing and succeeds', async () => {
        await store.saveReceipts([]);
      });
    });

    describe('reputation', () => {
      // Ties on verified_at, and mixed fractional / whole seconds (text order would misplace them).
      const agent = uniq('agent');
      const recs: ReceiptRecord[] = [
        receipt(agent, '2026-01-01T00:00:00Z', 'pass', { verificationId: 'a1' }),
        receipt(agent, '2026-01-01T00:00:00.500Z', 'fail', { verificationId: 'a2' }),
        receipt(agent, '2026-01-02T00:00:00Z', 'pass', { verificationId: 'b3' }),
        receipt(agent, '2026-01-02T00:00:00Z', 'pass', { verificationId: 'b1' }),
        receipt(agent, '2026-01-02T00:00:00Z', 'fail', { verificationId: 'b2' }),
        receipt(agent, '2026-01-03T12:30:00Z', 'pass', { verificationId: 'c1' }),
        receipt(agent, '2026-01-03T12:30:00.000001Z', 'pass', { verificationId: 'c0' }),
      ];
      const expectedNewestFirst = ['c1', 'c0', 'b3', 'b2', 'b1', 'a2', 'a1'];

      beforeAll(async () => {
        // Inserted out of order; ids are per-agent-unique via prefixing below.
        for (const r of [...recs].reverse()) await store.saveReceipt({ ...r, verificationId: `${agent}:${r.verificationId}` });
        await store.saveReceipt(receipt(uniq('other-agent'), '2026-01-05T00:00:00Z', 'fail'));
        await store.saveReceipt(receipt(null, '2026-01-05T00:00:00Z', 'fail'));
      });
      const ids = (xs: Array<{ verification_id: string }>) => xs.map((x) => x.verification_id.slice(agent.length + 1));

      it('counts, pass rate, first and last seen', async () => {
        const page = await store.reputation(agent, { limit: 100 });
        expect(page.agent_id).toBe(agent);
        expect(page.verifications).toBe(7);
        expect(page.passes).toBe(5);
        expect(page.fails).toBe(2);
        expect(page.pass_rate).toBe(0.714286);
        expect(page.first_seen).toBe('2026-01-01T00:00:00Z');
        expect(page.last_seen).toBe('2026-01-03T12:30:00Z');
        expect(page.next_cursor).toBeNull();
      });

      it('history is newest first, ties broken by verification id, with the stored fields', async () => {
        const page = await store.reputation(agent, { limit: 100 });
        expect(ids(page.history)).toEqual(expectedNewestFirst);
        const b2 = page.history.find((h) => h.verification_id.endsWith(':b2'));
        expect(b2).toEqual({ verification_id: `${agent}:b2`, task_id: recs[4].taskId, result: 'fail', overall_ratio: 0.5, verified_at: '2026-01-02T00:00:00Z' });
      });

      it('cursor paging walks every entry once, even when newer entries arrive between pages', async () => {
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page = await store.reputation(agent, { limit: 2, cursor });
          expect(page.history.length).toBeLessThanOrEqual(2);
          expect(page.verifications).toBeGreaterThanOrEqual(7);
          seen.push(...ids(page.history));
          cursor = page.next_cursor;
          if (pages === 0) await store.saveReceipt(receipt(agent, '2026-02-01T00:00:00Z', 'pass', { verificationId: `${agent}:z9` }));
          pages++;
        } while (cursor);
        expect(seen).toEqual(expectedNewestFirst);
        expect(pages).toBe(4);
        // The new entry shows on a fresh first page.
        expect(ids((await store.reputation(agent, { limit: 1 })).history)).toEqual(['z9']);
      });

      it('an exact multiple of the page size ends with next_cursor null, not an empty page', async () => {
        const a = uniq('agent');
        for (let i = 0; i < 4; i++) await store.saveReceipt(receipt(a, `2026-01-0${i + 1}T00:00:00Z`, 'pass'));
        const p1 = await store.reputation(a, { limit: 2 });
        expect(p1.next_cursor).not.toBeNull();
        const p2 = await store.reputation(a, { limit: 2, cursor: p1.next_cursor });
        expect(p2.history).toHaveLength(2);
        expect(p2.next_cursor).toBeNull();
      });

      it('unknown agent → zero counts, nulls, empty history', async () => {
        expect(await store.reputation(uniq('nobody'), { limit: 10 })).toMatchObject({
          verifications: 0,
          passes: 0,
          fails: 0,
          pass_rate: 0,
          first_seen: null,
          last_seen: null,
          history: [],
          next_cursor: null,
        });
      });

      it('a forged cursor or a bad limit is a 422 invalid_request', async () => {
        await rejectsWithCode(store.reputation(agent, { limit: 10, cursor: 'not a cursor!' }), 'invalid_request');
        await rejectsWithCode(store.reputation(agent, { limit: 10, cursor: Buffer.from('{"a":1}').toString('base64url') }), 'invalid_request');
        await rejectsWithCode(store.reputation(agent, { limit: 0 }), 'invalid_request');
        await rejectsWithCode(store.reputation(agent, { limit: 1.5 }), 'invalid_request');
      });

      it('agentResults lists every result oldest first', async () => {
        const a = uniq('agent');
        await store.saveReceipt(receipt(a, '2026-01-02T00:00:00Z', 'fail', { verificationId: `${a}:2` }));
        await store.saveReceipt(receipt(a, '2026-01-01T00:00:00.250Z', 'pass', { verificationId: `${a}:1` }));
        await store.saveReceipt(receipt(a, '2026-01-02T00:00:00Z', 'pass', { verificationId: `${a}:3` }));
        expect(await store.agentResults(a)).toEqual([
          { result: 'pass', verifiedAt: '2026-01-01T00:00:00.250Z' },
          { result: 'fail', verifiedAt: '2026-01-02T00:00:00Z' },
          { result: 'pass', verifiedAt: '2026-01-02T00:00:00Z' },
        ]);
        expect(await store.agentResults(uniq('nobody'))).toEqual([]);
      });
    });

  });
}

/** The PaymentStore contract: payment reservations, pending settlements (their receipts read back through the ReceiptStore) and the ledger. */
function paymentContract(ctx: PortContext<PaymentStore & Pick<ReceiptStore, 'saveReceipt' | 'saveReceipts' | 'getReceipt' | 'reputation' | 'agentResults'>>): void {
  const { harness } = ctx;
  describe('PaymentStore', () => {
    let store: PaymentStore & Pick<ReceiptStore, 'saveReceipt' | 'saveReceipts' | 'getReceipt' | 'reputation' | 'agentResults'>;
    beforeAll(() => {
      store = ctx.store();
    });

    describe('payments', () => {
      const key = () => ({ network: 'eip155:8453', payer: '0xabc', nonce: randomUUID() });

      const H = 'a'.repeat(64);

      it('a key can be reserved once', async () => {
        const k = key();
        expect(await store.reservePayment(k, H)).toBe(true);
        expect(await store.reservePayment(k, H)).toBe(false);
        expect(await store.reservePayment({ ...k, network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' }, H)).toBe(true);
        expect(await store.reservePayment({ ...k, payer: '0xdef' }, H)).toBe(true);
      });

      it('50 concurrent reservations of one key → exactly one succeeds', async () => {
        const k = key();
        const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.reservePayment({ ...k }, String(i).padStart(64, '0'))));
        expect(results.filter(Boolean)).toHaveLength(1);
        // The binding is the winner's request, not the last one tried.
        const winner = results.findIndex(Boolean);
        expect((await store.paymentReservation(k))?.requestHash).toBe(String(winner).padStart(64, '0'));
      });

      it('release frees a reserved key; a settled key stays used', async () => {
        const k = key();
        expect(await store.reservePayment(k, H)).toBe(true);
        await store.releasePayment(k);
        expect(await store.paymentReservation(k)).toBeNull();
        expect(await store.reservePayment(k, H)).toBe(true);
        await store.settlePayment(k, { verificationIds: ['v-1'], transaction: '0xfeed' });
        await store.releasePayment(k);
        expect(await store.reservePayment(k, H)).toBe(false);
      });

      it('a reservation names its request; once settled, the receipts it bought and the transaction', async () => {
        const k = key();
        expect(await store.paymentReservation(k)).toBeNull();
        expect(await store.reservePayment(k, H)).toBe(true);
        const reserved = await store.paymentReservation(k);
        expect(reserved).toMatchObject({ status: 'reserved', requestHash: H, verificationIds: null, transaction: null });
        expect(Number.isNaN(Date.parse(reserved!.reservedAt))).toBe(false);
        expect(Math.abs(Date.parse(reserved!.reservedAt) - Date.now())).toBeLessThan(60_000);
        await store.settlePayment(k, { verificationIds: ['v-1', 'v-2'], transaction: '0xbeef' });
        expect(await store.paymentReservation(k)).toMatchObject({ status: 'settled', requestHash: H, verificationIds: ['v-1', 'v-2'], transaction: '0xbeef' });
        // A score buys no receipt; a null transaction keeps the one known.
        await store.settlePayment(k, { verificationIds: [], transaction: null });
        expect(await store.paymentReservation(k)).toMatchObject({ verificationIds: [], transaction: '0xbeef' });
        await expect(store.reservePayment(key(), '')).rejects.toThrow(TypeError);
      });

      it('ledger events are stored in order and filterable by verification id', async () => {
        const k = key();
        const vid = randomUUID();
        const events: PaymentEvent[] = [
          { key: k, kind: 'verified', route: '/verify/schema', amount: '20000', verificationId: null, at: '2026-03-01T00:00:00.000Z', detail: null },
          { key: k, kind: 'settled', route: '/verify/schema', amount: '20000', verificationId: vid, at: '2026-03-01T00:00:01.000Z', detail: '0xtxhash' },
          { key: k, kind: 'replay_rejected', route: '/verify/schema', amount: '20000', verificationId: vid, at: '2026-03-01T00:00:02.000Z', detail: 'nonce used' },
        ];
        for (const e of events) await store.recordPaymentEvent(e);
        expect(await store.paymentEvents({ verificationId: vid })).toEqual(events.slice(1));
        const all = await store.paymentEvents();
        const mine = all.filter((e) => e.key.nonce === k.nonce);
        expect(mine).toEqual(events);
      });
    });

    describe('pending settlements', () => {
      const key = () => ({ network: 'eip155:8453', payer: '0xabc', nonce: randomUUID() });

      it('a pending receipt is invisible: no lookup, no reputation, no score input', async () => {
        const agent = uniq('pending-agent');
        const rec = receipt(agent, '2026-03-01T10:00:00Z', 'pass');
        const k = key();
        await store.savePendingSettlement({ key: k, route: 'verify', record: rec, payment: '{"p":1}', transaction: null, createdAt: '2026-03-01T10:00:00.000Z', state: 'pending' });
        expect(await store.getReceipt(rec.verificationId)).toBeNull();
        expect((await store.reputation(agent, { limit: 10 })).verifications).toBe(0);
        expect(await store.agentResults(agent)).toEqual([]);
        expect(await store.pendingSettlement(k)).toEqual({ key: k, route: 'verify', record: rec, payment: '{"p":1}', transaction: null, createdAt: '2026-03-01T10:00:00.000Z', state: 'pending' });;
        expect((await store.pendingSettlementFor(rec.verificationId))?.key).toEqual(k);
        expect((await store.pendingSettlements()).some((p) => p.key.nonce === k.nonce)).toBe(true);
      });

      it('the transaction hash is kept; delete forgets the pending one; a score call stores no record', async () => {
        const k = key();
        await store.savePendingSettlement({ key: k, route: 'score', record: null, payment: '{}', transaction: null, createdAt: '2026-03-01T10:00:00.000Z', state: 'pending' });
        await store.setPendingTransaction(k, '0xfeed');
        const got = await store.pendingSettlement(k);
        expect(got?.transaction).toBe('0xfeed');
        expect(got?.record).toBeNull();
        await store.deletePendingSettlement(k);
        expect(await store.pendingSettlement(k)).toBeNull();
        expect((await store.pendingSettlements()).some((p) => p.key.nonce === k.nonce)).toBe(false);
      });

      it('a pending receipt survives reopening the database (stored durably before settling)', async () => {
        const rec = receipt(uniq('durable'), '2026-03-01T10:00:00Z', 'fail');
        const k = key();
        await store.savePendingSettlement({ key: k, route: 'verify', record: rec, payment: '{}', transaction: '0xabc1', createdAt: '2026-03-01T10:00:00.000Z', state: 'pending' });
        const other = await harness.open();
        try {
          const got = await other.pendingSettlementFor(rec.verificationId);
          expect(got?.record).toEqual(rec);
          expect(got?.transaction).toBe('0xabc1');
        } finally {
          await other.close();
        }
      });

      it('publishing is saving the receipt: then it is visible with its exact bytes', async () => {
        const agent = uniq('published');
        const rec = receipt(agent, '2026-03-01T10:00:00Z', 'pass', { receipt: '{"x":"ü🚀"}' });
        const k = key();
        await store.savePendingSettlement({ key: k, route: 'verify', record: rec, payment: '{}', transaction: null, createdAt: '2026-03-01T10:00:00.000Z', state: 'pending' });
        const pending = await store.pendingSettlement(k);
        await store.saveReceipt(pending!.record!);
        await store.deletePendingSettlement(k);
        expect(await store.getReceipt(rec.verificationId)).toBe('{"x":"ü🚀"}');
        expect((await store.reputation(agent, { limit: 10 })).verifications).toBe(1);
        expect(await store.pendingSettlementFor(rec.verificationId)).toBeNull();
      });

      it('a pending batch keeps every receipt in order, found by the first id, and publishes in one transaction', async () => {
        const agent = uniq('pending-batch');
        const recs = Array.from({ length: 3 }, (_, i) => receipt(agent, `2026-03-01T10:00:0${i}Z`, 'pass'));
        const k = key();
        await store.savePendingSettlement({ key: k, route: 'verify', record: recs[0]!, batch: recs, payment: '{}', transaction: null, createdAt: '2026-03-01T10:00:00.000Z', state: 'pending' });
        for (const r of recs) expect(await store.getReceipt(r.verificationId)).toBeNull();
        const got = await store.pendingSettlement(k);
        expect(got).toMatchObject({ record: recs[0], batch: recs });
        expect((await store.pendingSettlementFor(recs[0]!.verificationId))?.batch).toEqual(recs);
        await store.saveReceipts(got!.batch!);
        await store.deletePendingSettlement(k);
        expect((await store.reputation(agent, { limit: 10 })).verifications).toBe(3);
        // A batch must start with its record.
        await expect(store.savePendingSettlement({ key: key(), route: 'verify', record: recs[1]!, batch: recs, payment: '{}', transaction: null, createdAt: '2026-03-01T10:00:00.000Z', state: 'pending' })).rejects.toThrow(TypeError);
      });

      it('a settled one is kept for the retry but is no longer reconciled', async () => {
        const k = key();
        const rec = receipt(uniq('kept'), '2026-03-01T10:00:00Z', 'pass');
        await store.savePendingSettlement({ key: k, route: 'verify', record: rec, payment: '{}', transaction: null, createdAt: '2026-03-01T10:00:00.000Z', state: 'pending' });
        await store.markPendingSettled(k, '0xbeef');
        expect(await store.pendingSettlement(k)).toMatchObject({ state: 'settled', transaction: '0xbeef' });
        expect((await store.pendingSettlements()).some((p) => p.key.nonce === k.nonce)).toBe(false);
        // A null transaction keeps the one already known.
        await store.markPendingSettled(k, null);
        expect((await store.pendingSettlement(k))?.transaction).toBe('0xbeef');
      });
    });

  });
}

/** The KeyStore contract: the signing keys. */
function keyContract(ctx: PortContext<KeyStore>): void {
  describe('KeyStore', () => {
    let store: KeyStore;
    beforeAll(() => {
      store = ctx.store();
    });

    describe('signing keys', () => {
      const key = (v: string, notBefore: string, extra: Partial<SigningKeyRecord> = {}): SigningKeyRecord => ({
        keyVersion: v,
        publicKey: 'A'.repeat(43) + '=',
        status: 'active',
        notBefore,
        notAfter: null,
        createdAt: notBefore.replace('Z', '.000Z'),
        privateKey: null,
        ...extra,
      });
      it('the first key is decided once; rotation retires the active key at the new key\'s start; nothing is ever deleted or un-retired', async () => {
        expect(await store.signingKeys()).toEqual([]);
        expect(await store.addSigningKey(key('k-20260101-aaaaaaaaaaaa', '2026-01-01T00:00:00Z'), { onlyIfEmpty: true })).toBe(true);
        expect(await store.addSigningKey(key('k-20260101-bbbbbbbbbbbb', '2026-01-01T00:00:01Z'), { onlyIfEmpty: true })).toBe(false);
        expect(await store.addSigningKey(key('k-20260201-cccccccccccc', '2026-02-01T00:00:00Z', { privateKey: 'sealed' }))).toBe(true);
        // A file key ring reports what it holds: a new key is added, a known one is not changed back to active.
        await store.recordSigningKeys([key('k-20260101-aaaaaaaaaaaa', '2026-01-01T00:00:00Z'), key('k-20260301-dddddddddddd', '2026-03-01T00:00:00Z', { status: 'retired', notAfter: '2026-03-02T00:00:00Z' })]);
        expect(await store.signingKeys()).toEqual([
          key('k-20260101-aaaaaaaaaaaa', '2026-01-01T00:00:00Z', { status: 'retired', notAfter: '2026-02-01T00:00:00Z' }),
          key('k-20260201-cccccccccccc', '2026-02-01T00:00:00Z', { privateKey: 'sealed' }),
          key('k-20260301-dddddddddddd', '2026-03-01T00:00:00Z', { status: 'retired', notAfter: '2026-03-02T00:00:00Z' }),
        ]);
      });
    });

  });
}

/** The LogNoteKeyStore contract: the transparency log's note keys. */
function logNoteKeyContract(ctx: PortContext<LogNoteKeyStore>): void {
  const { harness } = ctx;
  describe('LogNoteKeyStore', () => {
    let store: LogNoteKeyStore;
    beforeAll(() => {
      store = ctx.store();
    });

    describe('log note keys', () => {
      it('the first key recorded for a name wins, also when handles insert at once; a recorded key is sealed once, only with its own public key', async () => {
        const name = `${uniq('origin')}.example/log`;
        expect(await store.logNoteKey(name)).toBeNull();
        const handles = await Promise.all([harness.open(), harness.open(), harness.open()]);
        try {
          const candidates = handles.map((_, i) => ({ name, publicKey: `${String.fromCharCode(65 + i).repeat(43)}=`, privateKey: null, source: 'file' as const, createdAt: `2026-01-01T00:00:0${i}.000Z` }));
          const got = await Promise.all(handles.map((h, i) => h.addLogNoteKey(candidates[i]!)));
          const winner = got[0]!;
          expect(candidates).toContainEqual(winner);
          for (const g of got) expect(g).toEqual(winner);
          expect(await store.logNoteKey(name)).toEqual(winner);
          // Never replaced by a later insert.
          expect(await store.addLogNoteKey({ ...winner, publicKey: `${'Z'.repeat(43)}=`, source: 'generated' })).toEqual(winner);

          expect(await store.sealLogNoteKey(name, `${'Z'.repeat(43)}=`, 'sealed-other')).toBe(false);
          expect(await store.sealLogNoteKey(name, winner.publicKey, 'sealed')).toBe(true);
          expect(await store.sealLogNoteKey(name, winner.publicKey, 'sealed-again')).toBe(false);
          expect(await store.logNoteKey(name)).toEqual({ ...winner, privateKey: 'sealed' });
          // Another name is another log identity.
          expect(await store.logNoteKey(`other-${name}`)).toBeNull();
        } finally {
          for (const h of handles) await h.close();
        }
      });
    });

  });
}

/** The StoreMetrics contract: histograms a store keeps are well formed, the others empty; reading them writes nothing. */
function metricsContract(ctx: PortContext<StoreMetrics>): void {
  describe('StoreMetrics', () => {
    const wellFormed = (h: { bounds: readonly number[]; counts: number[]; sum: number }) => {
      if (h.counts.length === 0) {
        // Not kept by this store: empty.
        expect(h).toEqual({ bounds: [], counts: [], sum: 0 });
        return;
      }
      expect(h.counts).toHaveLength(h.bounds.length + 1);
      expect([...h.bounds].sort((a, b) => a - b)).toEqual([...h.bounds]);
      for (const c of h.counts) expect(Number.isSafeInteger(c) && c >= 0).toBe(true);
      expect(h.sum).toBeGreaterThanOrEqual(0);
    };

    it('walSyncs, walRestarts and writeWaits (allowance, receipt, log) are histograms or empty', () => {
      const store = ctx.store();
      wellFormed(store.walSyncs());
      wellFormed(store.walRestarts());
      const waits = store.writeWaits();
      expect(Object.keys(waits).sort()).toEqual(['allowance', 'log', 'receipt']);
      for (const h of Object.values(waits)) wellFormed(h);
    });
  });
}

export { uniq };
