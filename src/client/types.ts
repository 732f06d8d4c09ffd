/**
 * @module The wire types of the service as the client sees them: the
 * verification request, the signed receipt, the trust score, the reputation
 * page and the error body. They mirror the JSON Schemas the server publishes
 * (src/service/wire-schemas.ts, served in /openapi.json); src/client/client.test.ts
 * checks every property name against those schemas and validates live responses
 * with them, so a drift on either side fails the tests.
 */

import type { Repair } from '../repair/apply-repairs.js';

export type { JsonPatchOperation, Repair, RepairOption } from '../repair/apply-repairs.js';

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type RuleType = 'sum_equals' | 'gte' | 'lte' | 'exists_in' | 'unique';

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

export interface Score {
  ratio: number;
  passed: number;
  total: number;
}

export interface ErrorDetail {
  check: string;
  path: string;
  expected: string;
  found: string;
  message: string;
}

export interface Flag {
  check: string;
  field: string;
  severity: 'error' | 'warning';
  detail: string;
}

export interface Hint {
  source: 'schema' | 'integrity' | 'content';
  check: string;
  path: string;
  expected: string;
  found: string;
  /** A known fix as JSON Patch against `submitted_output` (docs/protocol.md#repairs); absent when none is known. */
  repair?: Repair;
}

export interface VerifyBlock {
  public_key_url: string;
  key_version: string;
  canonicalization: string;
  hash_algorithm: string;
  service?: string;
  mcp?: string;
}

export interface Attestation {
  algorithm: 'Ed25519';
  key_version: string;
  timestamp: string;
  signature: string;
}

/**
 * A signed verification receipt. The fields marked optional are in the full
 * form only (`detail: "full"`, the default); the compact form leaves them out.
 */
export interface Receipt {
  /**
   * `warnings` (compact form only): the number of warning flags the compact form does not list.
   * `schema_warnings` (present only when above 0): unknown keywords and formats in the schema, which check nothing.
   */
  summary: { result: 'pass' | 'fail'; blocking_checks: string[]; warnings?: number; schema_warnings?: number };
  /**
   * e.g. `{"action":"repair_and_reverify","using":"hints"}`, `{"action":"apply_repairs","count":2}`;
   * `{"action":"review_schema_warnings","count":1}` first on a pass whose schema has unknown keywords.
   */
  next_actions: Array<Record<string, string | number>>;
  result: 'pass' | 'fail';
  verification_id: string;
  task_id: string;
  agent_id: string | null;
  output_hash: string;
  schema_hash: string;
  rules_hash: string;
  request_hash?: string;
  verified_at: string;
  verifier_version: string;
  enforce_rules: boolean;
  strict_content_check: boolean;
  errors?: string[];
  errors_total?: number;
  errors_omitted?: number;
  errors_detail?: ErrorDetail[];
  errors_detail_total?: number;
  errors_detail_omitted?: number;
  flags?: Flag[];
  flags_total?: number;
  flags_omitted?: number;
  hints?: Hint[];
  hints_total?: number;
  hints_omitted?: number;
  schema_compliance?: Score;
  integrity_checks?: Score;
  overall?: Score;
  verify: VerifyBlock;
  attestation: Attestation;
}

/** The transparency-log tree head a reputation page or trust score was computed at. */
export interface LogCheckpointRef {
  tree_size: number;
  /** Standard base64 of the 32-byte root hash, as in GET /log/checkpoint. */
  root_hash: string;
}

/** The signed trust score of GET /score/{agent_id}. */
export interface TrustScore {
  agent_id: string;
  /** 0–100. */
  score: number;
  /** What the score was computed from (method, counts, weights). */
  inputs: { [key: string]: JsonValue };
  scored_at?: string;
  /** The log checkpoint covering every receipt counted, when the service keeps a transparency log. */
  log_checkpoint?: LogCheckpointRef;
  verify: VerifyBlock;
  attestation: Attestation;
}

export interface HistoryEntry {
  verification_id: string;
  task_id: string;
  result: 'pass' | 'fail';
  overall_ratio: number;
  verified_at: string;
}

/** GET /reputation/{agent_id}: one page of an agent's history, newest first. */
export interface Reputation {
  agent_id: string;
  verifications: number;
  passes: number;
  fails: number;
  pass_rate: number;
  first_seen: string | null;
  last_seen: string | null;
  history: HistoryEntry[];
  /** Pass it as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
  /** The log checkpoint covering every receipt counted, when the service keeps a transparency log. */
  log_checkpoint?: LogCheckpointRef;
}

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
