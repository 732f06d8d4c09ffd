/**
 * @module Rule `unique` (SPEC §3.2): the values at `field` are pairwise
 * distinct by JSON equality. Each repeat is reported at its own location,
 * naming where the value first occurred.
 */
import type { CheckFailure, RuleEvaluator } from './common.js';
import type { Selected } from '../paths.js';
import { missingField, select } from './common.js';
import { jsonKey } from '../json-equal.js';

export const unique: RuleEvaluator = (rule, output) => {
  const { path, values } = select(rule.field, output);
  if (values.length === 0) return rule.if_present ? [] : [missingField(path)];
  // Keeps the Selected, not its location: locations are formatted only for repeats.
  const first = new Map<string, Selected>();
  const failures: CheckFailure[] = [];
  for (const s of values) {
    const key = jsonKey(s.value);
    const seen = first.get(key);
    if (seen === undefined) {
      first.set(key, s);
    } else {
      failures.push({
        path: s.location,
        expected: 'distinct values',
        found: `duplicate of ${seen.location}`,
        message: `${s.location} repeats the value at ${seen.location}`,
      });
    }
  }
  return failures;
};
