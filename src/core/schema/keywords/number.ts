/**
 * @module Numeric assertions: `minimum`, `maximum`, `exclusiveMinimum`,
 * `exclusiveMaximum`, `multipleOf`. They apply to numbers only (the compiler
 * runs them only for numeric instances), one check each.
 */
import type { KeywordDefinition } from '../keyword.js';
import { report } from '../runtime.js';

type Cmp = (a: number, b: number) => boolean;

function bound(keyword: string, op: string, cmp: Cmp): KeywordDefinition {
  return {
    keyword,
    group: 'number',
    compile(k) {
      if (typeof k.value !== 'number') return k.invalid(`${keyword} must be a number`);
      const limit = k.value;
      const sp = k.schemaPath;
      const expected = `${op} ${limit}`;
      return (data, ctx) => {
        const ok = cmp(data as number, limit);
        if (ok) {
          if (ctx.silent === 0) { ctx.passed++; ctx.total++; }
        } else if (ctx.silent === 0) report(ctx, keyword, sp, expected, String(data), `be ${expected}`);
        return ok;
      };
    },
  };
}

export const minimumKeyword = bound('minimum', '>=', (a, b) => a >= b);
export const maximumKeyword = bound('maximum', '<=', (a, b) => a <= b);
export const exclusiveMinimumKeyword = bound('exclusiveMinimum', '>', (a, b) => a > b);
export const exclusiveMaximumKeyword = bound('exclusiveMaximum', '<', (a, b) => a < b);

/** Exact for integers; for decimals, tolerant of binary floating-point error (0.0075 is a multiple of 0.0001). */
export function isMultipleOf(n: number, m: number): boolean {
  if (Number.isInteger(n) && Number.isInteger(m)) return n % m === 0;
  const q = n / m;
  // n / m overflows for huge n: an integer is still a multiple of 1/k
  if (!Number.isFinite(q)) return Number.isInteger(n) && Number.isInteger(1 / m);
  if (Number.isInteger(q)) return true;
  const r = Math.round(q);
  return Math.abs(q - r) <= Math.abs(q) * 1e-12 + 1e-12 && Number.isSafeInteger(r);
}

export const multipleOfKeyword: KeywordDefinition = {
  keyword: 'multipleOf',
  group: 'number',
  compile(k) {
    if (typeof k.value !== 'number' || !(k.value > 0)) return k.invalid('multipleOf must be a number > 0');
    const m = k.value;
    const sp = k.schemaPath;
    const expected = `multiple of ${m}`;
    return (data, ctx) => {
      const ok = isMultipleOf(data as number, m);
      if (ok) {
        if (ctx.silent === 0) { ctx.passed++; ctx.total++; }
      } else if (ctx.silent === 0) report(ctx, 'multipleOf', sp, expected, String(data), `be a ${expected}`);
      return ok;
    };
  },
};
