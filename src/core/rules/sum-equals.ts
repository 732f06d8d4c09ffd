/**
 * @module Rule `sum_equals` (SPEC §3.2): the numbers at `field` sum to the
 * single value at `equals_field`, or to the constant `equals`, within an
 * absolute `tolerance`.
 */
import type { RuleEvaluator, CheckFailure } from './common.js';
import { formatNumber, missingField, numbersOf, select, singleNumber } from './common.js';
import { displayPath } from '../paths.js';

/** Neumaier summation: a long list of cents must not drift by float error. */
function sum(values: number[]): number {
  let s = 0;
  let c = 0;
  for (const v of values) {
    const t = s + v;
    c += Math.abs(s) >= Math.abs(v) ? s - t + v : v - t + s;
    s = t;
  }
  return s + c;
}

export const sumEquals: RuleEvaluator = (rule, output) => {
  const failures: CheckFailure[] = [];
  const { path, values } = select(rule.field, output);
  if (values.length === 0) return rule.if_present ? [] : [missingField(path)];
  const nums = numbersOf(values, failures);
  const ref = singleNumber(rule.equals, rule.equals_field, output, failures);
  if (failures.length > 0 || ref === null) return failures;
  const total = sum(nums.map((n) => n.value));
  if (Math.abs(total - ref.value) <= rule.tolerance) return [];
  const within = rule.tolerance === 1e-9 ? '' : ` within ${formatNumber(rule.tolerance)}`;
  return [
    {
      path: displayPath(path),
      expected: `sum equals ${ref.label}${within}`,
      found: `sum ${formatNumber(total)}`,
      message: `values sum to ${formatNumber(total)}, expected ${ref.label}${within}`,
    },
  ];
};
