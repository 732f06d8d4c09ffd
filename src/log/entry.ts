/**
 * @module The log entry of a receipt: the RFC 8785 form of {verification_id,
 * task_id, agent_id, result, overall_ratio, verified_at, receipt_sha256} —
 * what reputation already shows, plus the SHA-256 of the receipt's exact
 * bytes as GET /verifications/{id} serves them, so a receipt holder can prove
 * that its receipt is the one logged and the log reveals nothing new.
 */
import { canonicalize } from '../receipts/jcs.js';
import { sha256 } from './merkle.js';

export interface LogEntry {
  verification_id: string;
  task_id: string;
  agent_id: string | null;
  result: 'pass' | 'fail';
  overall_ratio: number;
  verified_at: string;
  receipt_sha256: string;
}

export function receiptSha256(receiptText: string): string {
  return sha256(Buffer.from(receiptText, 'utf8')).toString('hex');
}

/** The entry of a stored receipt, from its indexed columns and exact text. */
export function logEntryOf(record: {
  verificationId: string;
  taskId: string;
  agentId: string | null;
  result: 'pass' | 'fail';
  overallRatio: number;
  verifiedAt: string;
  receipt: string;
}): LogEntry {
  return {
    verification_id: record.verificationId,
    task_id: record.taskId,
    agent_id: record.agentId,
    result: record.result,
    overall_ratio: record.overallRatio,
    verified_at: record.verifiedAt,
    receipt_sha256: receiptSha256(record.receipt),
  };
}

/** The exact entry bytes that are hashed into the tree (UTF-8 of JCS). */
export function encodeLogEntry(entry: LogEntry): string {
  return entryText(entry.verification_id, entry.task_id, entry.agent_id, entry.result, entry.overall_ratio, entry.verified_at, entry.receipt_sha256);
}

/**
 * The RFC 8785 form of an entry, its seven keys spliced in JCS order (UTF-16 code units:
 * agent_id < overall_ratio < receipt_sha256 < result < task_id < verification_id < verified_at)
 * around values canonicalized by jcs.ts. The SQLite store's worker threads encode the entries of
 * the log's queue with it too (src/store/log-sqlite-ops.ts), so every thread encodes entries with
 * the same code.
 */
export function entryText(
  verificationId: string,
  taskId: string,
  agentId: string | null,
  result: string,
  overallRatio: number,
  verifiedAt: string,
  receiptSha256: string,
): string {
  return (
    `{"agent_id":${canonicalize(agentId)}` +
    `,"overall_ratio":${canonicalize(overallRatio)}` +
    `,"receipt_sha256":${canonicalize(receiptSha256)}` +
    `,"result":${canonicalize(result)}` +
    `,"task_id":${canonicalize(taskId)}` +
    `,"verification_id":${canonicalize(verificationId)}` +
    `,"verified_at":${canonicalize(verifiedAt)}}`
  );
}

/** Parses entry bytes back; null when they are not an entry of this log. */
export function decodeLogEntry(text: string): LogEntry | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const e = v as Record<string, unknown>;
  const ok =
    typeof e.verification_id === 'string' &&
    typeof e.task_id === 'string' &&
    (e.agent_id === null || typeof e.agent_id === 'string') &&
    (e.result === 'pass' || e.result === 'fail') &&
    typeof e.overall_ratio === 'number' &&
    typeof e.verified_at === 'string' &&
    typeof e.receipt_sha256 === 'string' &&
    Object.keys(e).length === 7;
  return ok ? (e as unknown as LogEntry) : null;
}
