/**
 * @module The wire types of the service as the client sees them: the
 * verification request, the signed receipt, the trust score, the reputation
 * page and the error body. What the server also produces is its own type, imported
 * here (types only: nothing of the server is bundled): the receipt is derived from
 * the server's response types (src/core/response.ts), its hints, flags and scores
 * are the core's (src/core/types.ts), the reputation page is the store's (src/core/records.ts). src/client/client.test.ts checks every property
 * name against the JSON Schemas the server publishes (src/service/wire-schemas.ts,
 * served in /openapi.json) and validates live responses with them, so a drift on
 * either side fails the tests.
 */

import type { CompactResponse, CompactSummary, FullResponse, ResponseSummary } from '../core/response.js';
import type { CheckpointRef } from '../core/records.js';
import type { Json, RuleType } from '../core/types.js';

export type { ErrorDetail, Flag, Hint, RuleType, Score } from '../core/types.js';
export type { CheckpointRef as LogCheckpointRef, HistoryEntry, ReputationPage as Reputation } from '../core/records.js';
export type { JsonPatchOperation, Repair, RepairOption } from '../repair/apply-repairs.js';

/** Any JSON value. */
export type JsonValue = Json;

/** A cross-field rule; give exactly one reference where the type needs one. */
export interface Rule {
  type: RuleType;
  field: string;
  equals_field?: string | null;
  equals?: number | null;
  other_field?: string | null;
  value?: number | null;
  in_field?: string | null;
  values?: JsonValue[] | null;
  /** sum_equals: absolute tolerance (default 1e-9). */
  tolerance?: number;
  if_present?: boolean;
}

/** An inclusive numeric range for every value at a path. */
export interface Bound {
  min?: number;
  max?: number;
  if_present?: boolean;
}

/** The body of POST /verify/schema. */
export interface VerificationRequest {
  task_id: string;
  agent_id?: string | null;
  /** A JSON Schema (draft 2020-12 unless `$schema` says 2019-09 or draft-07). */
  expected_schema: { [key: string]: JsonValue } | boolean;
  submitted_output: JsonValue;
  strict_content_check?: boolean;
  bounds?: { [path: string]: Bound } | null;
  rules?: Rule[] | null;
  enforce_rules?: boolean;
  detail?: 'full' | 'compact';
  /**
   * When true, an unknown schema keyword or format (a typo, which checks nothing) is a
   * 422 `invalid_request` naming each one, before anything is charged. Not hashed.
   */
  strict_schema?: boolean;
}

/** One output of a batch: its own task and agent; schema, bounds and rules are shared. */
export interface BatchItem {
  task_id: string;
  agent_id?: string | null;
  submitted_output: JsonValue;
}

/** The body of POST /verify/batch. */
export interface BatchVerificationRequest extends Omit<VerificationRequest, 'task_id' | 'agent_id' | 'submitted_output'> {
  items: BatchItem[];
}

/** The answer of POST /verify/batch: one signed receipt per item, in order. */
export interface BatchVerificationResponse<R> {
  summary: { total: number; passed: number; failed: number };
  receipts: R[];
}

/** How to check a receipt's signature: where the key is published and how the signed bytes are formed. */
export interface VerifyBlock {
  public_key_url: string;
  key_version: string;
  canonicalization: string;
  hash_algorithm: string;
  service?: string;
  mcp?: string;
}

/** The Ed25519 signature block of a receipt (docs/protocol.md#signature). */
export interface Attestation {
  algorithm: 'Ed25519';
  key_version: string;
  timestamp: string;
  signature: string;
}

/** One object type of an intersection, as editors show it. */
type Flat<T> = { [K in keyof T]: T[K] };

/**
 * A signed verification receipt. The fields marked optional are in the full
 * form only (`detail: "full"`, the default); the compact form leaves them out.
 * `summary.warnings` (compact form only) is the number of warning flags the compact
 * form does not list.
 */
export type Receipt = Flat<
  Omit<CompactResponse, 'summary'> &
    Partial<Omit<FullResponse, keyof CompactResponse>> & {
      summary: ResponseSummary & Partial<Pick<CompactSummary, 'warnings'>>;
      verify: VerifyBlock;
      attestation: Attestation;
    }
>;

/** The signed trust score of GET /score/{agent_id}. */
export interface TrustScore {
  agent_id: string;
  /** 0–100. */
  score: number;
  /** What the score was computed from (method, counts, weights). */
  inputs: { [key: string]: JsonValue };
  scored_at?: string;
  /** The log checkpoint covering every receipt counted, when the service keeps a transparency log. */
  log_checkpoint?: CheckpointRef;
  verify: VerifyBlock;
  attestation: Attestation;
}

/** One problem in a refused request: the field, what is wrong, and how to fix it. */
export interface ErrorField {
  field: string;
  problem: string;
  fix: string;
}

/** The one error body of every non-payment error. */
export interface ApiErrorBody {
  code: string;
  message: string;
  status: number;
  retryable: boolean;
  charged: false;
  next_actions: Array<Record<string, unknown>>;
  fields: ErrorField[];
  /** Seconds to wait before retrying; present when retryable. */
  retry_after?: number;
}

/** The free allowance as the Free-Allowance-* headers report it. */
export interface AllowanceState {
  remaining: number;
  limit: number;
  resetsAt: string;
}
