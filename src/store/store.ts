/**
 * @module The store's ports, one per concern (allowance, receipts, payments, keys, the
 * transparency log, the database itself, its metrics), every method required: a caller
 * takes the narrowest port it uses, and never asks a store what it can do. SQLite
 * (embedded default) and PostgreSQL (scale-out) implement all of them with the same
 * semantics: an exact allowance counter under concurrency (also across processes
 * sharing one database), receipts durable before a response is sent, per-agent
 * reputation queries, and exactly-once payment reservations.
 */

import type { KeyObject } from 'node:crypto';
import type { ReputationPage } from '../core/records.js';
import type { TransparencyLogStore } from './log-store.js';
import type { ValidationQueueStore } from '../erc8004/queue-store.js';

/** An agent's record is written in its wire form (src/core/records.ts). */
export type { HistoryEntry, ReputationPage } from '../core/records.js';

/** One stored verification: the exact signed receipt text plus indexed columns. */
export interface ReceiptRecord {
  verificationId: string;
  agentId: string | null;
  taskId: string;
  result: 'pass' | 'fail';
  overallRatio: number;
  /** RFC 3339 UTC. */
  verifiedAt: string;
  keyVersion: string;
  /** The full signed response exactly as sent to the client (byte-identical on read). */
  receipt: string;
}

/**
 * A receipt to be signed as it is stored (see ReceiptStore.signAndSaveReceipt): its record without the
 * text, plus the unsigned response text. What the signature is over is derived from that text
 * (signingInputOfText of src/receipts/v1/attestation.ts, under the verify context) and the attestation
 * block is appended to it (signedResponseText). A receipt draft (src/receipts/issue-receipt.ts) is one.
 */
export interface UnsignedReceiptRecord extends Omit<ReceiptRecord, 'receipt'> {
  unsignedText: string;
  /**
   * The signing input when the draft already carries it (the same bytes signingInputOfText derives): a
   * store signing on the calling thread uses it rather than walk the text again; the writer thread derives its own.
   */
  input?: string;
}

export interface AllowanceState {
  /** Whether this call was granted (consume) or would be (peek). */
  allowed: boolean;
  limit: number;
  used: number;
  remaining: number;
}

export interface PaymentKey {
  network: string;
  payer: string;
  /** EVM: the EIP-3009 nonce; Solana: the transaction signature. */
  nonce: string;
}

/**
 * What a payment key is held for: the request it was reserved for and, once settled, what it
 * bought. One payment pays for one request; the same payment sent again with that request gets
 * what it bought, with another request it is refused.
 */
export interface PaymentReservation {
  status: 'reserved' | 'settled';
  /** The request the payment was reserved for (src/payments/admission.ts says how it is named); null for rows from before bindings. */
  requestHash: string | null;
  /** Settled: the verification ids of the receipts it bought, in order (empty for a score); null before. */
  verificationIds: string[] | null;
  /** Settled: the settlement transaction, when known. */
  transaction: string | null;
  /** RFC 3339 UTC: when it was reserved. */
  reservedAt: string;
}

export type PaymentEventKind =
  | 'verified'
  | 'settled'
  | 'settle_failed'
  | 'verify_failed'
  | 'released'
  | 'replay_rejected'
  /** Refused before the facilitator was asked (malformed, wrong option, window, unsupported payload). */
  | 'refused'
  /** Settlement submitted, outcome not known yet: the reservation and the pending receipt are kept. */
  | 'settle_pending'
  /** A pending receipt was voided (its settlement did not go through). */
  | 'voided';

/**
 * A paid call whose settlement has been started but not confirmed. The receipt
 * it paid for is kept here, invisible (no lookup, no reputation, no score),
 * until the settlement is known: then it is published (moved to the receipts)
 * or voided (deleted). One per payment key.
 */
export interface PendingSettlement {
  key: PaymentKey;
  route: string;
  /** The receipt paid for (verify route; the first one of a batch); null for calls that store nothing (score). */
  record: ReceiptRecord | null;
  /**
   * A paid batch: every receipt the one payment bought, in order (`record` is the first).
   * Published together in one transaction, or voided together.
   */
  batch?: ReceiptRecord[];
  /** JSON of `{payload, requirements}` as sent to the facilitator, to settle again or check on reconciliation. */
  payment: string;
  /** Settlement transaction hash once one is known. */
  transaction: string | null;
  /** RFC 3339 UTC. */
  createdAt: string;
  /**
   * `pending` until the settlement is known; `settled` once a settlement that was reported
   * pending went through (its receipt is published): kept so the buyer's retry gets that receipt.
   */
  state: 'pending' | 'settled';
}

