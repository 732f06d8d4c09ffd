/**
 * @module The messages between the service and its verification workers: plain,
 * structured-clone-safe data. Kept apart from both ends so the worker module does
 * not load the pool and the pool does not load the worker.
 */
import type { ErrorCode, FieldProblem } from '../errors.js';
import type { ReceiptDraft } from '../receipts/issue-receipt.js';
import type { VerifierConfig } from './issuer.js';

/** What every worker is started with. */
export interface VerifyWorkerData {
  verifier: VerifierConfig;
  maxDepth: number;
  serviceName: string;
  baseUrl: string;
  verifierVersion: string;
}

/** The key of the message a worker posts when it starts a task: `{[STARTED]: token}`. */
export const STARTED = 'verifyTaskStarted';

/** Verify `source` and draft its receipt for this id, time and key version. */
export interface VerifyTask {
  kind: 'draft';
  token?: number;
  source: string | Uint8Array;
  verificationId: string;
  verifiedAt: string;
  keyVersion: string;
}

export type VerifyTaskReply =
  | { ok: true; kind: 'draft'; draft: ReceiptDraft }
  | { ok: false; error: { code: ErrorCode; message: string; fields: FieldProblem[]; retryAfter: number | undefined } };
