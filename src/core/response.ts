/**
 * @module The response object of docs/protocol.md#response, in its exact key order, without the
 * `verify` and `attestation` blocks (the signer appends them last). The
 * compact form keeps only the compact keys of docs/protocol.md#response.
 */
import type { Detail, Verdict } from './types.js';

export interface ResponseMeta {
  verification_id: string;
  output_hash: string;
  schema_hash: string;
  rules_hash: string;
  request_hash: string;
  /** RFC 3339 UTC; equals attestation.timestamp. */
  verified_at: string;
  verifier_version: string;
}

/**
 * `schema_warnings` is present only when the schema has unknown keywords or formats (each
 * checks nothing), so responses to schemas without any keep their exact bytes.
 */
export type ResponseSummary = { result: 'pass' | 'fail'; blocking_checks: string[]; schema_warnings?: number };

/**
 * The compact form drops the flag list, so its summary carries the number of
 * warnings: a compact pass can never hide a failed rule or bound that was only a
 * warning (enforce_rules false) or a schema typo.
 */
export type CompactSummary = ResponseSummary & { warnings: number };

/** The identity, hashes and verdict both forms carry. */
type ResponseCore = Pick<Verdict, 'next_actions' | 'result' | 'task_id' | 'agent_id' | 'enforce_rules' | 'strict_content_check'> &
  Omit<ResponseMeta, 'request_hash'>;

/** The lists and scores only the full form carries (each list capped; `_total` counts past the cap, `_omitted` what the cap left out). */
export type FullFormFields = Pick<
  Verdict,
  | 'errors'
  | 'errors_total'
  | 'errors_omitted'
  | 'errors_detail'
  | 'errors_detail_total'
  | 'errors_detail_omitted'
  | 'flags'
  | 'flags_total'
  | 'flags_omitted'
  | 'hints'
  | 'hints_total'
  | 'hints_omitted'
  | 'schema_compliance'
  | 'integrity_checks'
  | 'overall'
>;

/** One object type of an intersection, as editors show it. */
type Flat<T> = { [K in keyof T]: T[K] };

/** The compact form (detail "compact"): identity, hashes and verdict, no lists or scores. */
export type CompactResponse = Flat<{ summary: CompactSummary } & ResponseCore>;

/** The full form (detail "full"); buildResponse writes it in wire order. */
export type FullResponse = Flat<{ summary: ResponseSummary } & ResponseCore & Pick<ResponseMeta, 'request_hash'> & FullFormFields>;

export type VerificationResponse = FullResponse | CompactResponse;

export function buildResponse(verdict: Verdict, meta: ResponseMeta, detail: Detail): VerificationResponse {
  // Plain object literals (no spreads): this runs once per request on the hot path,
  // and literal shapes keep V8 on its fast properties path.
  const summary: ResponseSummary = { result: verdict.result, blocking_checks: verdict.blocking_checks.slice() };
  if (verdict.schema_warnings !== undefined && verdict.schema_warnings > 0) summary.schema_warnings = verdict.schema_warnings;
  if (detail === 'compact') {
    const compact: CompactSummary = { result: summary.result, blocking_checks: summary.blocking_checks, warnings: verdict.warnings_total };
    if (verdict.schema_warnings !== undefined && verdict.schema_warnings > 0) compact.schema_warnings = verdict.schema_warnings;
    return {
      summary: compact,
      next_actions: verdict.next_actions,
      result: verdict.result,
      verification_id: meta.verification_id,
      task_id: verdict.task_id,
      agent_id: verdict.agent_id,
      output_hash: meta.output_hash,
      schema_hash: meta.schema_hash,
      rules_hash: meta.rules_hash,
      verified_at: meta.verified_at,
      verifier_version: meta.verifier_version,
      enforce_rules: verdict.enforce_rules,
      strict_content_check: verdict.strict_content_check,
    };
  }
  return {
    summary,
    next_actions: verdict.next_actions,
    result: verdict.result,
    verification_id: meta.verification_id,
    task_id: verdict.task_id,
    agent_id: verdict.agent_id,
    output_hash: meta.output_hash,
    schema_hash: meta.schema_hash,
    rules_hash: meta.rules_hash,
    request_hash: meta.request_hash,
    verified_at: meta.verified_at,
    verifier_version: meta.verifier_version,
    enforce_rules: verdict.enforce_rules,
    strict_content_check: verdict.strict_content_check,
    errors: verdict.errors,
    errors_total: verdict.errors_total,
    errors_omitted: verdict.errors_omitted,
    errors_detail: verdict.errors_detail,
    errors_detail_total: verdict.errors_detail_total,
    errors_detail_omitted: verdict.errors_detail_omitted,
    flags: verdict.flags,
    flags_total: verdict.flags_total,
    flags_omitted: verdict.flags_omitted,
    hints: verdict.hints,
    hints_total: verdict.hints_total,
    hints_omitted: verdict.hints_omitted,
    schema_compliance: verdict.schema_compliance,
    integrity_checks: verdict.integrity_checks,
    overall: verdict.overall,
  };
}
