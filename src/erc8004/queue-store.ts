/**
 * @module What the validator keeps in the store (src/erc8004/validator.ts): one
 * row per ValidationRequest addressed to it (keyed by the registry and the
 * request hash, so instances that see the same event queue it once), the answer
 * it decided, and the transaction that carries it. A transaction is sent only
 * after its signed bytes are stored, and a row keeps the nonce it was given, so
 * a crash or a second instance can only send those same bytes again: at most
 * one answer per request reaches the chain. Nonces come from one counter per
 * sender address, taken under the database's lock.
 */

/**
 * `new`: seen, not looked at yet. `waiting`: its receipt is held by a payment whose settlement is not known yet.
 * `queued`: answer decided, no nonce. `nonced`: nonce given, not signed. `signed`: signed bytes stored (maybe sent).
 * `confirmed`: mined. `skipped`: never answered (reason). `failed`: given up (reason).
 */
export type ValidationState = 'new' | 'waiting' | 'queued' | 'nonced' | 'signed' | 'confirmed' | 'skipped' | 'failed';

export const VALIDATION_STATES: readonly ValidationState[] = ['new', 'waiting', 'queued', 'nonced', 'signed', 'confirmed', 'skipped', 'failed'];

export interface ValidationAnswer {
  verificationId: string;
  /** 0–100. */
  response: number;
  responseUri: string;
  /** 0x + 64 hex: SHA-256 of the receipt's exact bytes. */
  responseHash: string;
  tag: string;
}

export interface ValidationRow {
  /** Registry address, lowercase 0x hex. */
  registry: string;
  /** 0x + 64 lowercase hex, as on chain. */
  requestHash: string;
  /** The on-chain agent id (decimal). */
  agentId: string;
  requestBlock: number;
  requestTx: string;
  state: ValidationState;
  /** Why a row was skipped or failed, or the last error of a retried step. */
  reason: string | null;
  answer: ValidationAnswer | null;
  /** Sender address (lowercase) and nonce once given. */
  sender: string | null;
  nonce: number | null;
  rawTx: string | null;
  txHash: string | null;
  /** Block of the mined answer. */
  answerBlock: number | null;
  attempts: number;
  /** Epoch ms: not before this is the row worked on again. */
  nextAttemptMs: number;
  /** RFC 3339 UTC. */
  createdAt: string;
  updatedAt: string;
}

/** A ValidationRequest as seen on chain. */
export interface SeenRequest {
  registry: string;
  requestHash: string;
  agentId: string;
  requestBlock: number;
  requestTx: string;
}

/** A stored receipt found by its request hash. */
export interface ReceiptMatch {
  verificationId: string;
  result: 'pass' | 'fail';
  overallRatio: number;
  receipt: string;
}

/** What may change on a claimed row (only while its lease is held). */
export type ValidationPatch = Partial<Pick<ValidationRow, 'state' | 'reason' | 'answer' | 'rawTx' | 'txHash' | 'answerBlock' | 'attempts' | 'nextAttemptMs'>> & {
  /** Clear the nonce (and signed bytes): only when the chain shows that nonce taken by another transaction. */
  clearNonce?: boolean;
};

export interface ValidationQueueStore {
  /** Make what lookups by request hash need (an index on the receipts); run when the feature starts. Idempotent. */
  erc8004Prepare(): Promise<void>;
  /** Queue a request; false when it is already known (another instance or an earlier pass saw it). */
  erc8004Enqueue(request: SeenRequest, nowMs: number): Promise<boolean>;
  /** The next block to scan for `key` (registry + validator), or null when never scanned. */
  erc8004Cursor(key: string): Promise<number | null>;
  /** Move the cursor forward (never back). */
  erc8004SetCursor(key: string, nextBlock: number): Promise<void>;
  /** Up to `limit` stored receipts whose full form carries this request hash (64 hex, no 0x). */
  erc8004ReceiptsFor(requestHash: string, limit: number): Promise<ReceiptMatch[]>;
  /** True when a pending (unsettled) paid receipt carries this request hash (64 hex, no 0x). */
  erc8004PendingFor(requestHash: string): Promise<boolean>;
  /**
   * Take the lease of one row of `registry` that needs work (state new, waiting, queued, nonced or signed; due; lease free),
   * lowest nonce first; null when none. Rows leased by another owner are skipped, not waited for.
   */
  erc8004Claim(registry: string, owner: string, nowMs: number, leaseMs: number): Promise<ValidationRow | null>;
  /** Change a row whose lease `owner` holds; false when the lease was lost (another instance took over). */
  erc8004Update(registry: string, requestHash: string, owner: string, patch: ValidationPatch, nowMs: number): Promise<boolean>;
  /** Let go of a row's lease once its step is done (another instance may take it when it is due). */
  erc8004Release(registry: string, requestHash: string, owner: string): Promise<void>;
  /**
   * Give a queued row the next nonce of `sender` (at least `chainNonce`), in one transaction with the counter;
   * returns it, or null when the lease was lost or the row is not queued.
   */
  erc8004AssignNonce(registry: string, requestHash: string, owner: string, sender: string, chainNonce: number, nowMs: number): Promise<number | null>;
  /** Rows newest first, optionally of some states. */
  erc8004List(filter: { states?: readonly ValidationState[]; limit: number }): Promise<ValidationRow[]>;
  /** Counts by state. */
  erc8004Counts(): Promise<Partial<Record<ValidationState, number>>>;
  /** Confirmed answers for receipts of `agentId` (our agent id, as in receipts), newest first. */
  erc8004OfAgent(agentId: string, limit: number): Promise<ValidationRow[]>;
}
