/**
 * @module The messages between the service and its verification workers: plain,
 * structured-clone-safe data. Kept apart from both ends so the worker module does
 * not load the pool and the pool does not load the worker.
 */
import type { ErrorCode, FieldProblem } from '../errors.js';
import type { ReceiptDraft } from '../receipts/issue-receipt.js';
import type { SchemaFacts } from './fast-path.js';
import type { VerifierConfig } from './issuer.js';

/** What every worker is started with. */
export interface VerifyWorkerData {
  verifier: VerifierConfig;
  maxDepth: number;
  serviceName: string;
  baseUrl: string;
  verifierVersion: string;
  /** DraftOptions.input of every draft made here (false when the store signs; see ReceiptDraft.input). Default true. */
  signingInput?: boolean;
  /** The task slots (createTaskSlots) the pool's watchdog reads. */
  slots: SharedArrayBuffer;
}

/** Most workers one pool can have alive at once (a slot each). */
const SLOT_COUNT = 128;

/**
 * Per-worker slots in shared memory: which thread owns the slot, the token of the task it is
 * running (0 when idle) and when it started (ms since the epoch). Workers write; the pool's
 * watchdog reads. Plain shared memory instead of a message per task: see pool-runner.ts.
 */
export function createTaskSlots(buffer = new SharedArrayBuffer(SLOT_COUNT * 16)) {
  const owners = new Int32Array(buffer, 0, SLOT_COUNT);
  const tokens = new Int32Array(buffer, SLOT_COUNT * 4, SLOT_COUNT);
  const started = new Float64Array(buffer, SLOT_COUNT * 8, SLOT_COUNT);
  return {
    buffer,
    /** A worker claims a free slot for its thread; -1 when none is free (its tasks then run unwatched). */
    claim(threadId: number): number {
      for (let i = 0; i < SLOT_COUNT; i++) if (Atomics.compareExchange(owners, i, 0, threadId) === 0) return i;
      return -1;
    },
    start(slot: number, token: number, now: number): void {
      if (slot < 0) return;
      started[slot] = now;
      Atomics.store(tokens, slot, token);
    },
    finish(slot: number): void {
      if (slot >= 0) Atomics.store(tokens, slot, 0);
    },
    /** Tasks that started before `before` and are still running. */
    overdue(before: number): Array<{ threadId: number; token: number }> {
      const out: Array<{ threadId: number; token: number }> = [];
      for (let i = 0; i < SLOT_COUNT; i++) {
        const token = Atomics.load(tokens, i);
        if (token !== 0 && started[i] < before) out.push({ threadId: Atomics.load(owners, i), token });
      }
      return out;
    },
    /** Free the slot of a thread that is gone. */
    release(threadId: number): void {
      for (let i = 0; i < SLOT_COUNT; i++) {
        if (Atomics.load(owners, i) === threadId) {
          Atomics.store(tokens, i, 0);
          Atomics.store(owners, i, 0);
        }
      }
    },
  };
}

/** Verify `source` and draft its receipt for this id, time and key version. */
export interface VerifyTask {
  kind: 'draft';
  token?: number;
  source: string | Uint8Array;
  verificationId: string;
  verifiedAt: string;
  keyVersion: string;
  /** Report the schema's facts with the draft (the pool's fast path may then hold it). */
  facts?: boolean;
}

export type VerifyTaskReply =
  | { ok: true; kind: 'draft'; draft: ReceiptDraft; schema?: SchemaFacts }
  | { ok: false; error: { code: ErrorCode; message: string; fields: FieldProblem[]; retryAfter: number | undefined } };
