/**
 * @module Bounds (docs/protocol.md#bounds): every value at the path is a number within
 * [min, max], inclusive. Missing fails unless `if_present`. One `bounds:range`
 * check per entry.
 */
import type { Bound, Json } from './types.js';
import type { CheckFailure, CheckOutcome } from './check-outcome.js';
import { formatNumber, missingField, notANumberAt } from './rules/common.js';
import { locationOf, parsePath, visitPath } from './paths.js';

const BOUNDS_CHECK = 'bounds:range';

function rangeText(b: Bound): string {
  if (b.min !== null && b.max !== null) return `between ${formatNumber(b.min)} and ${formatNumber(b.max)}`;
  return b.min !== null ? `>= ${formatNumber(b.min)}` : `<= ${formatNumber(b.max as number)}`;
}

function evaluateBound(path: string, bound: Bound, output: Json): CheckFailure[] {
  const parsed = parsePath(path);
  const failures: CheckFailure[] = [];
  const count = visitPath(parsed, output, (v, exp) => {
    if (typeof v !== 'number') {
      failures.push(notANumberAt(locationOf(parsed, exp), v));
      return;
    }
    const below = bound.min !== null && v < bound.min;
    const above = bound.max !== null && v > bound.max;
    if (below || above) {
      const at = locationOf(parsed, exp);
      const side = below ? `below min ${formatNumber(bound.min as number)}` : `above max ${formatNumber(bound.max as number)}`;
      failures.push({ path: at, expected: rangeText(bound), found: `value ${formatNumber(v)}`, message: `${at} is ${formatNumber(v)}, ${side}` });
    }
  });
  if (count === 0) return bound.if_present ? [] : [missingField(parsed)];
  return failures;
}

/** One outcome per bound entry, in the order supplied, appended to `outcomes` (the verifier's list). */
export function pushBoundOutcomes(bounds: Record<string, Bound>, output: Json, outcomes: CheckOutcome[]): void {
  const paths = Object.keys(bounds);
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i];
    outcomes.push({ check: BOUNDS_CHECK, kind: 'gated', field: path, failures: evaluateBound(path, bounds[path], output) });
  }
}
