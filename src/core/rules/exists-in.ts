/**
 * @module Rule `exists_in` (docs/protocol.md#rules): every value at `field` occurs among the
 * values at `in_field` or in the constant list `values`, by JSON equality
 * (key order of objects does not matter). Values are described, not echoed.
 */
import type { CheckFailure, RuleEvaluator } from './common.js';
import { describeType, missingField } from './common.js';
import type { Selected } from '../paths.js';
import { displayPath, parsePath, pathValues, selectPath } from '../paths.js';
import { jsonKey } from '../json-equal.js';

export const existsIn: RuleEvaluator = (rule, output) => {
  const path = parsePath(rule.field);
  // Bare values first: locations (a second walk) are needed only for values not allowed.
  const values = pathValues(path, output);
  if (values.length === 0) return rule.if_present ? [] : [missingField(path)];
  let allowed: Set<string>;
  let label: string;
  if (rule.in_field !== null) {
    const refPath = parsePath(rule.in_field);
    const refValues = pathValues(refPath, output);
    if (refValues.length === 0) {
      return [
        {
          path: displayPath(refPath),
          expected: 'at least one value to look up',
          found: 'missing',
          message: `reference '${rule.in_field}' is missing`,
        },
      ];
    }
    allowed = new Set(refValues.map(jsonKey));
    label = `one of the values at '${rule.in_field}'`;
  } else {
    const list = rule.values ?? [];
    allowed = new Set(list.map(jsonKey));
    label = `one of the ${list.length} allowed values`;
  }
  const failures: CheckFailure[] = [];
  let located: Selected[] | undefined;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (!allowed.has(jsonKey(value))) {
      located ??= selectPath(path, output);
      const at = located[i].location;
      const found = `a value not among them (${describeType(value)})`;
      failures.push({ path: at, expected: label, found, message: `${at} is not ${label}` });
    }
  }
  return failures;
};
