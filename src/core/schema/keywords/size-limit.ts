/**
 * @module A limit on the size of an instance (`minItems`/`maxItems`,
 * `minProperties`/`maxProperties`): one check that the size compares to the
 * keyword's count, found as the size. `minLength`/`maxLength` are not one of
 * these: they count code points, and bound that count by the UTF-16 length first.
 */
import type { Json } from '../../types.js';
import { countOf, valueReporter, verdict, type KeywordCode, type KeywordDefinition, type KeywordGroup } from '../keyword.js';
import { Check, withReporter, type EvalContext, type FoundText } from '../runtime.js';

/** What a size limit measures: the items of an array, the properties of an object. */
export interface Measure {
  readonly group: KeywordGroup;
  /** What is counted, as the expected text says it: `>= 2 items`. */
  readonly noun: string;
  readonly text: FoundText;
  /** The size of an instance of the group, charging to `ctx` what reading it costs. */
  readonly size: (data: Json, ctx: EvalContext) => number;
  /** The size again, for a failure's found value (charged already by `size`). */
  readonly found: (data: Json) => number;
}

/** `keyword` (a minimum with `>=`, a maximum with `<=`) on what `measure` counts; `code` writes its generated code. */
export function sizeLimit(keyword: string, op: '>=' | '<=', measure: Measure, code?: KeywordCode): KeywordDefinition {
  const size = measure.size;
  return {
    keyword,
    group: measure.group,
    compile(k) {
      const limit = countOf(k);
      const expected = `${op} ${limit} ${measure.noun}`;
      const reporter = valueReporter(new Check(keyword, k.schemaPath, expected, `have ${expected}`, measure.text), measure.found);
      if (op === '>=') return withReporter((data, ctx) => verdict(size(data, ctx) >= limit, data, ctx, reporter), reporter);
      return withReporter((data, ctx) => verdict(size(data, ctx) <= limit, data, ctx, reporter), reporter);
    },
    code,
  };
}
