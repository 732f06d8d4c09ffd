/**
 * @module Numeric assertions: `minimum`, `maximum`, `exclusiveMinimum`,
 * `exclusiveMaximum`, `multipleOf`. They apply to numbers only (the compiler
 * runs them only for numeric instances), one check each, and each is one
 * inline test in generated code.
 */
import { valueReporter, verdict, type KeywordDefinition } from '../keyword.js';
import { Check, numberText, withReporter } from '../runtime.js';

type Cmp = (a: number, b: number) => boolean;

function bound(keyword: string, op: string, cmp: Cmp): KeywordDefinition {
  return {
    keyword,
    group: 'number',
    compile(k) {
      if (typeof k.value !== 'number') return k.invalid(`${keyword} must be a number`);
      const limit = k.value;
      const expected = `${op} ${limit}`;
      const reporter = valueReporter(new Check(keyword, k.schemaPath, expected, `be ${expected}`, numberText));
      return withReporter((data, ctx) => verdict(cmp(data as number, limit), data, ctx, reporter), reporter);
    },
    code: {
      emit(c) {
        c.check(`${c.data} ${op} ${c.value as number}`);
      },
    },
  };
}

export const minimumKeyword = bound('minimum', '>=', (a, b) => a >= b);
export const maximumKeyword = bound('maximum', '<=', (a, b) => a <= b);
export const exclusiveMinimumKeyword = bound('exclusiveMinimum', '>', (a, b) => a > b);
export const exclusiveMaximumKeyword = bound('exclusiveMaximum', '<', (a, b) => a < b);

/** A finite double as M × 10^E, from its shortest round-trip decimal form (what JSON wrote). */
export function decimalOf(x: number): { m: bigint; e: number } {
  const s = String(Math.abs(x));
  const k = s.indexOf('e');
  const digits = k < 0 ? s : s.slice(0, k);
  let e = k < 0 ? 0 : Number(s.slice(k + 1));
  const dot = digits.indexOf('.');
  let int = digits;
  if (dot >= 0) {
    int = digits.slice(0, dot) + digits.slice(dot + 1);
    e -= digits.length - dot - 1;
  }
  let m = BigInt(int);
  if (x < 0) m = -m;
  return { m, e };
}

const TEN = 10n;

/**
 * `multipleOf` with no tolerance: whether n / m is an integer, computed on the
 * decimal values (scaled to integers with BigInt), so 1.000000000001 is not a
 * multiple of 1 and 9007199254740993-sized multiples beyond 2^53 are judged exactly.
 * The closure and the generated code both call this one test.
 */
export function multipleOfTest(m: number): (n: number) => boolean {
  const dm = decimalOf(m);
  const mInt = Number.isSafeInteger(m);
  // m = M / 10^k with M below 10^15 and k >= 0: an n with at most k decimals is r / 10^k,
  // exact in doubles. Only a divisor written with decimals (E <= 0) has that form: for
  // M × 10^E with E > 0 (1e21, 2e300) the exponent is no scale but part of the value.
  const k = -dm.e;
  const scale = 10 ** k;
  const M = Number(dm.m);
  const fast = !mInt && dm.e <= 0 && k <= 15 && Math.abs(M) < 1e15;
  return (n) => {
    // safe integers: the double arithmetic is exact
    if (mInt && Number.isSafeInteger(n)) return n % m === 0;
    // a multiple of an integer is an integer
    if (mInt && !Number.isInteger(n)) return false;
    if (n === 0) return true;
    // Shortest round-trip decimals keep the order of the doubles they stand for (each lies
    // in its own double's rounding interval), so |n| < m as doubles means as decimals too,
    // and a nonzero multiple is at least m.
    if (n < m && n > -m) return false;
    if (fast) {
      const r = Math.round(n * scale);
      // Decimals of at most 15 significant digits round-trip through doubles uniquely, so
      // r / 10^k is n's own decimal value exactly when it converts back to n.
      if (Math.abs(r) < 1e15 && r / scale === n) return r % M === 0;
    }
    const dn = decimalOf(n);
    const e = dn.e < dm.e ? dn.e : dm.e;
    const a = dn.e === e ? dn.m : dn.m * TEN ** BigInt(dn.e - e);
    const b = dm.e === e ? dm.m : dm.m * TEN ** BigInt(dm.e - e);
    return a % b === 0n;
  };
}

/** One-off form of multipleOfTest. */
export function isMultipleOf(n: number, m: number): boolean {
  return multipleOfTest(m)(n);
}

export const multipleOfKeyword: KeywordDefinition = {
  keyword: 'multipleOf',
  group: 'number',
  compile(k) {
    if (typeof k.value !== 'number' || !(k.value > 0)) return k.invalid('multipleOf must be a number > 0');
    const expected = `multiple of ${k.value}`;
    const test = multipleOfTest(k.value);
    const reporter = valueReporter(new Check('multipleOf', k.schemaPath, expected, `be a ${expected}`, numberText));
    return withReporter((data, ctx) => verdict(test(data as number), data, ctx, reporter), reporter);
  },
  code: {
    emit(c) {
      c.check(`${c.constant(multipleOfTest(c.value as number))}(${c.data})`);
    },
  },
};
