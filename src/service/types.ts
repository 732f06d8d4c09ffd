/**
 * @module The application-service contract shared by the REST, MCP and payment
 * adapters. Adapters translate transport details (headers, JSON-RPC, x402) into
 * these calls; they hold no verification logic of their own.
 */
import type { ParsedRequest } from '../core/types.js';
import type { AllowanceState, ReceiptRecord, ReputationPage } from '../store/store.js';

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

/** A signed response (receipt or score) and the exact text that was stored and is sent. */
export interface SignedResult {
  /** The response object (SPEC §4 / score shape) including verify + attestation. */
  response: Record<string, unknown>;
  /** JSON text of `response`, byte-identical to what GET /verifications/{id} returns. */
  text: string;
}

export interface VerifierService {
  /** Strictly parse and validate a request body (SPEC §1). Throws ApiError(invalid_request). */
  parseRequest(body: string | Buffer): ParsedRequest;
  /** Validate an already-parsed JSON value (MCP arguments). Throws ApiError(invalid_request). */
  parseRequestValue(value: unknown): ParsedRequest;

  /** Take one unit of free allowance. Never throws for exhaustion: check `allowed`. */
  consumeAllowance(client: ClientContext): Promise<AllowanceInfo>;
  peekAllowance(client: ClientContext): Promise<AllowanceInfo>;
  refundAllowance(client: ClientContext): Promise<void>;

  /** Verify, sign and durably store. Resolves only after the receipt is committed. */
  verify(parsed: ParsedRequest): Promise<SignedResult>;
  /**
   * Verify and sign without storing: the paid path stores the record itself, as a pending
   * settlement, and publishes it only once the payment is settled.
   */
  issue(parsed: ParsedRequest): Promise<{ signed: SignedResult; record: ReceiptRecord }>;
  /** The signed trust score of an agent (trust-score attestation context). */
  score(agentId: string): Promise<SignedResult>;
  reputation(agentId: string, page: { limit: number; cursor?: string | null }): Promise<ReputationPage>;
  /** The stored receipt text, or null. */
  getReceipt(verificationId: string): Promise<string | null>;
}
