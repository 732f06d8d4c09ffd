/**
 * @module The application-service contract behind the admission pipeline
 * (pipeline.ts) and the record routes: the free allowance, durable receipts,
 * reputation and the signed trust score. Transport-free: adapters go through the
 * pipeline for verifications and scores, and read records here.
 */
import type { AllowanceState, ReceiptRecord, ReputationPage } from '../store/store.js';
import type { IssuedReceipt, UnsignedReceipt } from '../receipts/issue-receipt.js';
import type { ApiError } from '../errors.js';

/** Who is calling, as far as the free allowance is concerned. */
export interface ClientContext {
  /** The client address (IP; X-Forwarded-For only behind a trusted proxy). */
  clientKey: string;
}

export interface AllowanceInfo extends AllowanceState {
  /** Next UTC midnight, RFC 3339. */
  resetsAt: string;
  /** Seconds until resetsAt. */
  retryAfter: number;
}

/** A signed trust score and the exact text that is sent. */
export interface SignedResult {
  /** The score document including verify + attestation. */
  response: Record<string, unknown>;
  /** JSON text of `response`. */
  text: string;
}

export interface VerifierService {
  /** Take one unit of free allowance. Never throws for exhaustion: check `allowed`. */
  consumeAllowance(client: ClientContext): Promise<AllowanceInfo>;
  peekAllowance(client: ClientContext): Promise<AllowanceInfo>;
  refundAllowance(client: ClientContext): Promise<void>;
  /** Take `units` units at once (a batch), all or none: `allowed` false means nothing was taken. */
  takeAllowance(client: ClientContext, units: number): Promise<AllowanceInfo>;
  /** Give `units` units back at once (a batch that failed). */
  refundAllowanceUnits(client: ClientContext, units: number): Promise<void>;

  /**
   * Sign a drafted receipt (on the store's writer thread where the store can) and durably store it;
   * resolves with the receipt, exactly as stored, once it is committed (before any client sees it).
   */
  saveReceipt(unsigned: UnsignedReceipt): Promise<IssuedReceipt>;
  /**
   * Take one unit and durably store its receipt (signed as in saveReceipt) together: when no unit is
   * left nothing is stored, `allowed` is false and `receipt` null. Never charges a unit for a receipt
   * that failed to store.
   */
  consumeAllowanceAndSave(client: ClientContext, unsigned: UnsignedReceipt): Promise<{ allowance: AllowanceInfo; receipt: IssuedReceipt | null }>;
  /** Durably store a batch's receipts in one transaction: all or none. */
  saveReceipts(records: readonly ReceiptRecord[]): Promise<void>;
  /** Why an agent id is not scored (invalid_request: not a valid id, or a `test-` example), or null when it is. */
  unscorable(agentId: string): ApiError | null;
  /**
   * The signed trust score of an agent (trust-score attestation context), for an id `unscorable` accepts:
   * asked for another, it rejects with that error (the caller skipped the check).
   */
  score(agentId: string): Promise<SignedResult>;
  reputation(agentId: string, page: { limit: number; cursor?: string | null }): Promise<ReputationPage>;
  /** The stored receipt text, or null. */
  getReceipt(verificationId: string): Promise<string | null>;
}
