/** @module `multipleOf` is exact on decimal values: examples and a property test on generated near-misses. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decimalOf, isMultipleOf } from './number.js';

describe('multipleOf on decimal values', () => {
  it('fails the near-misses a floating tolerance lets through', () => {
    expect(isMultipleOf(1.000000000001, 1)).toBe(false);
    expect(isMultipleOf(1e-13, 1)).toBe(false);
    expect(isMultipleOf(10.00000000001, 0.01)).toBe(false);
    expect(isMultipleOf(0.7, 1e308)).toBe(false);
    expect(isMultipleOf(0.30000000000000004, 0.1)).toBe(false);
  });

  it('passes exact multiples, decimal and beyond 2^53', () => {
    expect(isMultipleOf(0.0075, 0.0001)).toBe(true);
    expect(isMultipleOf(19.99, 0.01)).toBe(true);
    expect(isMultipleOf(0.3, 0.1)).toBe(true);
    expect(isMultipleOf(-4.5, 1.5)).toBe(true);
    expect(isMultipleOf(0, 0.7)).toBe(true);
    expect(isMultipleOf(2 ** 60, 2)).toBe(true);
    expect(isMultipleOf(1e300, 1e-5)).toBe(true);
    expect(isMultipleOf(1e308, 1e308)).toBe(true);
    expect(isMultipleOf(9007199254740994, 2)).toBe(true);
    expect(isMultipleOf(2 ** 60, 3)).toBe(false);
    expect(isMultipleOf(1e21, 7)).toBe(false);
  });

  it('reads the shortest round-trip decimal form', () => {
    expect(decimalOf(10.5)).toEqual({ m: 105n, e: -1 });
    expect(decimalOf(1e-7)).toEqual({ m: 1n, e: -7 });
    expect(decimalOf(-1.5e300)).toEqual({ m: -15n, e: 299 });
    expect(decimalOf(120)).toEqual({ m: 120n, e: 0 });
  });

  it('agrees with exact decimal arithmetic on generated near-misses', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 999_999 }), // divisor digits
        fc.integer({ min: -12, max: 12 }), // divisor exponent
        fc.integer({ min: 0, max: 999_999 }), // quotient
        fc.integer({ min: 0, max: 6 }), // extra decimal places of the miss
        fc.constantFrom(-1n, 0n, 1n), // below, exact, above
        fc.boolean(),
        (b, q, k, j, delta, negative) => {
          const scale = 10n ** BigInt(j);
          const nMant = BigInt(k) * BigInt(b) * scale + delta;
          if (nMant < 0n) return;
          // at most 15 significant digits: the double holds exactly this decimal's shortest form
          if (nMant.toString().length > 15) return;
          const n = Number(`${negative ? '-' : ''}${nMant}e${q - j}`);
          const m = Number(`${b}e${q}`);
          const exact = nMant % (BigInt(b) * scale) === 0n;
          expect(isMultipleOf(n, m), `${n} multipleOf ${m}`).toBe(exact);
        },
      ),
      { numRuns: 20_000 },
    );
  });
});