export interface PaymentEvent {
  key: PaymentKey;
  kind: PaymentEventKind;
  route: string;
  amount: string;
  verificationId: string | null;
  /** RFC 3339 UTC. */
  at: string;
  /** Facilitator transaction hash or error reason; never secrets. */
  detail: string | null;
}

/** One signing key as the store keeps it (public state; the private key only in database key mode, encrypted). */
export interface SigningKeyRecord {
  keyVersion: string;
  /** Standard base64 of the raw 32-byte Ed25519 public key. */
  publicKey: string;
  status: 'active' | 'retired';
  /** RFC 3339 UTC, whole seconds. */
  notBefore: string;
  notAfter: string | null;
  /** RFC 3339 UTC with milliseconds: creation order. */
  createdAt: string;
  /** Encrypted PKCS#8 (see receipts/key-store.ts), or null when the private key lives elsewhere. */
  privateKey: string | null;
}

/** The transparency log's note key for one log origin (see src/log/note-key-store.ts). */
export interface LogNoteKeyRecord {
  /** The key name: the log origin (public host + `/log`). */
  name: string;
  /** Standard base64 of the raw 32-byte Ed25519 public key. */
  publicKey: string;
  /** Encrypted PKCS#8 (as the signing keys'), or null when the private key lives in LOG_NOTE_KEY_FILE. */
  privateKey: string | null;
  /** `generated` in the database, or taken from a key `file`. */
  source: 'generated' | 'file';
  /** RFC 3339 UTC with milliseconds. */
  createdAt: string;
}

/** The free allowance: an exact per-client, per-day counter (also across processes sharing one database). */
export interface AllowanceStore {
  /**
   * Atomically take one unit of `clientKey`'s allowance for `day` (YYYY-MM-DD, UTC).
   * Exactly `limit` calls per day succeed, even under concurrency and across processes.
   */
  consumeAllowance(clientKey: string, day: string, limit: number): Promise<AllowanceState>;
  /** Read without consuming. */
  peekAllowance(clientKey: string, day: string, limit: number): Promise<AllowanceState>;
  /** Give one unit back (the work failed after the unit was taken). Never below zero. */
  refundAllowance(clientKey: string, day: string): Promise<void>;
  /**
   * Atomically take `units` units of `clientKey`'s allowance for `day`, all or none, in one
   * statement (a batch of `units` verifications): granted only when `used + units <= limit`,
   * otherwise nothing is taken and `allowed` is false with the current count.
   */
  takeAllowance(clientKey: string, day: string, limit: number, units: number): Promise<AllowanceState>;
  /** Give `units` units back in one statement (a batch failed after they were taken). Never below zero. */
  refundAllowanceUnits(clientKey: string, day: string, units: number): Promise<void>;
  /** Delete allowance rows of days before `beforeDay` (YYYY-MM-DD); returns how many. */
  pruneAllowance(beforeDay: string): Promise<number>;
}

/**
 * Receipts: durable before a response is sent, byte-identical on read, and the per-agent history
 * reputation and the trust score read. Every write also queues the receipt for the transparency log.
 */
