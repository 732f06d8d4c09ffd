/**
 * @module The result of one integrity-side check (a rule, a bound entry, a
 * built-in integrity check or a content check) before the verdict decides
 * whether it blocks. One outcome = one counted check (docs/protocol.md#integrity-checks).
 */
import type { CheckFailure } from './rules/common.js';

export type { CheckFailure } from './rules/common.js';

/**
 * `gated`: a rule or bound — blocking only with `enforce_rules` (docs/protocol.md#result).
 * `integrity`: a built-in integrity check — always blocking.
 * `content`: a strict content check — blocking when it runs.
 */
export type CheckKind = 'gated' | 'integrity' | 'content';

export interface CheckOutcome {
  /** Check id, e.g. `consistency:sum_equals`, `bounds:range`, `integrity:unique_keys`. */
  check: string;
  kind: CheckKind;
  /** What the check is about, as written (`line_items[].line_total`) or `$` for the whole output. */
  field: string;
  /** Empty when the check passed. */
  failures: CheckFailure[];
}
