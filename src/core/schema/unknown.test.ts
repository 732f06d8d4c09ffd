/** @module Schema typos: unknown keywords and formats are reported (never counted), with the closest known name. */
import { describe, expect, it } from 'vitest';
import { parseVerificationRequest } from '../request.js';
import { createVerifier } from '../verify.js';
import { createSchemaEngine } from './index.js';
import { closest, editDistance } from './unknown.js';
import type { JsonObject } from '../types.js';

const engine = createSchemaEngine();

describe('unknown keywords', () => {
  it('warns at the location with a did-you-mean, without changing the result or the counts', () => {
    const verifier = createVerifier({ engine });
    const schema = { type: 'object', requried: ['total'], properties: { total: { type: 'number', minimun: 0 } } };
    const v = verifier.evaluate(parseVerificationRequest(JSON.stringify({ task_id: 't', expected_schema: schema, submitted_output: { total: -5 } })));
    expect(v.result).toBe('pass');
    expect(v.schema_compliance).toEqual({ ratio: 1, passed: 2, total: 2 });
    expect(v.flags).toEqual([
      { check: 'schema:unknown_keyword', field: 'expected_schema.requried', severity: 'warning', detail: expect.stringContaining('"requried" — did you mean "required"?') },
      { check: 'schema:unknown_keyword', field: 'expected_schema.properties.total.minimun', severity: 'warning', detail: expect.stringContaining('did you mean "minimum"?') },
    ]);
    expect(v.flags_total).toBe(2);
    expect(v.blocking_checks).toEqual([]);
  });

  it('ignores annotations, x- extensions and core keywords; knows each dialect', () => {
    const c = engine.compile({
      $id: 'https://example.com/s', $comment: 'c', title: 't', description: 'd', default: 1, examples: [1], deprecated: false,
      readOnly: true, writeOnly: false, contentMediaType: 'text/plain', contentEncoding: 'base64', 'x-vendor': 1, $defs: {}, definitions: {},
    });
    expect(c.warnings).toEqual([]);
    // prefixItems means nothing in draft-07: a silent no-op there
    const d7 = engine.compile({ $schema: 'http://json-schema.org/draft-07/schema#', prefixItems: [{ type: 'string' }] });
    expect(d7.warnings.map((w) => [w.name, w.schemaPath])).toEqual([['prefixItems', '#/prefixItems']]);
    expect(engine.compile({ prefixItems: [{ type: 'string' }] }).warnings).toEqual([]);
  });

  it('warns about unknown format names with a suggestion', () => {
    const c = engine.compile({ properties: { when: { type: 'string', format: 'date-tim' }, id: { format: 'int32' }, d: { format: 'date' } } });
    expect(c.warnings).toEqual([
      { kind: 'unknown_format', schemaPath: '#/properties/when/format', name: 'date-tim', suggestion: 'date-time' },
      { kind: 'unknown_format', schemaPath: '#/properties/id/format', name: 'int32', suggestion: null },
    ]);
  });

  it('measures closeness with transpositions as one edit', () => {
    expect(editDistance('requried', 'required', 2)).toBe(1);
    expect(closest('minimun', ['minimum', 'maximum', 'minLength'])).toBe('minimum');
    expect(closest('Required', ['required'])).toBe('required');
    expect(closest('zzzzzz', ['required'])).toBeNull();
  });
});

describe('string lengths and patterns on astral characters (code points, not UTF-16 units)', () => {
  const check = (schema: JsonObject, value: string): boolean[] => {
    const c = engine.compile(schema);
    const closures = createSchemaEngine({ generatedCode: false }).compile(schema);
    return [c.evaluate(value).valid, c.evaluate(value).valid, closures.evaluate(value).valid];
  };

  it('counts an emoji or a supplementary-plane letter as one character', () => {
    expect(check({ maxLength: 2 }, '😀😀')).toEqual([true, true, true]);
    expect(check({ maxLength: 1 }, '😀😀')).toEqual([false, false, false]);
    expect(check({ minLength: 2 }, '😀😀')).toEqual([true, true, true]);
    expect(check({ minLength: 3 }, '😀😀')).toEqual([false, false, false]);
    expect(check({ minLength: 2, maxLength: 2 }, '𝔸b')).toEqual([true, true, true]);
    expect(check({ maxLength: 3 }, 'a😀\u{10FFFF}')).toEqual([true, true, true]);
  });

  it('matches patterns by code point', () => {
    expect(check({ pattern: '^.$' }, '😀')).toEqual([true, true, true]);
    expect(check({ pattern: '^..$' }, '😀')).toEqual([false, false, false]);
    expect(check({ pattern: '^[😀-😂]{2}$' }, '😁😂')).toEqual([true, true, true]);
    expect(check({ pattern: '^\\p{L}+$' }, '𝔸𝔹')).toEqual([true, true, true]);
    expect(check({ pattern: '^\\u{1F600}$' }, '😀')).toEqual([true, true, true]);
    expect(check({ pattern: '^(?=.{2}$)' }, '😀😀')).toEqual([true, true, true]);
  });
});
