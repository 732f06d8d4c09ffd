/**
 * @module Over HTTP, hostile schemas get a verdict or 422 too_complex (never a
 * hang, a 500 or a charge): the exponential $ref towers, huge counted repetition,
 * slow patterns, an unboundable backreference, and a meta-schema-invalid schema
 * (422 invalid_request three times in a row). The allowance is untouched by refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorShape, postJson, startApp, tempDir } from './http-helpers.js';
import type { Running } from './http-helpers.js';

function tower(depth: number, keyword: string, ref = '$ref'): unknown {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) defs[`d${i}`] = { [keyword]: [{ [ref]: `#/$defs/d${i + 1}` }, { [ref]: `#/$defs/d${i + 1}` }] };
  defs[`d${depth}`] = { type: 'integer' };
  return { $defs: defs, $ref: '#/$defs/d0' };
}

describe('HTTP: work limits', () => {
  const tmp = tempDir();
  let srv: Running;
  beforeAll(async () => {
    srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '3' });
  });
  afterAll(async () => {
    await srv?.close();
    tmp.cleanup();
  });

  const post = (schema: unknown, output: unknown) =>
    postJson(srv.base, '/verify/schema', JSON.stringify({ task_id: 'attack', expected_schema: schema, submitted_output: output }));

  it('answers {"type": []} with 422 invalid_request every time', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await post({ type: [] }, { a: 1 });
      expect(res.status).toBe(422);
      const body = (await res.json()) as { code: string; fields: Array<{ field: string }> };
      expect(body.code).toBe('invalid_request');
      expect(body.fields[0].field).toBe('expected_schema.type');
    }
  });

  it('answers every hostile body with 422 too_complex naming the location, and charges nothing', async () => {
    const attacks: Array<[string, unknown, unknown, string]> = [
      ['allOf tower', tower(32, 'allOf'), 1, "expected_schema['$defs']."],
      ['anyOf tower', tower(32, 'anyOf'), 'x', "expected_schema['$defs']."],
      ['oneOf tower', tower(32, 'oneOf'), 'x', "expected_schema['$defs']."],
      ['$dynamicRef tower', tower(32, 'allOf', '$dynamicRef'), 1, "expected_schema['$defs']."],
      ['counted repetition', { pattern: '(?:a{0,1000}){100}' }, 'a', 'expected_schema.pattern'],
      ['lookaround on long input', { pattern: '(?<=a)(?:a|b){1,500}c' }, 'a'.repeat(100_000), 'expected_schema.pattern'],
      ['backreference paths', { pattern: '(a|a)'.repeat(13) + '\\1x' }, 'a'.repeat(100_000), 'expected_schema.pattern'],
      ['unboundable backreference', { pattern: '^(a+)\\1$' }, 'aa', 'expected_schema.pattern'],
    ];
    for (const [name, schema, output, field] of attacks) {
      const res = await post(schema, output);
      expect(res.status, name).toBe(422);
      const body = (await res.json()) as Record<string, unknown> & { fields: Array<{ field: string; problem: string; fix: string }> };
      expect(expectErrorShape(body, 'too_complex', 422), name).toBeNull();
      expect(body.fields[0].field.startsWith(field), `${name}: ${body.fields[0].field}`).toBe(true);
      expect(body.fields[0].fix.length, name).toBeGreaterThan(20);
    }
    // none of them used the allowance: three verifications still fit
    for (let i = 0; i < 3; i++) {
      const ok = await post({ type: 'integer' }, 1);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('free-allowance-remaining')).toBe(String(2 - i));
    }
  });
});
