/**
 * @module Bounds (SPEC §3.3): every value at the path is a number within
 * [min, max], inclusive. Missing fails unless `if_present`. One `bounds:range`
 * check per entry.
 */
import type { Bound, Json } from './types.js';
import type { CheckFailure, CheckOutcome } from './check-outcome.js';
import { formatNumber, missingField, notANumber, select } from './rules/common.js';

export const BOUNDS_CHECK = 'bounds:range';

function rangeText(b: Bound): string {
  if (b.min !== null && b.max !== null) return `between ${formatNumber(b.min)} and ${formatNumber(b.max)}`;
  return b.min !== null ? `>= ${formatNumber(b.min)}` : `<= ${formatNumber(b.max as number)}`;
}

export function evaluateBound(path: string, bound: Bound, output: Json): CheckFailure[] {
  const { path: parsed, values } = select(path, output);
  if (values.length === 0) return bound.if_present ? [] : [missingField(parsed)];
  const failures: CheckFailure[] = [];
  const expected = rangeText(bound);
  for (const s of values) {
    if (typeof s.value !== 'number') {
      failures.push(notANumber(s));
      continue;
    }
    const v = s.value;
    const below = bound.min !== null && v < bound.min;
    const above = bound.max !== null && v > bound.max;
    if (below || above) {
      const side = below ? `below min ${formatNumber(bound.min as number)}` : `above max ${formatNumber(bound.max as number)}`;
      failures.push({ path: s.location, expected, found: `value ${formatNumber(v)}`, message: `${s.location} is ${formatNumber(v)}, ${side}` });
    }
  }
  return failures;
}

/** One outcome per bound entry, in the order supplied. */
export function evaluateBounds(bounds: Record<string, Bound> | null, output: Json): CheckOutcome[] {
  if (!bounds) return [];
  return Object.keys(bounds).map((path) => ({
    check: BOUNDS_CHECK,
    kind: 'gated' as const,
    field: path,
    failures: evaluateBound(path, bounds[path], output),
  }));
}
