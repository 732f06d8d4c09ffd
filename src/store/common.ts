/**
 * @module Pieces shared by the SQLite and PostgreSQL stores, so both give the
 * same answers: argument checks, the opaque history cursor, the allowance
 * state arithmetic, the ordering key of a receipt, and the mapping between
 * rows and records. Only the SQL dialect stays in each store.
 */
import { invalidRequest } from '../errors.js';
import type { AllowanceState, HistoryEntry, PaymentEvent, PaymentEventKind, PaymentKey, PaymentReservation, PendingSettlement, ReceiptRecord, ReputationPage, SigningKeyRecord, LogNoteKeyRecord } from './store.js';

const DAY_RE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** Days are computed by the service, so a bad one is a programming error, not a client error. */
export function assertDay(day: string): void {
  if (typeof day !== 'string' || !DAY_RE.test(day)) throw new TypeError(`day must be YYYY-MM-DD, got ${JSON.stringify(day)}`);
}

export function assertLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new TypeError(`allowance limit must be a non-negative integer, got ${limit}`);
}

export function assertPaymentKey(key: PaymentKey): void {
  for (const part of ['network', 'payer', 'nonce'] as const) {
    if (typeof key?.[part] !== 'string' || key[part].length === 0) throw new TypeError(`payment key ${part} must be a non-empty string`);
  }
}

/** Units of one allowance take (a batch's item count): a positive integer. */
export function assertUnits(units: number): void {
  if (!Number.isSafeInteger(units) || units < 1) throw new TypeError(`allowance units must be a positive integer, got ${units}`);
}

export function allowanceState(allowed: boolean, limit: number, used: number): AllowanceState {
  return { allowed, limit, used, remaining: Math.max(0, limit - used) };
}

/**
 * History is ordered by the instant (epoch milliseconds) rather than by the
 * RFC 3339 text, because text order breaks when fractional seconds are present
 * on some rows and not others ("…00.5Z" sorts before "…00Z").
 */
function verifiedMs(verifiedAt: string): number {
  const ms = Date.parse(verifiedAt);
  if (!Number.isFinite(ms)) throw new TypeError(`verifiedAt is not an RFC 3339 timestamp: ${JSON.stringify(verifiedAt)}`);
  return ms;
}

function assertReceipt(record: { verificationId: string; taskId: string; result: string; overallRatio: number; keyVersion: string; receipt: string }): void {
  if (typeof record.verificationId !== 'string' || record.verificationId.length === 0) throw new TypeError('verificationId must be a non-empty string');
  if (record.result !== 'pass' && record.result !== 'fail') throw new TypeError(`result must be pass or fail, got ${JSON.stringify(record.result)}`);
  if (typeof record.overallRatio !== 'number' || !Number.isFinite(record.overallRatio)) throw new TypeError('overallRatio must be a finite number');
  if (typeof record.receipt !== 'string') throw new TypeError('receipt must be a string');
}

export interface HistoryCursor {
  ms: number;
  id: string;
}

/** Opaque to clients: base64url of `[ms, verification_id]` of the last row of the previous page. */
function encodeCursor(c: HistoryCursor): string {
  return Buffer.from(JSON.stringify([c.ms, c.id]), 'utf8').toString('base64url');
}

/** A cursor comes from a client, so a bad one is a 422 on the `cursor` field. */
export function decodeCursor(cursor: string): HistoryCursor {
  const bad = () =>
    invalidRequest([{ field: 'cursor', problem: 'is not a cursor returned by this service', fix: 'pass next_cursor from a previous page, or omit it for the first page' }]);
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 512 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Number.isSafeInteger(parsed[0]) || typeof parsed[1] !== 'string') throw bad();
  return { ms: parsed[0] as number, id: parsed[1] as string };
}

/** Matches the largest LIST_CAP the configuration accepts. */
export const MAX_PAGE_LIMIT = 100_000;

export function assertPageLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw invalidRequest([{ field: 'limit', problem: `must be an integer from 1 to ${MAX_PAGE_LIMIT}`, fix: `pass a limit between 1 and ${MAX_PAGE_LIMIT}` }]);
  }
}

