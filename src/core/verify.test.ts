import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { ApiError } from '../errors.js';
import { createSchemaCache, createSchemaEngine } from './schema/index.js';
import { parseVerificationRequest } from './request.js';
import { createVerifier } from './verify.js';
import type { Verdict } from './types.js';

const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url), 'utf8');
const engine = createSchemaEngine();
const verifier = createVerifier({ engine });
const verify = (body: string | object, listCap?: number): Verdict => {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const v = listCap === undefined ? verifier : createVerifier({ engine, listCap });
  return v.evaluate(parseVerificationRequest(text));
};

describe('the invoice example (docs/protocol.md#worked-example)', () => {
  it('fails on the sum rule with a full schema score', () => {
    const v = verify(fixture('invoice.request.json'));
    expect(v).toMatchObject({ result: 'fail', blocking_checks: ['consistency:sum_equals'], schema_compliance: { ratio: 1, passed: 22, total: 22 }, integrity_checks: { ratio: 0.666667, passed: 2, total: 3 } });
    expect(v.overall).toEqual({ ratio: 0.96, passed: 24, total: 25 });
    expect(v.errors_detail).toHaveLength(1);
    expect(v.errors_detail[0]).toMatchObject({ check: 'consistency:sum_equals', found: 'sum 129.5' });
    expect(v.errors).toEqual(["enforce_rules: consistency:sum_equals at 'line_items[].line_total': values sum to 129.5, expected total (135)"]);
    expect(v.hints.some((h) => h.source === 'integrity' && h.check === 'consistency:sum_equals' && h.found === 'sum 129.5')).toBe(true);
    expect(v.flags).toEqual([
      { check: 'consistency:sum_equals', field: 'line_items[].line_total', severity: 'error', detail: 'values sum to 129.5, expected total (135)' },
    ]);
    expect(v.next_actions).toEqual([{ action: 'repair_and_reverify', using: 'hints' }]);
  });

  it('passes with total 129.5', () => {
    const v = verify(fixture('invoice-pass.request.json'));
    expect(v).toMatchObject({ result: 'pass', blocking_checks: [], schema_compliance: { ratio: 1, passed: 22, total: 22 }, integrity_checks: { ratio: 1, passed: 3, total: 3 } });
    expect(v.errors).toEqual([]);
    expect(v.hints).toEqual([]);
    expect(v.next_actions).toEqual([
      { action: 'attach_receipt', for: 'seller' },
      { action: 'proceed_to_payment', for: 'buyer' },
    ]);
  });

  it('warns instead of failing when enforce_rules is false, but still counts the failed check', () => {
    const req = JSON.parse(fixture('invoice.request.json'));
    req.enforce_rules = false;
    const v = verify(req);
    expect(v).toMatchObject({ result: 'pass', blocking_checks: [] });
    expect(v.errors).toEqual([]);
    expect(v.flags[0]).toMatchObject({ check: 'consistency:sum_equals', severity: 'warning' });
    expect(v.hints[0]).toMatchObject({ source: 'integrity', found: 'sum 129.5' });
    expect(v.integrity_checks).toMatchObject({ passed: 2, total: 3 });
  });

  it('reports schema failures as blocking schema checks with schema hints', () => {
    const req = JSON.parse(fixture('invoice-pass.request.json'));
    req.submitted_output.line_items[1].qty = 0;
    req.submitted_output.invoice_id = 'nope';
    const v = verify(req);
    expect(v.result).toBe('fail');
    expect(v.blocking_checks.sort()).toEqual(['schema:minimum', 'schema:pattern']);
    expect(v.schema_compliance).toMatchObject({ passed: 20, total: 22 });
    expect(v.hints.every((h) => h.source === 'schema')).toBe(true);
    expect(v.errors_detail.map((d) => d.path).sort()).toEqual(['$.invoice_id', '$.line_items[1].qty']);
  });
});

const simple = (output: string, extra = '') =>
  `{"task_id":"t","expected_schema":{"type":"object"},"submitted_output":${output}${extra}}`;

