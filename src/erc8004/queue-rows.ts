/** @module Row ↔ object mapping of the ERC-8004 validation queue, the same columns in both stores. */
import type { ValidationPatch, ValidationRow, ValidationState } from './queue-store.js';

/** States a worker still has something to do for. */
export const WORK_STATES: readonly ValidationState[] = ['new', 'waiting', 'queued', 'nonced', 'signed'];

export interface ValidationDbRow {
  registry: string;
  request_hash: string;
  agent_id: string;
  request_block: number | string;
  request_tx: string;
  state: ValidationState;
  reason: string | null;
  verification_id: string | null;
  response: number | null;
  response_uri: string | null;
  response_hash: string | null;
  tag: string | null;
  sender: string | null;
  nonce: number | string | null;
  raw_tx: string | null;
  tx_hash: string | null;
  answer_block: number | string | null;
  attempts: number;
  next_attempt_ms: number | string;
  created_at: string;
  updated_at: string;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export function rowOf(r: ValidationDbRow): ValidationRow {
  return {
    registry: r.registry,
    requestHash: r.request_hash,
    agentId: r.agent_id,
    requestBlock: Number(r.request_block),
    requestTx: r.request_tx,
    state: r.state,
    reason: r.reason,
    answer:
      r.verification_id === null || r.response === null
        ? null
        : { verificationId: r.verification_id, response: Number(r.response), responseUri: r.response_uri ?? '', responseHash: r.response_hash ?? '', tag: r.tag ?? '' },
    sender: r.sender,
    nonce: num(r.nonce),
    rawTx: r.raw_tx,
    txHash: r.tx_hash,
    answerBlock: num(r.answer_block),
    attempts: Number(r.attempts),
    nextAttemptMs: Number(r.next_attempt_ms),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The columns a patch sets, in order, with their values (updated_at always). */
export function patchColumns(patch: ValidationPatch, nowMs: number): { sets: string[]; values: unknown[] } {
  const sets: string[] = [];
  const values: unknown[] = [];
  const set = (column: string, value: unknown) => {
    sets.push(column);
    values.push(value);
  };
  if (patch.state !== undefined) set('state', patch.state);
  if (patch.reason !== undefined) set('reason', patch.reason);
  if (patch.answer !== undefined) {
    set('verification_id', patch.answer?.verificationId ?? null);
    set('response', patch.answer?.response ?? null);
    set('response_uri', patch.answer?.responseUri ?? null);
    set('response_hash', patch.answer?.responseHash ?? null);
    set('tag', patch.answer?.tag ?? null);
  }
  if (patch.clearNonce) {
    set('sender', null);
    set('nonce', null);
    set('raw_tx', null);
    set('tx_hash', null);
  } else {
    if (patch.rawTx !== undefined) set('raw_tx', patch.rawTx);
    if (patch.txHash !== undefined) set('tx_hash', patch.txHash);
  }
  if (patch.answerBlock !== undefined) set('answer_block', patch.answerBlock);
  if (patch.attempts !== undefined) set('attempts', patch.attempts);
  if (patch.nextAttemptMs !== undefined) set('next_attempt_ms', patch.nextAttemptMs);
  set('updated_at', new Date(nowMs).toISOString());
  return { sets, values };
}
