/**
 * @module Rule `exists_in` (SPEC §3.2): every value at `field` occurs among the
 * values at `in_field` or in the constant list `values`, by JSON equality
 * (key order of objects does not matter). Values are described, not echoed.
 */
import type { CheckFailure, RuleEvaluator } from './common.js';
import { describeType, missingField, select } from './common.js';
import { displayPath } from '../paths.js';
import { jsonKey } from '../json-equal.js';

export const existsIn: RuleEvaluator = (rule, output) => {
  const { path, values } = select(rule.field, output);
  if (values.length === 0) return rule.if_present ? [] : [missingField(path)];
  let allowed: Set<string>;
  let label: string;
  if (rule.in_field !== null) {
    const ref = select(rule.in_field, output);
    if (ref.values.length === 0) {
      return [
        {
          path: displayPath(ref.path),
          expected: 'at least one value to look up',
          found: 'missing',
          message: `reference '${rule.in_field}' is missing`,
        },
      ];
    }
    allowed = new Set(ref.values.map((s) => jsonKey(s.value)));
    label = `one of the values at '${rule.in_field}'`;
  } else {
    const list = rule.values ?? [];
    allowed = new Set(list.map(jsonKey));
    label = `one of the ${list.length} allowed values`;
  }
  const failures: CheckFailure[] = [];
  for (const s of values) {
    if (!allowed.has(jsonKey(s.value))) {
      const found = `a value not among them (${describeType(s.value)})`;
      failures.push({ path: s.location, expected: label, found, message: `${s.location} is not ${label}` });
    }
  }
  return failures;
};
