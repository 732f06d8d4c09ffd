/**
 * @module Shared types of the verification core: the JSON value model, the
 * normalized request (docs/protocol.md#request, every default filled in) and the verdict (docs/protocol.md#checks, #response).
 * Types only, so every layer can import them without pulling code.
 */

/** A JSON value, as JSON.parse returns it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The type of a cross-field rule (docs/protocol.md#rules). */
export type RuleType = 'sum_equals' | 'gte' | 'lte' | 'exists_in' | 'unique';
export const RULE_TYPES: readonly RuleType[] = ['sum_equals', 'gte', 'lte', 'exists_in', 'unique'];

/** A rule with every default filled in (the form hashed into request_hash). */
export interface Rule {
  type: RuleType;
  field: string;
  equals_field: string | null;
  equals: number | null;
  other_field: string | null;
  value: number | null;
  in_field: string | null;
  values: Json[] | null;
  tolerance: number;
  if_present: boolean;
}

/** A bound with every default filled in. */
export interface Bound {
  min: number | null;
  max: number | null;
  if_present: boolean;
}

export type Detail = 'full' | 'compact';

/** The request after strict parsing and validation, defaults filled in (docs/protocol.md#request, #hashes). */
export interface VerificationRequest {
  task_id: string;
  agent_id: string | null;
  expected_schema: Json;
  submitted_output: Json;
  strict_content_check: boolean;
  /** null when absent or empty. */
  bounds: Record<string, Bound> | null;
  /** null when absent or empty. */
  rules: Rule[] | null;
  enforce_rules: boolean;
  detail: Detail;
  /**
   * Unknown schema keywords and formats are a 422 instead of warnings. Decides whether a
   * verdict is given at all, never what it says, so (like `detail`) it is not hashed.
   * The parser always sets it; absent means false.
   */
  strict_schema?: boolean;
}

/** What strict parsing found inside `submitted_output` (fed to the integrity checks, docs/protocol.md#integrity-checks). */
export interface OutputIntegrity {
  /** Concrete instance paths (`$.a[1].b`) of objects holding a duplicated key, with the key. */
  duplicateKeys: Array<{ path: string; key: string }>;
  /** Concrete instance paths of integers outside ±(2^53−1). */
  unsafeIntegers: string[];
}

/**
 * A parsed, validated request plus what hashing needs "exactly as supplied": what
 * parseVerificationRequest and validateRequestValue return and a verifier evaluates.
 *
 * @example
 * ```ts
 * import { parseVerificationRequest, type ParsedRequest } from 'agent-output-verifier';
 *
 * const parsed: ParsedRequest = parseVerificationRequest(requestText);
 * parsed.integrity.duplicateKeys; // duplicated keys found inside submitted_output
 * ```
 */
export interface ParsedRequest {
  request: VerificationRequest;
  /** `bounds` / `rules` exactly as supplied (null when absent), for rules_hash. */
  suppliedBounds: Json;
  suppliedRules: Json;
  integrity: OutputIntegrity;
}

/** A ratio of checks passed, with its counts. */
export interface Score {
  ratio: number;
  passed: number;
  total: number;
}

/** One failed check, located: what was expected and what was found. */
export interface ErrorDetail {
  check: string;
  path: string;
  expected: string;
  found: string;
  message: string;
}

/** A finding of the integrity and content checks (severity `warning` never blocks). */
export interface Flag {
  check: string;
  field: string;
  severity: 'error' | 'warning';
  detail: string;
}

export type HintSource = 'schema' | 'integrity' | 'content';

/** One RFC 6902 operation against `submitted_output` (paths are JSON Pointers into it). */
export type RepairOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'test'; path: string; value: unknown }
  | { op: 'move'; from: string; path: string }
  | { op: 'copy'; from: string; path: string };

/** One alternative of a candidate repair. */
export interface RepairOption {
  patch: RepairOperation[];
  note: string;
}

/**
 * A known fix of a failed check (docs/protocol.md#repairs): `determined` is the one fix that
 * makes the check pass; `candidate` lists alternatives, none preferred.
 */
export type Repair =
  | { certainty: 'determined'; patch: RepairOperation[]; note: string }
  | { certainty: 'candidate'; options: RepairOption[]; note: string };

/** How to fix one failure, with a machine-applicable repair when there is one (docs/repair.md). */
export interface Hint {
  source: HintSource;
  check: string;
  path: string;
  expected: string;
  found: string;
  /** Present only when a fix is known; never changes the verdict or a count. */
  repair?: Repair;
}

export type NextAction = Record<string, string | number>;

/**
 * The verdict: everything in the response that verification decides (docs/protocol.md#response).
 * The service adds verification_id, hashes, verified_at, verifier_version and the
 * signature blocks around it.
 *
 * @example
 * ```ts
 * import type { Verdict } from 'agent-output-verifier';
 *
 * function explain(verdict: Verdict): string {
 *   if (verdict.result === 'pass') return `pass (${verdict.overall.passed}/${verdict.overall.total})`;
 *   return `fail: ${verdict.blocking_checks.join(', ')}; ${verdict.errors.join('; ')}`;
 * }
 * ```
 */
export interface Verdict {
  result: 'pass' | 'fail';
  blocking_checks: string[];
  next_actions: NextAction[];
  task_id: string;
  agent_id: string | null;
  enforce_rules: boolean;
  strict_content_check: boolean;
  errors: string[];
  errors_total: number;
  errors_omitted: number;
  errors_detail: ErrorDetail[];
  errors_detail_total: number;
  errors_detail_omitted: number;
  flags: Flag[];
  flags_total: number;
  /** Flags of severity `warning` (never blocking), counted past the list cap; the compact form reports it as `summary.warnings`. */
  warnings_total: number;
  /** Unknown keywords and formats in the schema (each checks nothing), counted past the list cap; 0 when none. */
  schema_warnings?: number;
  flags_omitted: number;
  hints: Hint[];
  hints_total: number;
  hints_omitted: number;
  schema_compliance: Score;
  integrity_checks: Score;
  overall: Score;
}
