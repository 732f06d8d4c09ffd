/**
 * @module Rule `sum_equals` (SPEC §3.2): the numbers at `field` sum to the
 * single value at `equals_field`, or to the constant `equals`, within an
 * absolute `tolerance`.
 */
import type { RuleEvaluator, CheckFailure } from './common.js';
import { formatNumber, missingField, notANumberAt, refLabel, singleNumber } from './common.js';
import { displayPath, locationOf, parsePath, visitPath } from '../paths.js';

export const sumEquals: RuleEvaluator = (rule, output) => {
  const failures: CheckFailure[] = [];
  const path = parsePath(rule.field);
  // Neumaier summation: a long list of cents must not drift by float error.
  let sum = 0;
  let comp = 0;
  const count = visitPath(path, output, (v, exp) => {
    if (typeof v !== 'number') {
      failures.push(notANumberAt(locationOf(path, exp), v));
      return;
    }
    const t = sum + v;
    comp += Math.abs(sum) >= Math.abs(v) ? sum - t + v : v - t + sum;
    sum = t;
  });
  if (count === 0) return rule.if_present ? [] : [missingField(path)];
  const ref = singleNumber(rule.equals, rule.equals_field, output, failures);
  if (failures.length > 0 || ref === null) return failures;
  const total = sum + comp;
  if (Math.abs(total - ref.value) <= rule.tolerance) return [];
  const within = rule.tolerance === 1e-9 ? '' : ` within ${formatNumber(rule.tolerance)}`;
  return [
    {
      path: displayPath(path),
      expected: `sum equals ${refLabel(ref)}${within}`,
      found: `sum ${formatNumber(total)}`,
      message: `values sum to ${formatNumber(total)}, expected ${refLabel(ref)}${within}`,
    },
  ];
};
