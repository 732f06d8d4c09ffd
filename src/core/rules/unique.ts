/**
 * @module Rule `unique` (SPEC §3.2): the values at `field` are pairwise
 * distinct by JSON equality. Each repeat is reported at its own location,
 * naming where the value first occurred.
 */
import type { CheckFailure, RuleEvaluator } from './common.js';
import { missingField, select } from './common.js';
import { jsonKey } from '../json-equal.js';

export const unique: RuleEvaluator = (rule, output) => {
  const { path, values } = select(rule.field, output);
  if (values.length === 0) return rule.if_present ? [] : [missingField(path)];
  const first = new Map<string, string>();
  const failures: CheckFailure[] = [];
  for (const s of values) {
    const key = jsonKey(s.value);
    const seen = first.get(key);
    if (seen === undefined) {
      first.set(key, s.location);
    } else {
      failures.push({
        path: s.location,
        expected: 'distinct values',
        found: `duplicate of ${seen}`,
        message: `${s.location} repeats the value at ${seen}`,
      });
    }
  }
  return failures;
};