describe('multipleOf with a divisor of the form M × 10^E, E > 0', () => {
  it('fails integers that are no multiple, on the first and on later verifications', () => {
    for (const m of [1e21, 1e22, 1e25, 1e30, 1e100, 1e308]) {
      for (const n of [7, 900, 32400]) {
        const parsed = parseVerificationRequest(`{"task_id":"t","expected_schema":{"multipleOf":${m}},"submitted_output":${n}}`);
        // through a cache: the second verification runs the schema's generated code
        const cached = createVerifier({ engine: createSchemaCache({ engine, max: 4 }) });
        for (const v of [cached.evaluate(parsed, { schemaKey: 'k' }), cached.evaluate(parsed, { schemaKey: 'k' })]) {
          expect(v.result, `${n} multipleOf ${m}`).toBe('fail');
          expect(v.blocking_checks).toEqual(['schema:multipleOf']);
        }
      }
    }
  });
});

describe('built-in integrity checks', () => {
  it('fails integrity:unique_keys on a duplicated key inside the output', () => {
    const v = verify(simple('{"a":1,"b":{"x":1,"x":2}}'));
    expect(v).toMatchObject({ result: 'fail', blocking_checks: ['integrity:unique_keys'], integrity_checks: { ratio: 0.5, passed: 1, total: 2 } });
    expect(v.hints).toEqual([
      { source: 'integrity', check: 'integrity:unique_keys', path: '$.b', expected: 'each key once per object', found: "key 'x' more than once" },
    ]);
  });
  it('fails integrity:safe_integers on 2^53 inside the output', () => {
    const v = verify(simple('{"n":9007199254740992}'));
    expect(v).toMatchObject({ result: 'fail', blocking_checks: ['integrity:safe_integers'] });
    expect(v.errors_detail[0]).toMatchObject({ check: 'integrity:safe_integers', path: '$.n' });
    expect(JSON.stringify(v)).not.toContain('9007199254740992');
  });
  it('blocks even when enforce_rules is false', () => {
    expect(verify(simple('{"a":1,"a":1}', ',"enforce_rules":false')).result).toBe('fail');
  });
  it('passes a clean output with two integrity checks', () => {
    const v = verify(simple('{"a":1}'));
    expect(v).toMatchObject({ result: 'pass', integrity_checks: { ratio: 1, passed: 2, total: 2 } });
  });
});

describe('bounds', () => {
  const req = (bounds: object, output: object, enforce = true) => ({ task_id: 't', expected_schema: true, submitted_output: output, bounds, enforce_rules: enforce });
  it('one bounds:range check per entry, inclusive', () => {
    const v = verify(req({ 'items[].price': { min: 0, max: 100 }, total: { min: 1 } }, { items: [{ price: 0 }, { price: 100 }], total: 1 }));
    expect(v).toMatchObject({ result: 'pass', integrity_checks: { ratio: 1, passed: 4, total: 4 } });
  });
  it('fails values outside the range, non-numbers, and missing paths', () => {
    const v = verify(req({ 'items[].price': { min: 0, max: 100 }, missing: { max: 1 }, opt: { max: 1, if_present: true } }, { items: [{ price: -1 }, { price: 101 }, { price: '5' }] }));
    expect(v).toMatchObject({ result: 'fail', blocking_checks: ['bounds:range'] });
    expect(v.integrity_checks).toMatchObject({ passed: 3, total: 5 });
    expect(v.errors_detail.map((d) => [d.path, d.found])).toEqual([
      ['$.items[0].price', 'value -1'],
      ['$.items[1].price', 'value 101'],
      ['$.items[2].price', 'type string'],
      ['$.missing', 'missing'],
    ]);
    expect(v.errors[0]).toBe("enforce_rules: bounds:range at 'items[].price': $.items[0].price is -1, below min 0");
  });
  it('warns when not enforced', () => {
    const v = verify(req({ x: { max: 1 } }, { x: 2 }, false));
    expect(v.result).toBe('pass');
    expect(v.flags[0]).toMatchObject({ check: 'bounds:range', severity: 'warning', field: 'x' });
  });
});

