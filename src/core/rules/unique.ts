/**
 * @module Rule `unique` (docs/protocol.md#rules): the values at `field` are pairwise
 * distinct by JSON equality. Each repeat is reported at its own location,
 * naming where the value first occurred.
 */
import type { CheckFailure, RuleEvaluator } from './common.js';
import { missingField } from './common.js';
import type { Selected } from '../paths.js';
import { parsePath, pathValues, selectPath } from '../paths.js';
import { jsonKey } from '../json-equal.js';

export const unique: RuleEvaluator = (rule, output) => {
  const path = parsePath(rule.field);
  // Bare values first: locations (a second walk) are needed only when a value repeats.
  const values = pathValues(path, output);
  if (values.length === 0) return rule.if_present ? [] : [missingField(path)];
  const first = new Map<string, number>();
  const failures: CheckFailure[] = [];
  let located: Selected[] | undefined;
  for (let i = 0; i < values.length; i++) {
    const key = jsonKey(values[i]);
    const seen = first.get(key);
    if (seen === undefined) {
      first.set(key, i);
    } else {
      located ??= selectPath(path, output);
      const at = located[i].location;
      const was = located[seen].location;
      failures.push({
        path: at,
        expected: 'distinct values',
        found: `duplicate of ${was}`,
        message: `${at} repeats the value at ${was}`,
      });
    }
  }
  return failures;
};
