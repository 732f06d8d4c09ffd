/**
 * @module Robustness: no input makes the request parser or the verifier throw
 * anything but a coded ApiError, and no error message carries the caller's values
 * (an unresolved $ref is named on purpose, so the fuzzed one carries no marker).
 * Every verdict that does come back is checked too: scores add up, the result is
 * pass exactly when nothing blocks, and no string of the submitted output is
 * echoed back.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { parseVerificationRequest } from '../src/core/request.js';
import { createVerifier } from '../src/core/verify.js';
import { createSchemaEngine } from '../src/core/schema/index.js';
import type { Json, Score, Verdict } from '../src/core/types.js';

const verifier = createVerifier({ engine: createSchemaEngine() });
const MARKER = 'zq7marker';
/** Carried by every string value of a fuzzed submitted_output: a verdict must never contain it. */
const OUTPUT_MARKER = 'qx9output';

/** Mark every string value (not the keys: paths name them on purpose) of an output. */
function markStrings(value: unknown): Json {
  if (typeof value === 'string') return `${OUTPUT_MARKER}${value}`;
  if (Array.isArray(value)) return value.map(markStrings);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, markStrings(v)]));
  return value as Json;
}

function expectScore(s: Score): void {
  expect(Number.isInteger(s.passed) && Number.isInteger(s.total)).toBe(true);
  expect(s.passed).toBeGreaterThanOrEqual(0);
  expect(s.passed).toBeLessThanOrEqual(s.total);
  expect(s.ratio).toBe(s.total === 0 ? 1 : Math.round((s.passed / s.total) * 1e6) / 1e6);
}

/** What every verdict must satisfy, whatever the input. */
function expectVerdictInvariants(v: Verdict): void {
  expectScore(v.schema_compliance);
  expectScore(v.integrity_checks);
  expectScore(v.overall);
  expect(v.overall.passed).toBe(v.schema_compliance.passed + v.integrity_checks.passed);
  expect(v.overall.total).toBe(v.schema_compliance.total + v.integrity_checks.total);
  // The two built-in integrity checks run on every output.
  expect(v.integrity_checks.total).toBeGreaterThanOrEqual(2);
  expect(v.result === 'pass').toBe(v.blocking_checks.length === 0);
  expect(new Set(v.blocking_checks).size).toBe(v.blocking_checks.length);
  if (v.result === 'pass') expect(v.schema_compliance.passed).toBe(v.schema_compliance.total);
  for (const [list, total, omitted] of [
    [v.errors, v.errors_total, v.errors_omitted],
    [v.errors_detail, v.errors_detail_total, v.errors_detail_omitted],
    [v.flags, v.flags_total, v.flags_omitted],
    [v.hints, v.hints_total, v.hints_omitted],
  ] as const) {
    expect(list.length + omitted).toBe(total);
  }
  // task_id and agent_id are the caller's labels, returned on purpose; nothing else of the output may come back.
  const { task_id: _t, agent_id: _a, ...rest } = v;
  expect(JSON.stringify(rest)).not.toContain(OUTPUT_MARKER);
}

function expectCoded(run: () => unknown): void {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect(JSON.stringify((e as ApiError).toBody())).not.toContain(MARKER);
    expect(JSON.stringify((e as ApiError).toBody())).not.toContain(OUTPUT_MARKER);
  }
}

/** Verdicts seen per result, so each property can show it exercised both. */
const seen = { pass: 0, fail: 0 };

/** Verify `body`; a verdict must satisfy the invariants, anything else must be a coded error. */
function expectVerdictOrCoded(body: string): void {
  let verdict: Verdict;
  try {
    verdict = verifier.evaluate(parseVerificationRequest(body));
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect(JSON.stringify((e as ApiError).toBody())).not.toContain(MARKER);
    expect(JSON.stringify((e as ApiError).toBody())).not.toContain(OUTPUT_MARKER);
    return;
  }
  expectVerdictInvariants(verdict);
  seen[verdict.result]++;
}

describe('fuzzed requests', () => {
  it('arbitrary text bodies give a verdict or a coded 422, never a crash', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expectCoded(() => parseVerificationRequest(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('arbitrary JSON in every field gives a verdict or a coded 422', () => {
    const anyJson = fc.jsonValue({ maxDepth: 4 }).map((v) => (typeof v === 'string' ? `${MARKER}${v}` : v));
    const body = fc.record(
      {
        task_id: fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), anyJson),
        agent_id: fc.oneof(fc.constant(null), fc.string({ maxLength: 5 }), anyJson),
        expected_schema: fc.oneof(anyJson, fc.constant({ type: 'object' }), fc.constant({ $ref: "#/nowhere" })),
        submitted_output: anyJson.map(markStrings),
        strict_content_check: fc.oneof(fc.boolean(), anyJson),
        bounds: fc.oneof(fc.constant(null), fc.dictionary(fc.string({ maxLength: 6 }), anyJson, { maxKeys: 2 })),
        rules: fc.oneof(
          fc.constant(null),
          fc.array(
            fc.record(
              {
                type: fc.oneof(fc.constantFrom('sum_equals', 'gte', 'lte', 'exists_in', 'unique'), anyJson),
                field: fc.oneof(fc.constantFrom('a', 'a[].b', "['x.y']", '[]', 'a..b'), anyJson),
                equals: anyJson,
                value: anyJson,
                values: anyJson,
                tolerance: anyJson,
              },
              { requiredKeys: ['type', 'field'] },
            ),
            { maxLength: 2 },
          ),
        ),
        enforce_rules: fc.oneof(fc.boolean(), anyJson),
        detail: fc.oneof(fc.constantFrom('full', 'compact'), anyJson),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(body, (value) => {
        expectVerdictOrCoded(JSON.stringify(value));
      }),
      { numRuns: 1500 },
    );
    // The invariants were checked on real verdicts of both kinds, not only on errors.
    expect(seen.pass).toBeGreaterThan(0);
    expect(seen.fail).toBeGreaterThan(0);
  });
});

describe('fuzzed schemas', () => {
  it('schemas with keywords holding arbitrary values compile to a verdict or a coded 422', () => {
    const keywords = [
      'type', 'enum', 'const', 'required', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'multipleOf',
      'minLength', 'maxItems', 'uniqueItems', 'properties', 'patternProperties', 'additionalProperties', 'items',
      'prefixItems', 'contains', 'minContains', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', '$ref', '$defs',
      '$id', '$anchor', '$dynamicRef', '$schema', 'dependentRequired', 'dependentSchemas', 'unevaluatedProperties',
      'unevaluatedItems', 'propertyNames',
    ];
    const schema = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.boolean(),
        fc.dictionary(fc.constantFrom(...keywords), fc.oneof(fc.jsonValue({ maxDepth: 2 }), tie('node')), { maxKeys: 4 }),
      ),
    })).node;
    seen.pass = seen.fail = 0;
    fc.assert(
      fc.property(schema, fc.jsonValue({ maxDepth: 3 }).map(markStrings), (expected_schema, submitted_output) => {
        expectVerdictOrCoded(JSON.stringify({ task_id: 't', expected_schema, submitted_output, strict_content_check: true }));
      }),
      { numRuns: 3000 },
    );
    expect(seen.pass).toBeGreaterThan(0);
    expect(seen.fail).toBeGreaterThan(0);
  });
});