export interface ReceiptStore {
  /** Durably store a receipt; resolves only once it is committed. */
  saveReceipt(record: ReceiptRecord): Promise<void>;
  /**
   * Durably store several receipts in one transaction: all are committed (and queued for the
   * transparency log, as single receipts are) or none is. Resolves only once committed.
   */
  saveReceipts(records: readonly ReceiptRecord[]): Promise<void>;
  /**
   * consumeAllowance and saveReceipt in one transaction: the unit is taken and the receipt stored
   * together, or, when no unit is left, nothing is written and `allowed` is false with the current
   * count. Resolves once committed (durably, as saveReceipt). When it fails, nothing is charged.
   * One write instead of two for a client known to have units left (see src/service/allowance-hints.ts).
   */
  consumeAllowanceAndSaveReceipt(clientKey: string, day: string, limit: number, record: ReceiptRecord): Promise<AllowanceState>;
  /**
   * Sign a receipt with `key` (Ed25519 over the signing input of `record.unsignedText`, by the receipts code
   * in src/receipts/v1/sign-text.ts) and store its signed text, as saveReceipt. Resolves, once committed,
   * with the signed text exactly as stored: the caller sends those bytes and builds no second copy. Where
   * the signature is made is the store's business: the embedded store's writer thread signs in the step
   * that stores the receipt, so it costs the HTTP thread nothing; the others sign on the calling thread.
   */
  signAndSaveReceipt(record: UnsignedReceiptRecord, key: KeyObject): Promise<string>;
  /**
   * consumeAllowanceAndSaveReceipt for a receipt signed as in signAndSaveReceipt. `receipt` is the signed
   * text as stored, only with a stored receipt (null when no unit was left: nothing stored).
   */
  consumeAllowanceAndSignAndSaveReceipt(
    clientKey: string,
    day: string,
    limit: number,
    record: UnsignedReceiptRecord,
    key: KeyObject,
  ): Promise<AllowanceState & { receipt: string | null }>;
  /** The exact stored receipt text, or null. */
  getReceipt(verificationId: string): Promise<string | null>;
  /** Counts and newest-first history of an agent, paged by cursor. */
  reputation(agentId: string, page: { limit: number; cursor?: string | null }): Promise<ReputationPage>;
  /** Every (result, verified_at) of an agent, for the trust score. Oldest first. */
  agentResults(agentId: string): Promise<Array<{ result: 'pass' | 'fail'; verifiedAt: string }>>;
}

/** x402 payments: exactly-once reservations, pending settlements with their invisible receipts, and the ledger. */
export interface PaymentStore {
  /** Reserve a payment key for one request; false when it was already reserved or used (replay). */
  reservePayment(key: PaymentKey, requestHash: string): Promise<boolean>;
  /** The reservation of a payment key (reserved or settled), or null when it is free. */
  paymentReservation(key: PaymentKey): Promise<PaymentReservation | null>;
  /** Release a reservation (settlement failed), so the same authorization may be retried. A settled key is never released. */
  releasePayment(key: PaymentKey): Promise<void>;
  /**
   * Mark a reservation settled with what it bought: the key then stays used for good (release no
   * longer frees it), and a retry of its request is answered with those receipts.
   */
  settlePayment(key: PaymentKey, bought: { verificationIds: readonly string[]; transaction: string | null }): Promise<void>;
  /** Durably store a pending settlement (and its invisible receipt) before settling. Replaces one with the same key. */
  savePendingSettlement(pending: PendingSettlement): Promise<void>;
  /** Remember the settlement transaction of a pending settlement. */
  setPendingTransaction(key: PaymentKey, transaction: string): Promise<void>;
  /** The pending settlement of a payment key, or null. */
  pendingSettlement(key: PaymentKey): Promise<PendingSettlement | null>;
  /** The pending settlement holding a receipt with this verification id, or null. */
  pendingSettlementFor(verificationId: string): Promise<PendingSettlement | null>;
  /** Every settlement still in state `pending`, oldest first (reconciliation). */
  pendingSettlements(): Promise<PendingSettlement[]>;
  /** A pending settlement went through (its receipt is published): keep it as `settled` with its transaction. */
  markPendingSettled(key: PaymentKey, transaction: string | null): Promise<void>;
  /** Forget a pending settlement (after publishing or voiding its receipt). */
  deletePendingSettlement(key: PaymentKey): Promise<void>;
  /** Append to the payment ledger. */
  recordPaymentEvent(event: PaymentEvent): Promise<void>;
  /** The ledger, for tests and operators. */
  paymentEvents(filter?: { verificationId?: string }): Promise<PaymentEvent[]>;
}

/** The receipt signing keys' public state (and, in database key mode, their encrypted private keys). */
export interface KeyStore {
  /** Every signing key ever recorded, oldest first. */
  signingKeys(): Promise<SigningKeyRecord[]>;
  /**
   * Record keys that exist elsewhere (key files): inserts the ones not yet known,
   * retires known ones that are given as retired; never deletes, never un-retires.
   */
  recordSigningKeys(keys: SigningKeyRecord[]): Promise<void>;
  /**
   * Rotation in one transaction: every active key gets `notAfter = key.notBefore` and
   * status retired, then `key` is inserted. With `onlyIfEmpty`, nothing happens (false)
   * when any key is already recorded (concurrent first starts agree on one key).
   */
  addSigningKey(key: SigningKeyRecord, options?: { onlyIfEmpty?: boolean }): Promise<boolean>;
}

