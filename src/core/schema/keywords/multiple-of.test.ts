/**
 * @module `multipleOf` against exact decimal arithmetic over the whole double range, on
 * every evaluation path: the closures, the first (cold) evaluation of an engine that
 * generates code, its later (hot) evaluations once code is generated, and the generated
 * function itself. The reference reads each number's shortest round-trip literal
 * (`String(x)`) into a BigInt mantissa and a power-of-ten exponent, nothing shared with
 * the implementation.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Json } from '../../types.js';
import { createSchemaEngine } from '../index.js';
import { Compiler } from '../compiler.js';
import { DIALECT_2020 } from '../dialects.js';
import { DEFAULT_WORK_LIMITS } from '../engine.js';
import { EvalContext, type Validate } from '../runtime.js';

/** `String(x)` as digits × 10^exp, e.g. `-1.5e-7` → -15 × 10^-8. */
function literal(x: number): { digits: bigint; exp: number } {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (match === null) throw new Error(`not a finite number literal: ${String(x)}`);
  const [, sign, int, frac = '', exp = '0'] = match;
  const digits = BigInt(int + frac);
  return { digits: sign === '-' ? -digits : digits, exp: Number(exp) - frac.length };
}

/** n / m is an integer, both read as the decimals their literals write. */
function exactMultiple(n: number, m: number): boolean {
  const a = literal(n);
  const b = literal(m);
  // n / m = (a.digits / b.digits) × 10^(a.exp − b.exp)
  const shift = a.exp - b.exp;
  const numerator = shift >= 0 ? a.digits * 10n ** BigInt(shift) : a.digits;
  const denominator = shift >= 0 ? b.digits : b.digits * 10n ** BigInt(-shift);
  return numerator % denominator === 0n;
}

const positive = (x: number): boolean => Number.isFinite(x) && x > 0;

/** Positive doubles of every kind a schema or an output can write. */
const magnitude: fc.Arbitrary<number> = fc.oneof(
  // any double (fast-check spreads these over the exponents, subnormals included)
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(Math.abs).filter(positive),
  // M × 10^E with a short M, from 5e-324 up to 1e308 (1e21, 2e300, 7e-310…)
  fc.tuple(fc.integer({ min: 1, max: 99 }), fc.integer({ min: -325, max: 308 })).map(([m, e]) => Number(`${m}e${e}`)).filter(positive),
  // M × 10^E with up to 17 significant digits
  fc.tuple(fc.bigInt({ min: 1n, max: 10n ** 17n - 1n }), fc.integer({ min: -340, max: 300 })).map(([m, e]) => Number(`${m}e${e}`)).filter(positive),
  // subnormals: multiples of the smallest double
  fc.integer({ min: 1, max: 2 ** 52 - 1 }).map((i) => i * Number.MIN_VALUE),
  // integers: small, up to 2^53, beyond 2^53
  fc.integer({ min: 1, max: 1_000_000 }),
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 1023n }).map(Number),
  // decimal fractions: cents, thousandths, 0.1…
  fc.tuple(fc.integer({ min: 1, max: 1_000_000_000 }), fc.integer({ min: 1, max: 20 })).map(([m, k]) => m / 10 ** k),
);

/** Instances for divisor `m`: its exact multiples, near misses, and unrelated values of either sign. */
function instanceFor(m: number): fc.Arbitrary<number> {
  const { digits, exp } = literal(m);
  const multiple = fc.bigInt({ min: 1n, max: 10n ** 6n }).map((q) => Number(`${q * digits}e${exp}`));
  const nearMiss = fc
    .tuple(fc.bigInt({ min: 0n, max: 10n ** 4n }), fc.constantFrom(-1n, 1n), fc.integer({ min: 1, max: 3 }))
    .map(([q, d, k]) => Number(`${q * digits * 10n ** BigInt(k) + d}e${exp - k}`));
  const value = fc.oneof(multiple, multiple, nearMiss, magnitude, fc.constant(0)).filter(Number.isFinite);
  return fc.tuple(value, fc.boolean()).map(([v, negative]) => (negative ? -v : v));
}