/** passes / verifications rounded to 6 decimals; 0 when none (docs/protocol.md#reputation-and-trust-score). */
function passRate(passes: number, verifications: number): number {
  return verifications === 0 ? 0 : Math.round((passes / verifications) * 1e6) / 1e6;
}

/** Column order of a receipt row; {@link receiptValues} gives the values in this order. */
export const RECEIPT_COLUMNS = 'verification_id, agent_id, task_id, result, overall_ratio, verified_at, verified_ms, key_version, receipt';

/** The values of a receipt row, in {@link RECEIPT_COLUMNS} order (checks the record first). */
export function receiptValues(record: ReceiptRecord): unknown[] {
  assertReceipt(record);
  return [
    record.verificationId,
    record.agentId,
    record.taskId,
    record.result,
    record.overallRatio,
    record.verifiedAt,
    verifiedMs(record.verifiedAt),
    record.keyVersion,
    record.receipt,
  ];
}

/** Columns of a history row: the entry plus the ordering key the cursor is made of. */
export const HISTORY_COLUMNS = 'verification_id, task_id, result, overall_ratio, verified_at, verified_ms';

export interface HistoryRow extends HistoryEntry {
  /** PostgreSQL returns BIGINT as a string. */
  verified_ms: number | string;
}

/**
 * One reputation page from what a store read in one snapshot: the agent's counts,
 * its first/last verified_at, and up to `limit + 1` history rows (newest first);
 * the extra row only says whether there is a next page.
 */
export function reputationPage(
  agentId: string,
  counts: { verifications: number; passes: number },
  seen: { first: string | null; last: string | null },
  rows: readonly HistoryRow[],
  limit: number,
): ReputationPage {
  const { verifications, passes } = counts;
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    agent_id: agentId,
    verifications,
    passes,
    fails: verifications - passes,
    pass_rate: passRate(passes, verifications),
    first_seen: seen.first,
    last_seen: seen.last,
    history: pageRows.map((r) => ({
      verification_id: r.verification_id,
      task_id: r.task_id,
      result: r.result,
      overall_ratio: r.overall_ratio,
      verified_at: r.verified_at,
    })),
    next_cursor: more && last ? encodeCursor({ ms: Number(last.verified_ms), id: last.verification_id }) : null,
  };
}

export interface EventRow {
  network: string;
  payer: string;
  nonce: string;
  kind: PaymentEventKind;
  route: string;
  amount: string;
  verification_id: string | null;
  at: string;
  detail: string | null;
}

export function toEvent(r: EventRow): PaymentEvent {
  return {
    key: { network: r.network, payer: r.payer, nonce: r.nonce },
    kind: r.kind,
    route: r.route,
    amount: r.amount,
    verificationId: r.verification_id,
    at: r.at,
    detail: r.detail,
  };
}

/** A request binding as stored: a short printable token (a hex digest), never free text. */
export function assertRequestHash(hash: string): void {
  if (typeof hash !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(hash)) throw new TypeError('a payment must be bound to a request hash of 1-200 printable characters');
}

export interface PaymentRow {
  status: 'reserved' | 'settled';
  request_hash: string | null;
  verification_ids: string | null;
  transaction_hash: string | null;
  created_at: string | Date;
}

export function toReservation(r: PaymentRow): PaymentReservation {
  return {
    status: r.status,
    requestHash: r.request_hash,
    verificationIds: r.verification_ids === null ? null : (JSON.parse(r.verification_ids) as string[]),
    transaction: r.transaction_hash,
    reservedAt: r.created_at instanceof Date ? r.created_at.toISOString() : r.created_at,
  };
}

/** The JSON text of a settled payment's verification ids. */
export function verificationIdsText(ids: readonly string[]): string {
  for (const id of ids) if (typeof id !== 'string' || id.length === 0) throw new TypeError('verification ids must be non-empty strings');
  return JSON.stringify(ids);
}

/** Columns of a pending settlement row; {@link pendingValues} gives the values in this order. */
export const PENDING_COLUMNS = 'network, payer, nonce, route, verification_id, record, payment, transaction_hash, created_at, state';