/** The transparency log's note key of each log origin (src/log/note-key.ts). */
export interface LogNoteKeyStore {
  /** The log note key recorded for `name`, or null. */
  logNoteKey(name: string): Promise<LogNoteKeyRecord | null>;
  /**
   * Records `key` unless a key of that name is already recorded, and returns the recorded one: instances
   * that start at the same moment all get the first insert's key. A recorded key is never replaced.
   */
  addLogNoteKey(key: LogNoteKeyRecord): Promise<LogNoteKeyRecord>;
  /**
   * Stores the encrypted private key of a key recorded without one (its public half only); false, changing
   * nothing, when the recorded key of `name` is another key or already has its private key.
   */
  sealLogNoteKey(name: string, publicKey: string, privateKey: string): Promise<boolean>;
}

/** The ERC-8004 validator's queue (src/erc8004/queue-store.ts), kept by every store. */
export interface Erc8004Store {
  readonly erc8004: ValidationQueueStore;
}

/** The store as a database: its schema, whether it answers and commits, and its end. */
export interface StoreOps {
  /** Create or upgrade the schema (versioned migrations). Idempotent. */
  migrate(): Promise<void>;
  /** Applied migration versions, ascending (for operators and tests). */
  appliedMigrations(): Promise<number[]>;
  /** True when the database answers. */
  health(): Promise<boolean>;
  /**
   * Readiness: null when the store can commit right now (a small write is committed
   * to prove it), else the reason (`disk full`, `database unreachable`, …).
   */
  check(): Promise<string | null>;
  close(): Promise<void>;
}

/**
 * What the store measures of its own writes, read when /metrics is scraped. A store that does not have one of
 * these (only the embedded store's writer and checkpointer threads have them) gives an empty one (emptyHistogram).
 */
export interface StoreMetrics {
  /**
   * How long the embedded store's disk syncs of committed receipts took since it opened. A receipt is answered
   * only after its sync, so a slow disk shows here before anywhere else.
   */
  walSyncs(): WalSyncStats;
  /**
   * How long each start-over of the embedded store's WAL held its writes back. Once the WAL is past its bound, a
   * RESTART checkpoint copies what is left and syncs the database file while no write can commit: every request
   * in flight waits for it.
   */
  walRestarts(): DurationHistogram;
  /**
   * How long calls on this thread waited for the embedded store's writer thread to answer, by what they wrote:
   * the wait behind the batch in flight, the transaction, and for receipts the WAL sync. Every verification waits
   * twice (its allowance unit, then its receipt), so these show where a request's latency goes when the event
   * loop is not the one that is late.
   */
  writeWaits(): Record<StoreWrite, DurationHistogram>;
}

/** Every port together: what the SQLite and PostgreSQL stores implement, and what the composition root wires. */
export interface Store extends AllowanceStore, ReceiptStore, PaymentStore, KeyStore, LogNoteKeyStore, TransparencyLogStore, Erc8004Store, StoreOps, StoreMetrics {}

/** What a call waited on the writer for: an allowance count or refund, a receipt (one or a batch), a transparency-log append. */
export type StoreWrite = 'allowance' | 'receipt' | 'log';

/** A histogram of durations: counts[i] took at most bounds[i] seconds (and more than the bound before); the last count has no bound. */
export interface DurationHistogram {
  bounds: readonly number[];
  counts: number[];
  /** Seconds, all together. */
  sum: number;
}

/** The WAL syncs' histogram (walSyncs()). */
export type WalSyncStats = DurationHistogram;

/** A histogram the store does not keep: no buckets, nothing counted (not exported to /metrics). */
export function emptyHistogram(): DurationHistogram {
  return { bounds: [], counts: [], sum: 0 };
}

/** The metrics of a store that keeps none of them (PostgreSQL, the embedded store without its writer thread). */
export const NO_STORE_METRICS: StoreMetrics = Object.freeze({
  walSyncs: emptyHistogram,
  walRestarts: emptyHistogram,
  writeWaits: () => ({ allowance: emptyHistogram(), receipt: emptyHistogram(), log: emptyHistogram() }),
});