describe('strict content checks', () => {
  const req = (output: object, schema: object = { type: 'object', properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } } }) => ({
    task_id: 't',
    expected_schema: schema,
    submitted_output: output,
    strict_content_check: true,
  });
  it('adds two passing checks on clean output', () => {
    const v = verify(req({ name: 'Ada', tags: ['x1'] }));
    expect(v).toMatchObject({ result: 'pass', integrity_checks: { ratio: 1, passed: 4, total: 4 } });
  });
  it('fails undeclared fields and placeholders with content hints', () => {
    const v = verify(req({ name: 'TODO', tags: ['  ', 'ok', '{{ slot }}'], secret_extra: 1 }));
    expect(v.result).toBe('fail');
    expect(v.blocking_checks.sort()).toEqual(['content:placeholder_values', 'content:undeclared_fields']);
    expect(v.hints.every((h) => h.source === 'content')).toBe(true);
    expect(v.hints.map((h) => [h.check, h.path])).toEqual([
      ['content:undeclared_fields', '$.secret_extra'],
      ['content:placeholder_values', '$.name'],
      ['content:placeholder_values', '$.tags[0]'],
      ['content:placeholder_values', '$.tags[2]'],
    ]);
    expect(v.integrity_checks).toMatchObject({ passed: 2, total: 4 });
  });
  it('is off by default', () => {
    const r = req({ name: 'TODO', extra: 1 }) as Record<string, unknown>;
    delete r.strict_content_check;
    expect(verify(r).result).toBe('pass');
  });
});

describe('prototype-named keys', () => {
  it('checks __proto__ in the output as an ordinary key without pollution', () => {
    const v = verify(
      '{"task_id":"t","expected_schema":{"type":"object","properties":{"__proto__":{"type":"object","properties":{"x":{"type":"integer"}}}}},' +
        '"submitted_output":{"__proto__":{"x":1},"constructor":{"prototype":1}},' +
        '"rules":[{"type":"gte","field":"__proto__.x","value":2},{"type":"unique","field":"constructor.prototype"}],"enforce_rules":true}',
    );
    expect(v.schema_compliance).toEqual({ ratio: 1, passed: 3, total: 3 });
    expect(v.blocking_checks).toEqual(['consistency:gte']);
    expect(v.errors_detail[0]).toMatchObject({ path: '$.__proto__.x', found: 'value 1' });
    expect(({} as { x?: unknown }).x).toBeUndefined();
  });
});

describe('caps', () => {
  it('caps every list and counts what was cut', () => {
    const items = Array.from({ length: 150 }, () => ({ qty: 0 }));
    const body = {
      task_id: 't',
      expected_schema: { type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { qty: { minimum: 1 } } } } } },
      submitted_output: { items },
      rules: [{ type: 'gte', field: 'items[].qty', value: 1 }],
      enforce_rules: true,
    };
    const v = verify(body);
    expect(v.errors).toHaveLength(100);
    expect(v.errors_total).toBe(300);
    expect(v.errors_omitted).toBe(200);
    expect(v.errors_detail_total).toBe(300);
    expect(v.hints).toHaveLength(100);
    expect(v.hints_total).toBe(300);
    expect(v.flags_total).toBe(150);
    expect(v.flags_omitted).toBe(50);
    const small = verify(body, 7);
    expect(small.errors).toHaveLength(7);
    expect(small.errors_omitted).toBe(293);
    expect(small.flags).toHaveLength(7);
  });
});

