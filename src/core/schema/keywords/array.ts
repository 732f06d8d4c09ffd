/**
 * @module Array assertions: `minItems`, `maxItems`, `uniqueItems` (one check
 * each; the first two one inline test in generated code) and `contains` (one
 * check; with `minContains` and `maxContains`, one more each).
 */
import type { Json } from '../../types.js';
import { applyAt, countCheck, isCount, type KeywordCode, type KeywordDefinition } from '../keyword.js';
import { Check, itemsText, type Annotations, type EvalContext, type Primitive } from '../runtime.js';
import { sizeLimit, type Measure } from './size-limit.js';

const length = (data: Json): number => (data as Json[]).length;
const ITEMS: Measure = { group: 'array', noun: 'items', text: itemsText, size: length, found: length };

/** One inline test in generated code. */
function itemsCode(op: '>=' | '<='): KeywordCode {
  return {
    emit(c) {
      c.check(`${c.data}.length ${op} ${c.value as number}`);
    },
  };
}

export const minItemsKeyword = sizeLimit('minItems', '>=', ITEMS, itemsCode('>='));
export const maxItemsKeyword = sizeLimit('maxItems', '<=', ITEMS, itemsCode('<='));

/** A string equal for JSON-equal values (object keys sorted, numbers by value). */
function canonical(v: Json): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
}

/**
 * Index of the first element equal to an earlier one, or -1. Linear in the array
 * size (hashing, not pairwise); charges its work (elements and canonical text) as steps.
 */
function firstDuplicate(a: Json[], ctx: EvalContext): number {
  ctx.steps += a.length;
  let prim: Set<unknown> | null = null;
  let complex: Set<string> | null = null;
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (typeof v !== 'object' || v === null) {
      prim ??= new Set();
      if (prim.has(v)) return i;
      prim.add(v);
    } else {
      complex ??= new Set();
      const key = canonical(v);
      ctx.steps += key.length >> 3;
      if (complex.has(key)) return i;
      complex.add(key);
    }
  }
  return -1;
}

export const uniqueItemsKeyword: KeywordDefinition = {
  keyword: 'uniqueItems',
  group: 'array',
  compile(k) {
    if (typeof k.value !== 'boolean') return k.invalid('uniqueItems must be a boolean');
    if (k.value === false) return null;
    const check = new Check('uniqueItems', k.schemaPath, 'unique items', 'have unique items', (i) => `duplicate at index ${i}`);
    return (data, ctx) => {
      const dup = firstDuplicate(data as Json[], ctx);
      countCheck(ctx, dup < 0, check, dup);
      return dup < 0;
    };
  },
};

const matchingText = (n: Primitive): string => `${n as number} matching`;

export const containsKeyword: KeywordDefinition = {
  keyword: 'contains',
  group: 'array',
  compile(k) {
    const sub = k.sub(k.value, []);
    const newer = k.dialect.version !== 7;
    const minV = newer && k.dialect.keywords.has('minContains') ? k.schema.minContains : undefined;
    const maxV = newer && k.dialect.keywords.has('maxContains') ? k.schema.maxContains : undefined;
    if (minV !== undefined && !isCount(minV)) return k.invalid('minContains must be a non-negative integer');
    if (maxV !== undefined && !isCount(maxV)) return k.invalid('maxContains must be a non-negative integer');
    const min = minV ?? 1;
    const max = maxV ?? Infinity;
    // `contains` itself asks for one match, or none when minContains is 0; minContains and
    // maxContains are checks of their own, so `minContains: 2` with one match fails minContains.
    const need = min === 0 ? 0 : 1;
    const annotate = k.dialect.version === 2020;
    const matching = (keyword: string, path: string, expected: string): Check => new Check(keyword, path, expected, `contain ${expected}`, matchingText);
    const check = matching('contains', k.schemaPath, need === 0 ? 'any number of items matching contains' : 'at least 1 item matching contains');
    const minCheck = matching('minContains', k.pathOf([], 'minContains'), `at least ${min} ${min === 1 ? 'item' : 'items'} matching contains`);
    const maxCheck = matching('maxContains', k.pathOf([], 'maxContains'), `at most ${max} items matching contains`);
    const hasMin = minV !== undefined;
    return (data, ctx: EvalContext, ev: Annotations | null) => {
      const a = data as Json[];
      let n = 0;
      const full = ev !== null || max !== Infinity;
      ctx.silent++;
      for (let i = 0; i < a.length; i++) {
        if (applyAt(sub, a[i], i, ctx)) {
          n++;
          if (annotate && ev !== null) ev.addItem(i);
          if (!full && n >= min) break;
        }
      }
      ctx.silent--;
      countCheck(ctx, n >= need, check, n);
      if (hasMin) countCheck(ctx, n >= min, minCheck, n);
      if (max !== Infinity) countCheck(ctx, n <= max, maxCheck, n);
      return n >= min && n <= max;
    };
  },
};