export function pendingValues(p: PendingSettlement): unknown[] {
  assertPaymentKey(p.key);
  if (p.record) assertReceipt(p.record);
  if (p.batch) {
    if (p.batch.length === 0 || p.batch[0]?.verificationId !== p.record?.verificationId) throw new TypeError('a pending batch must start with its record');
    for (const r of p.batch) assertReceipt(r);
  }
  if (typeof p.payment !== 'string') throw new TypeError('payment must be a string');
  if (p.state !== 'pending' && p.state !== 'settled') throw new TypeError('state must be pending or settled');
  // A batch keeps every receipt in the record column as a JSON array; verification_id names the first.
  const record = p.batch ? JSON.stringify(p.batch) : p.record ? JSON.stringify(p.record) : null;
  return [p.key.network, p.key.payer, p.key.nonce, p.route, p.record?.verificationId ?? null, record, p.payment, p.transaction, p.createdAt, p.state];
}

export interface PendingRow {
  network: string;
  payer: string;
  nonce: string;
  route: string;
  record: string | null;
  payment: string;
  transaction_hash: string | null;
  created_at: string;
  state: 'pending' | 'settled';
}

export function toPending(r: PendingRow): PendingSettlement {
  const stored = r.record === null ? null : (JSON.parse(r.record) as ReceiptRecord | ReceiptRecord[]);
  const batch = Array.isArray(stored) ? stored : undefined;
  return {
    key: { network: r.network, payer: r.payer, nonce: r.nonce },
    route: r.route,
    record: Array.isArray(stored) ? (stored[0] ?? null) : stored,
    ...(batch ? { batch } : {}),
    payment: r.payment,
    transaction: r.transaction_hash,
    createdAt: r.created_at,
    state: r.state,
  };
}

/** Columns of a signing key row, in {@link signingKeyValues} order. */
export const SIGNING_KEY_COLUMNS = 'key_version, public_key, status, not_before, not_after, created_at, private_key';

export interface SigningKeyRow {
  key_version: string;
  public_key: string;
  status: 'active' | 'retired';
  not_before: string;
  not_after: string | null;
  created_at: string;
  private_key: string | null;
}

export function signingKeyValues(k: SigningKeyRecord): unknown[] {
  if (typeof k.keyVersion !== 'string' || !/^k-\d{8}-[0-9a-f]{8,32}$/.test(k.keyVersion)) throw new TypeError(`bad key version ${JSON.stringify(k.keyVersion)}`);
  if (k.status !== 'active' && k.status !== 'retired') throw new TypeError('status must be active or retired');
  return [k.keyVersion, k.publicKey, k.status, k.notBefore, k.notAfter, k.createdAt, k.privateKey];
}

export function toSigningKey(r: SigningKeyRow): SigningKeyRecord {
  return {
    keyVersion: r.key_version,
    publicKey: r.public_key,
    status: r.status,
    notBefore: r.not_before,
    notAfter: r.not_after,
    createdAt: r.created_at,
    privateKey: r.private_key,
  };
}

/** Columns of a log note key row, in {@link logNoteKeyValues} order. */
export const LOG_NOTE_KEY_COLUMNS = 'name, public_key, private_key, source, created_at';

export interface LogNoteKeyRow {
  name: string;
  public_key: string;
  private_key: string | null;
  source: 'generated' | 'file';
  created_at: string;
}

export function logNoteKeyValues(k: LogNoteKeyRecord): unknown[] {
  if (typeof k.name !== 'string' || k.name.length === 0) throw new TypeError('a log note key needs a name');
  if (k.source !== 'generated' && k.source !== 'file') throw new TypeError('source must be generated or file');
  return [k.name, k.publicKey, k.privateKey, k.source, k.createdAt];
}

export function toLogNoteKey(r: LogNoteKeyRow): LogNoteKeyRecord {
  return { name: r.name, publicKey: r.public_key, privateKey: r.private_key, source: r.source, createdAt: r.created_at };
}