describe('schema problems', () => {
  it('turns an unresolved $ref into a 422 naming expected_schema', () => {
    let err: unknown;
    try {
      verify({ task_id: 't', expected_schema: { $ref: 'https://example.com/other.json' }, submitted_output: 1 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    const f = (err as ApiError).fields[0];
    expect(f.field).toBe('expected_schema');
    expect(f.problem).toBe("references 'https://example.com/other.json' which is not in the request");
    expect(f.fix).toContain('$defs');
  });

  it('names the schema location of other compile problems', () => {
    let err: unknown;
    try {
      verify({ task_id: 't', expected_schema: { properties: { 'a/b': { pattern: '(' } } }, submitted_output: 1 });
    } catch (e) {
      err = e;
    }
    expect((err as ApiError).fields[0].field).toBe("expected_schema.properties['a/b'].pattern");
  });

  it('uses a compiled-schema cache with the given key', () => {
    const cache = createSchemaCache({ engine, max: 4 });
    const v = createVerifier({ engine: cache });
    const p = parseVerificationRequest(fixture('invoice.request.json'));
    expect(v.evaluate(p, { schemaKey: 'k1' }).schema_compliance.total).toBe(22);
    expect(v.evaluate(p, { schemaKey: 'k1' }).schema_compliance.total).toBe(22);
    expect(cache.size).toBe(1);
    v.evaluate(p);
    expect(cache.size).toBe(2);
  });
});

describe('any output', () => {
  it('always yields a consistent verdict (never a crash) for arbitrary outputs, rules and bounds', () => {
    const rules = [
      { type: 'sum_equals', field: 'a[].n', equals_field: 't', if_present: true },
      { type: 'gte', field: 'a[].n', other_field: 'a[].m' },
      { type: 'lte', field: 'b', value: 3 },
      { type: 'exists_in', field: 'a[].k', in_field: 'keys[]', if_present: true },
      { type: 'unique', field: 'a[].k' },
    ];
    const output = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.record({ a: fc.array(fc.record({ n: fc.jsonValue({ maxDepth: 1 }), m: fc.double({ noNaN: true, noDefaultInfinity: true }), k: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] })), t: fc.jsonValue({ maxDepth: 1 }), b: fc.integer() }, { requiredKeys: [] }),
    );
    fc.assert(
      fc.property(output, fc.boolean(), fc.boolean(), (out, enforce, strict) => {
        const body = JSON.stringify({ task_id: 't', expected_schema: { type: 'object' }, submitted_output: out, rules, bounds: { b: { min: 0 } }, enforce_rules: enforce, strict_content_check: strict });
        const v = verify(body);
        expect(v.integrity_checks.total).toBe(2 + 1 + rules.length + (strict ? 2 : 0));
        for (const sc of [v.schema_compliance, v.integrity_checks, v.overall]) {
          expect(sc.passed).toBeLessThanOrEqual(sc.total);
          expect(sc.ratio).toBe(sc.total === 0 ? 1 : Math.round((sc.passed / sc.total) * 1e6) / 1e6);
        }
        expect(v.result === 'fail').toBe(v.blocking_checks.length > 0);
        expect(v.errors_total).toBe(v.errors_detail_total);
        expect(v.flags.every((f) => f.severity === (enforce || !/^(consistency|bounds):/.test(f.check) ? 'error' : 'warning'))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe('schemas invalid against their meta-schema', () => {
  const refusal = (v: ReturnType<typeof createVerifier>, schema: unknown, key?: string): ApiError => {
    try {
      v.evaluate(parseVerificationRequest(JSON.stringify({ task_id: 't', expected_schema: schema, submitted_output: { a: 1 } })), key === undefined ? undefined : { schemaKey: key });
    } catch (e) {
      if (e instanceof ApiError) return e;
      throw e;
    }
    throw new Error('expected a 422, got a verdict');
  };

  it('is a 422 naming the location, every time (also through the cache)', () => {
    const cached = createVerifier({ engine: createSchemaCache({ engine, max: 4 }) });
    for (let i = 0; i < 3; i++) {
      for (const v of [verifier, cached]) {
        const e = refusal(v, { type: [] }, 'type-empty');
        expect(e.code).toBe('invalid_request');
        expect(e.status).toBe(422);
        expect(e.fields[0].field).toBe('expected_schema.type');
      }
    }
  });

  it('names the keyword for each dialect', () => {
    expect(refusal(verifier, { minLength: -1 }).fields[0].field).toBe('expected_schema.minLength');
    expect(refusal(verifier, { required: 'a' }).fields[0].field).toBe('expected_schema.required');
    expect(refusal(verifier, { properties: { x: { maxItems: 1.5 } } }).fields[0].field).toBe('expected_schema.properties.x.maxItems');
    expect(refusal(verifier, { $schema: 'http://json-schema.org/draft-07/schema#', properties: { x: { type: 'text' } } }).fields[0].field).toBe(
      'expected_schema.properties.x.type',
    );
    expect(refusal(verifier, { $schema: 'https://json-schema.org/draft/2019-09/schema', minProperties: 'two' }).fields[0].field).toBe(
      'expected_schema.minProperties',
    );
    expect(refusal(verifier, { type: [] }).fields[0].fix).toContain('meta-schema');
  });

  it('still accepts valid schemas with unknown keywords and annotations', () => {
    const v = verify({ task_id: 't', expected_schema: { type: 'object', title: 'x', 'x-vendor': { any: 1 } }, submitted_output: { a: 1 } });
    expect(v.result).toBe('pass');
  });
});

describe('schema warnings and strict_schema (docs/protocol.md#schema-warnings)', () => {
  const typo = {
    task_id: 't',
    expected_schema: { type: 'object', properties: { qty: { type: 'integer', minimun: 1 }, at: { type: 'string', format: 'date-tim' } } },
    submitted_output: { qty: 0, at: 'x' },
  };

  it('a pass with a typo asks for a review first and never offers payment alone', () => {
    const v = verify(typo);
    expect(v.result).toBe('pass');
    expect(v.schema_warnings).toBe(2);
    expect(v.next_actions[0]).toEqual({ action: 'review_schema_warnings', count: 2 });
    expect(v.next_actions.find((a) => a.action === 'proceed_to_payment')).toEqual({ action: 'proceed_to_payment', for: 'buyer', after: 'review_schema_warnings' });
    expect(v.flags.map((f) => f.check)).toEqual(['schema:unknown_keyword', 'schema:unknown_format']);
    // The verdict itself is what JSON Schema says: counts are unchanged by a warning.
    expect(v.schema_compliance).toEqual(verify({ ...typo, expected_schema: { type: 'object', properties: { qty: { type: 'integer' }, at: { type: 'string' } } } }).schema_compliance);
  });

  it('a fail with a typo keeps its repair action first', () => {
    const v = verify({ ...typo, submitted_output: { qty: 'zero' } });
    expect(v.result).toBe('fail');
    expect(v.schema_warnings).toBe(2);
    expect(v.next_actions).toEqual([{ action: 'repair_and_reverify', using: 'hints' }]);
  });

  it('strict_schema turns each unknown keyword and format into a 422 field', () => {
    let err: unknown;
    try {
      verify({ ...typo, strict_schema: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    const body = (err as ApiError).toBody();
    expect(body.code).toBe('invalid_request');
    expect(body.fields.map((f) => f.field)).toEqual(['expected_schema.properties.qty.minimun', 'expected_schema.properties.at.format']);
    expect(body.fields[0].problem).toContain('did you mean "minimum"');
    expect(body.fields[1].problem).toContain('did you mean "date-time"');
  });

  it('strict_schema without typos changes nothing, and must be a boolean', () => {
    const clean = { task_id: 't', expected_schema: { type: 'integer', minimum: 1 }, submitted_output: 0 };
    const strict = verify({ ...clean, strict_schema: true });
    expect(strict).toEqual(verify(clean));
    expect(strict.next_actions).toEqual([{ action: 'repair_and_reverify', using: 'hints' }]);
    expect(() => verify({ ...clean, strict_schema: 'yes' })).toThrow(ApiError);
  });
});
