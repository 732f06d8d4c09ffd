/**
 * @module Robustness: no input makes the request parser or the verifier throw
 * anything but a coded ApiError, and no error message carries the caller's values
 * (an unresolved $ref is named on purpose, so the fuzzed one carries no marker).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { parseVerificationRequest } from '../src/core/request.js';
import { createVerifier } from '../src/core/verify.js';
import { createSchemaEngine } from '../src/core/schema/index.js';

const verifier = createVerifier({ engine: createSchemaEngine() });
const MARKER = 'zq7marker';

function expectCoded(run: () => unknown): void {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect(JSON.stringify((e as ApiError).toBody())).not.toContain(MARKER);
  }
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
        submitted_output: anyJson,
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
        expectCoded(() => verifier.verify(parseVerificationRequest(JSON.stringify(value))));
      }),
      { numRuns: 1500 },
    );
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
    fc.assert(
      fc.property(schema, fc.jsonValue({ maxDepth: 3 }), (expected_schema, submitted_output) => {
        const body = JSON.stringify({ task_id: 't', expected_schema, submitted_output, strict_content_check: true });
        expectCoded(() => {
          const verdict = verifier.verify(parseVerificationRequest(body));
          expect(verdict.schema_compliance.passed).toBeLessThanOrEqual(verdict.schema_compliance.total);
        });
      }),
      { numRuns: 3000 },
    );
  });
});