/** The generated function of a schema, built the way the engine builds it on the second evaluation. */
function generatedValidator(schema: Json): Validate {
  const compiler = new Compiler({ assertFormats: true, defaultDialect: DIALECT_2020, generatedCode: true, limits: { ...DEFAULT_WORK_LIMITS } });
  const fast = compiler.compileRoot(schema).accelerate();
  if (fast === null) throw new Error(`no generated code for ${JSON.stringify(schema)}`);
  return fast;
}

function runGenerated(fast: Validate, instance: Json): boolean {
  const ctx = new EvalContext();
  ctx.maxSteps = DEFAULT_WORK_LIMITS.maxEvaluationSteps;
  return fast(instance, ctx, null);
}

describe('multipleOf against exact decimal arithmetic, every evaluation path', () => {
  const generating = createSchemaEngine();
  const closures = createSchemaEngine({ generatedCode: false });

  it('the divisors that once passed every integer now fail 7, 900 and 32400', () => {
    for (const m of [1e21, 1e22, 1e25, 1e30, 1e100, 1e308, 2e300]) {
      const schema = { multipleOf: m };
      const fast = generatedValidator(schema);
      for (const n of [7, 900, 32400, -7]) {
        const cold = generating.compile(schema);
        const first = cold.evaluate(n);
        expect(first.valid, `${n} multipleOf ${m}, cold`).toBe(false);
        expect(first.failures[0].keyword).toBe('multipleOf');
        expect(cold.evaluate(n).valid, `${n} multipleOf ${m}, hot`).toBe(false);
        expect(closures.compile(schema).evaluate(n).valid, `${n} multipleOf ${m}, closures`).toBe(false);
        expect(runGenerated(fast, n), `${n} multipleOf ${m}, generated`).toBe(false);
      }
      expect(generating.compile(schema).evaluate(m).valid).toBe(true);
      if (Number.isFinite(3 * m)) expect(generating.compile(schema).evaluate(3 * m).valid).toBe(exactMultiple(3 * m, m));
    }
  });

  it('agrees with the BigInt reference on 20,000+ pairs, cold, hot, closures and generated', () => {
    let pairs = 0;
    let multiples = 0;
    const divisorAndInstances = magnitude.chain((m) => fc.tuple(fc.constant(m), fc.array(instanceFor(m), { minLength: 8, maxLength: 12 })));
    fc.assert(
      fc.property(divisorAndInstances, ([m, ns]) => {
        const schema = { multipleOf: m };
        const closure = closures.compile(schema);
        const fast = generatedValidator(schema);
        const items = generating.compile({ items: schema });
        for (const n of ns) {
          const expected = exactMultiple(n, m);
          const what = `${n} multipleOf ${m}`;
          // a fresh compiled schema: its first evaluation runs before any code is generated
          const compiled = generating.compile(schema);
          expect(compiled.evaluate(n).valid, `${what}, cold`).toBe(expected);
          // the second evaluation generates the code and runs it
          expect(compiled.evaluate(n).valid, `${what}, hot`).toBe(expected);
          expect(closure.evaluate(n).valid, `${what}, closures`).toBe(expected);
          expect(runGenerated(fast, n), `${what}, generated`).toBe(expected);
          pairs++;
          if (expected) multiples++;
        }
        // inside an array, hot: the generated loop reports exactly the elements that are not multiples
        const expectedFailures = ns.flatMap((n, i) => (exactMultiple(n, m) ? [] : [`$[${i}]`]));
        items.evaluate(ns);
        const hot = items.evaluate(ns);
        expect(hot.failures.map((f) => f.instancePath)).toEqual(expectedFailures);
      }),
      { numRuns: 2_200 },
    );
    expect(pairs).toBeGreaterThanOrEqual(20_000);
    // both answers are well represented
    expect(multiples).toBeGreaterThan(pairs / 10);
    expect(pairs - multiples).toBeGreaterThan(pairs / 10);
  });
});
