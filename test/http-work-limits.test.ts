/**
 * @module Over HTTP, hostile schemas get a verdict or 422 too_complex (never a
 * hang, a 500 or a charge): the exponential $ref towers, huge counted repetition,
 * slow patterns, an unboundable backreference, a pattern of 260 Unicode property
 * classes, and a meta-schema-invalid schema (422 invalid_request three times in a
 * row). The allowance is untouched by refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorShape, postJson, startApp, tempDir } from './http-helpers.js';
import type { Running } from './http-helpers.js';
import type { PoolRunner } from '../src/service/pool-runner.js';
import { propertyAlternation } from './unicode-properties.js';

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

  it('answers 260 distinct Unicode property classes with 422 too_complex in milliseconds, wherever the pattern is, stopping no worker', async () => {
    const p = propertyAlternation(260);
    expect(p.length).toBeGreaterThan(5000);
    const pool = srv.handle.runner as PoolRunner;
    expect(typeof pool.aborted).toBe('function');
    const stoppedBefore = pool.aborted();
    const workers = async (): Promise<number> =>
      Number(/^aov_verify_workers (\d+)$/m.exec(await (await fetch(`${srv.base}/metrics`)).text())?.[1]);
    // One worker from the start; a second only when a task finds it busy.
    expect(await workers()).toBe(1);
    const places: Array<[unknown, unknown, string]> = [
      [{ pattern: p }, 'x', 'expected_schema.pattern'],
      [{ type: 'object', patternProperties: { [p]: { type: 'string' } } }, { a: 'x' }, 'expected_schema.patternProperties'],
      [{ type: 'object', propertyNames: { pattern: p } }, { a: 'x' }, 'expected_schema.propertyNames.pattern'],
    ];
    // a worker's first request also loads and compiles the engine itself: warm the workers up first (with refusals, never charged)
    await Promise.all([0, 1, 2, 3].map(() => post({ type: [] }, 1).then((r) => r.arrayBuffer())));
    const warmed = await workers();
    const times: number[] = [];
    for (const [schema, output, field] of places) {
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const res = await post(schema, output);
        const body = (await res.json()) as Record<string, unknown> & { fields: Array<{ field: string; problem: string; fix: string }> };
        times.push(performance.now() - t0);
        expect(res.status, field).toBe(422);
        expect(expectErrorShape(body, 'too_complex', 422), field).toBeNull();
        expect(body.charged).toBe(false);
        expect(body.fields[0].field.startsWith(field), body.fields[0].field).toBe(true);
        expect(body.fields[0].problem).toContain('SCHEMA_MAX_PROPERTY_TABLES = 16');
        expect(body.fields[0].fix).toContain('\\p{');
      }
    }
    // Judged from the pattern text, no table built. Building the 260 tables scans ~1.1 million code
    // points each (seconds of CPU, past the 1.5 s deadline); a refusal from the text alone takes a few
    // milliseconds. The bound leaves room for a loaded machine and still tells the two apart.
    expect(Math.max(...times), times.map((t) => t.toFixed(0)).join(' ')).toBeLessThan(750);
    expect(pool.aborted()).toEqual(stoppedBefore);
    expect(await workers()).toBe(warmed);
  });
});
