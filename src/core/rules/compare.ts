/**
 * @module The comparison shared by `gte` and `lte` (docs/protocol.md#rules): every number
 * at `field` against the constant `value` or the value at `other_field`. When
 * both paths expand over the same array (a common `[]` prefix) the values are
 * paired element by element; otherwise `other_field` must yield one value.
 * `tolerance` is absolute and applies in the lenient direction.
 */
import type { Json, Rule } from '../types.js';
import type { CheckFailure, RuleEvaluator } from './common.js';
import { describeType, formatNumber, missingField, notANumber, notANumberAt, numbersOf, select, refLabel, singleNumber } from './common.js';
import type { Selected } from '../paths.js';
import { locationOf, parsePath, selectPath, sharedExpansions, visitPath } from '../paths.js';

type Op = 'gte' | 'lte';

const SYMBOL: Record<Op, string> = { gte: '>=', lte: '<=' };

function holds(op: Op, v: number, ref: number, tolerance: number): boolean {
  return op === 'gte' ? v >= ref - tolerance : v <= ref + tolerance;
}

function violation(op: Op, location: string, value: number, label: string): CheckFailure {
  const v = formatNumber(value);
  return {
    path: location,
    expected: `${SYMBOL[op]} ${label}`,
    found: `value ${v}`,
    message: `${location} is ${v}, expected ${SYMBOL[op]} ${label}`,
  };
}

/**
 * Which element of the shared arrays a value belongs to: its first `shared`
 * expansion indices. One index (the common case) is its own key; more are
 * joined without the intermediate array of slice + join.
 */
function groupKey(expansion: readonly number[], shared: number): number | string {
  if (shared === 1) return expansion[0];
  let key = String(expansion[0]);
  for (let i = 1; i < shared; i++) key += `,${expansion[i]}`;
  return key;
}

function elementWise(op: Op, rule: Rule, nums: Array<Selected & { value: number }>, output: Json, shared: number, failures: CheckFailure[]): void {
  const other = select(rule.other_field as string, output);
  const groups = new Map<number | string, Selected[]>();
  for (const s of other.values) {
    const key = groupKey(s.expansion, shared);
    const g = groups.get(key);
    if (g) g.push(s);
    else groups.set(key, [s]);
  }
  for (const s of nums) {
    const refs = groups.get(groupKey(s.expansion, shared));
    if (!refs) {
      failures.push({
        path: s.location,
        expected: `a value at '${rule.other_field}' for the same element`,
        found: 'missing',
        message: `${s.location} has no counterpart at '${rule.other_field}'`,
      });
      continue;
    }
    for (const r of refs) {
      if (typeof r.value !== 'number') {
        failures.push({ ...notANumber(r), message: `reference ${r.location} holds ${describeType(r.value)}, expected a number` });
      } else if (!holds(op, s.value, r.value, rule.tolerance)) {
        failures.push(violation(op, s.location, s.value, `${r.location} (${formatNumber(r.value)})`));
      }
    }
  }
}

export function createComparisonRule(op: Op): RuleEvaluator {
  return (rule, output) => {
    const path = parsePath(rule.field);
    if (rule.other_field !== null) {
      const shared = sharedExpansions(path, parsePath(rule.other_field));
      if (shared > 0) {
        const failures: CheckFailure[] = [];
        const values = selectPath(path, output);
        if (values.length === 0) return rule.if_present ? [] : [missingField(path)];
        elementWise(op, rule, numbersOf(values, failures), output, shared, failures);
        return failures;
      }
    }
    const refFailures: CheckFailure[] = [];
    const ref = singleNumber(rule.value, rule.other_field, output, refFailures);
    const failures: CheckFailure[] = [];
    const count = visitPath(path, output, (v, exp) => {
      if (typeof v !== 'number') failures.push(notANumberAt(locationOf(path, exp), v));
      else if (ref !== null && !holds(op, v, ref.value, rule.tolerance)) failures.push(violation(op, locationOf(path, exp), v, refLabel(ref)));
    });
    if (count === 0) return rule.if_present ? [] : [missingField(path)];
    return failures.concat(refFailures);
  };
}
