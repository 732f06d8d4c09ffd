/**
 * @module Rule `sum_equals` (docs/protocol.md#rules): the numbers at `field` sum to the
 * single value at `equals_field`, or to the constant `equals`, within an
 * absolute `tolerance`.
 */
import type { RuleEvaluator, CheckFailure } from './common.js';
import { formatNumber, missingField, notANumberAt, refLabel, singleNumber } from './common.js';
import { DEFAULT_TOLERANCE } from '../request-rules.js';
import { displayPath, locationOf, parsePath, selectPath, sumPath, visitPath } from '../paths.js';
import { sumEqualsRepair } from '../repairs.js';

export const sumEquals: RuleEvaluator = (rule, output) => {
  const path = parsePath(rule.field);
  // Neumaier summation (in sumPath): a long list of cents must not drift by float error.
  const found = sumPath(path, output);
  if (found.count === 0) return rule.if_present ? [] : [missingField(path)];
  const failures: CheckFailure[] = [];
  if (found.nonNumbers > 0) {
    // Rare: a second walk names every non-number at its location, in document order.
    visitPath(path, output, (v, exp) => {
      if (typeof v !== 'number') failures.push(notANumberAt(locationOf(path, exp), v));
    });
  }
  const ref = singleNumber(rule.equals, rule.equals_field, output, failures);
  if (failures.length > 0 || ref === null) return failures;
  const total = found.total;
  if (Math.abs(total - ref.value) <= rule.tolerance) return [];
  // Each number is formatted once (shortest round-trip printing is the costly part).
  const within = rule.tolerance === DEFAULT_TOLERANCE ? '' : ` within ${formatNumber(rule.tolerance)}`;
  const expected = `${refLabel(ref)}${within}`;
  const sum = formatNumber(total);
  const failure: CheckFailure = {
    path: displayPath(path),
    expected: `sum equals ${expected}`,
    found: `sum ${sum}`,
    message: `values sum to ${sum}, expected ${expected}`,
  };
  // Only on failure: the values again, with their locations, for the patches.
  const lines = selectPath(path, output) as Array<{ location: string; value: number }>;
  const refLocation = rule.equals_field === null ? null : selectPath(parsePath(rule.equals_field), output)[0]?.location ?? null;
  const repair = sumEqualsRepair(lines, { value: ref.value, location: refLocation });
  if (repair !== undefined) failure.repair = repair;
  return [failure];
};
