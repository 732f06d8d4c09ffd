import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { ApiError } from '../errors.js';
import { parseVerificationRequest, validateRequestValue } from './request.js';

const SECRET = 'S3CRET-ZZ';
const base = {
  task_id: 't-1',
  expected_schema: { type: 'object' },
  submitted_output: { a: 1 },
};
const body = (extra: Record<string, unknown>) => JSON.stringify({ ...base, ...extra });

/** The ApiError `fn` throws; fails the test when it throws nothing or something else. */
function apiErrorOf(fn: () => unknown): ApiError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

/** The 422 for `text`; asserts every problem has a fix and the marker never leaks. */
function rejected(text: string | Buffer, marker = SECRET): ApiError {
  const e = apiErrorOf(() => parseVerificationRequest(text));
  expect(e.code).toBe('invalid_request');
  expect(e.status).toBe(422);
  expect(e.fields.length).toBeGreaterThan(0);
  for (const f of e.fields) {
    expect(f.field).toBeTruthy();
    expect(f.problem).toBeTruthy();
    expect(f.fix).toBeTruthy();
  }
  expect(JSON.stringify(e.toBody())).not.toContain(marker);
  return e;
}
const fieldsOf = (e: ApiError) => e.fields.map((f) => f.field);

describe('parseVerificationRequest: valid requests', () => {
  it('fills every default', () => {
    const p = parseVerificationRequest(body({}));
    expect(p.request).toEqual({
      task_id: 't-1',
      agent_id: null,
      expected_schema: { type: 'object' },
      submitted_output: { a: 1 },
      strict_content_check: false,
      bounds: null,
      rules: null,
      enforce_rules: false,
      detail: 'full',
      strict_schema: false,
    });
    expect(p.suppliedBounds).toBeNull();
    expect(p.suppliedRules).toBeNull();
    expect(p.integrity).toEqual({ duplicateKeys: [], unsafeIntegers: [] });
  });

  it('fills rule and bound defaults but keeps them as supplied for rules_hash', () => {
    const rules = [{ type: 'sum_equals', field: 'x[]', equals: 3 }, { type: 'unique', field: 'x[]' }];
    const bounds = { 'x[]': { min: 0 } };
    const p = parseVerificationRequest(body({ rules, bounds, agent_id: 'a', enforce_rules: true, strict_content_check: true, detail: 'compact' }));
    expect(p.request.rules).toEqual([
      { type: 'sum_equals', field: 'x[]', equals_field: null, equals: 3, other_field: null, value: null, in_field: null, values: null, tolerance: 1e-9, if_present: false },
      { type: 'unique', field: 'x[]', equals_field: null, equals: null, other_field: null, value: null, in_field: null, values: null, tolerance: 1e-9, if_present: false },
    ]);
    expect({ ...p.request.bounds }).toEqual({ 'x[]': { min: 0, max: null, if_present: false } });
    expect(p.suppliedRules).toEqual(rules);
    expect(p.suppliedBounds).toEqual(bounds);
    expect(p.request).toMatchObject({ agent_id: 'a', enforce_rules: true, strict_content_check: true, detail: 'compact' });
  });

  it('treats empty bounds and rules as null but keeps them as supplied', () => {
    const p = parseVerificationRequest(body({ bounds: {}, rules: [] }));
    expect(p.request.bounds).toBeNull();
    expect(p.request.rules).toBeNull();
    expect(p.suppliedBounds).toEqual({});
    expect(p.suppliedRules).toEqual([]);
  });

  it('accepts boolean schemas, any output (even null) and Buffers', () => {
    expect(parseVerificationRequest(Buffer.from(body({ expected_schema: true, submitted_output: null }))).request.submitted_output).toBeNull();
  });

  it('parses the invoice fixture', () => {
    const p = parseVerificationRequest(readFileSync(new URL('../../test/fixtures/invoice.request.json', import.meta.url)));
    expect(p.request.rules?.[0]).toMatchObject({ type: 'sum_equals', equals_field: 'total' });
  });

  it('records duplicate keys and unsafe integers inside submitted_output as integrity findings', () => {
    const text = '{"task_id":"t","expected_schema":{},"submitted_output":{"a":1,"a":2,"l":[9007199254740992],"o":{"k":1,"k":2}}}';
    const p = parseVerificationRequest(text);
    expect(p.integrity).toEqual({
      duplicateKeys: [
        { path: '$', key: 'a' },
        { path: '$.o', key: 'k' },
      ],
      unsafeIntegers: ['$.l[0]'],
    });
    expect(parseVerificationRequest('{"task_id":"t","expected_schema":{},"submitted_output":-9007199254740993}').integrity.unsafeIntegers).toEqual(['$']);
  });

  it('keeps __proto__ in the output as an ordinary key without polluting', () => {
    const p = parseVerificationRequest('{"task_id":"t","expected_schema":{},"submitted_output":{"__proto__":{"isAdmin":true}}}');
    expect(Object.keys(p.request.submitted_output as object)).toEqual(['__proto__']);
    expect(({} as { isAdmin?: boolean }).isAdmin).toBeUndefined();
    expect((p.request.submitted_output as { isAdmin?: boolean }).isAdmin).toBeUndefined();
  });
});

describe('parseVerificationRequest: 422 cases', () => {
  it('rejects invalid JSON and non-object bodies', () => {
    expect(fieldsOf(rejected(`{"task_id":"${SECRET}",`))).toEqual(['body']);
    expect(fieldsOf(rejected(`["${SECRET}"]`))).toEqual(['body']);
    expect(fieldsOf(rejected('null'))).toEqual(['body']);
  });

  it('rejects unknown top-level fields', () => {
    const e = rejected(body({ extra: SECRET }));
    expect(e.fields).toEqual([{ field: 'extra', problem: 'is not a known request field', fix: expect.stringContaining('task_id') }]);
  });

  it('rejects a top-level __proto__ as an unknown field', () => {
    expect(fieldsOf(rejected(`{"task_id":"t","expected_schema":{},"submitted_output":1,"__proto__":{"enforce_rules":"${SECRET}"}}`))).toEqual(['__proto__']);
  });

  it('rejects missing and mistyped fields, collecting every problem', () => {
    const e = rejected(JSON.stringify({ task_id: 5, agent_id: 7, strict_content_check: 'yes', enforce_rules: SECRET, detail: SECRET, bounds: [SECRET], rules: { x: SECRET } }));
    expect(fieldsOf(e).sort()).toEqual(
      ['agent_id', 'bounds', 'detail', 'enforce_rules', 'expected_schema', 'rules', 'strict_content_check', 'submitted_output', 'task_id'].sort(),
    );
    expect(fieldsOf(rejected(body({ expected_schema: [SECRET] })))).toEqual(['expected_schema']);
    expect(fieldsOf(rejected(body({ expected_schema: SECRET })))).toEqual(['expected_schema']);
  });

  it('enforces id lengths of 1 to 200 characters', () => {
    expect(fieldsOf(rejected(body({ task_id: '' })))).toEqual(['task_id']);
    const long = SECRET + 'x'.repeat(200);
    expect(fieldsOf(rejected(body({ task_id: long, agent_id: long })))).toEqual(['task_id', 'agent_id']);
    expect(parseVerificationRequest(body({ task_id: 'é'.repeat(200), agent_id: '😀'.repeat(200) })).request.task_id).toHaveLength(200);
  });

  it('rejects an unknown rule type with the exact wording', () => {
    const e = rejected(body({ rules: [{ type: SECRET, field: 'x' }] }));
    expect(e.fields).toEqual([
      { field: 'rules[0].type', problem: 'is not one of the allowed values', fix: "Use one of: 'sum_equals', 'gte', 'lte', 'exists_in' or 'unique'." },
    ]);
  });

  it('requires exactly one reference per rule type', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'sum_equals', field: 'x', equals: 1, equals_field: 'y' }, 'both'],
      [{ type: 'sum_equals', field: 'x' }, 'neither'],
      [{ type: 'gte', field: 'x', value: 1, other_field: 'y' }, 'both'],
      [{ type: 'lte', field: 'x' }, 'neither'],
      [{ type: 'exists_in', field: 'x', values: [1], in_field: 'y' }, 'both'],
      [{ type: 'exists_in', field: 'x' }, 'neither'],
    ];
    for (const [r, word] of cases) {
      const e = rejected(body({ rules: [{ type: 'unique', field: 'ok' }, r] }));
      expect(e.fields).toHaveLength(1);
      expect(e.fields[0].field).toBe('rules[1]');
      expect(e.fields[0].problem).toContain(word);
    }
    expect(fieldsOf(rejected(body({ rules: [{ type: 'unique', field: 'x', value: 1 }] })))).toEqual(['rules[0].value']);
    expect(fieldsOf(rejected(body({ rules: [{ type: 'gte', field: 'x', value: 1, equals: 2 }] })))).toEqual(['rules[0].equals']);
    // explicit nulls count as absent
    expect(parseVerificationRequest(body({ rules: [{ type: 'gte', field: 'x', value: 1, other_field: null }] })).request.rules?.[0].value).toBe(1);
  });

  it('validates rule field types, tolerance, if_present, paths and unknown keys', () => {
    const e = rejected(
      body({
        rules: [
          { type: 'sum_equals', field: 'a..b', equals: SECRET, tolerance: -1, if_present: 'no', extra: 1 },
          { type: 'exists_in', field: 5, values: SECRET },
          { type: 'gte', field: 'x', other_field: 'y[' },
          SECRET,
        ],
      }),
    );
    expect(fieldsOf(e).sort()).toEqual(
      ['rules[0].extra', 'rules[0].field', 'rules[0].equals', 'rules[0].tolerance', 'rules[0].if_present', 'rules[1].field', 'rules[1].values', 'rules[2].other_field', 'rules[3]'].sort(),
    );
    expect(e.fields.find((f) => f.field === 'rules[0].field')?.problem).toMatch(/^is not a valid path/);
  });

  it('validates bounds', () => {
    const e = rejected(
      body({
        bounds: {
          'a[]': { min: 5, max: 1 },
          b: {},
          c: { min: SECRET, if_present: 1 },
          d: { max: 1, lo: 0 },
          'e..f': { min: 0 },
          g: SECRET,
        },
      }),
    );
    expect(fieldsOf(e)).toEqual([
      "bounds['a[]']",
      "bounds['b']",
      "bounds['c'].min",
      "bounds['c'].if_present",
      "bounds['d'].lo",
      "bounds['e..f']",
      "bounds['g']",
    ]);
  });

  it('rejects duplicate keys and unsafe integers outside submitted_output, naming the field', () => {
    const dup = rejected(`{"task_id":"t","task_id":"${SECRET}","expected_schema":{},"submitted_output":1}`);
    expect(dup.fields).toEqual([{ field: 'task_id', problem: 'appears more than once in the same object', fix: 'Send each key once per object.' }]);
    const dupRule = rejected(`{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"unique","field":"x","field":"y"}]}`);
    expect(fieldsOf(dupRule)).toEqual(['rules[0].field']);
    const big = rejected('{"task_id":"t","expected_schema":{"maximum":9007199254740993},"submitted_output":1}', '9007199254740993');
    expect(big.fields[0]).toMatchObject({ field: 'expected_schema.maximum', problem: 'is an integer outside ±(2^53−1)' });
    const bigRule = rejected('{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"gte","field":"x","value":12345678901234567890}]}', '12345678901234567890');
    expect(fieldsOf(bigRule)).toEqual(['rules[0].value']);
  });

  it('rejects lone surrogates anywhere, with the field', () => {
    expect(rejected('{"task_id":"\\ud800","expected_schema":{},"submitted_output":1}').fields[0]).toMatchObject({ field: 'task_id', problem: expect.stringContaining('lone surrogate') });
    expect(fieldsOf(rejected('{"task_id":"t","expected_schema":{},"submitted_output":{"a":["x\\udc00"]}}'))).toEqual(['submitted_output.a[0]']);
    expect(fieldsOf(rejected('{"task_id":"t","expected_schema":{},"submitted_output":{"\\ud800":1}}'))).toEqual(['submitted_output']);
  });

  it('rejects non-finite numbers', () => {
    const e = rejected('{"task_id":"t","expected_schema":{},"submitted_output":{"n":1e400}}', '1e400');
    expect(e.fields[0]).toMatchObject({ field: 'submitted_output.n', problem: expect.stringContaining('not finite') });
  });

  it('rejects nesting deeper than 64 levels (configurable)', () => {
    const deep = (n: number) => `{"task_id":"t","expected_schema":{},"submitted_output":${'['.repeat(n)}${']'.repeat(n)}}`;
    expect(parseVerificationRequest(deep(63)).request.task_id).toBe('t');
    const e = rejected(deep(64));
    expect(e.fields[0].problem).toContain('64');
    expect(() => parseVerificationRequest(deep(10), { maxDepth: 8 })).toThrow(ApiError);
  });
});

describe('validateRequestValue', () => {
  it('accepts an already-parsed request', () => {
    expect(validateRequestValue({ ...base, rules: [{ type: 'unique', field: 'a' }] }).request.rules).toHaveLength(1);
  });
  it('rejects values that are not JSON and reports unsafe integers by value', () => {
    const bad = (v: unknown) => apiErrorOf(() => validateRequestValue(v)).fields;
    expect(bad({ ...base, submitted_output: { n: Infinity } })[0].field).toBe('submitted_output.n');
    expect(bad({ ...base, submitted_output: { n: undefined } })[0].field).toBe('submitted_output.n');
    expect(bad({ ...base, submitted_output: new Date() })[0].field).toBe('submitted_output');
    expect(bad({ ...base, submitted_output: ['\ud800'] })[0].field).toBe('submitted_output[0]');
    expect(bad({ ...base, expected_schema: { maximum: 2 ** 60 } })[0].field).toBe('expected_schema.maximum');
    expect(bad('x')[0].field).toBe('body');
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    expect(bad({ ...base, submitted_output: deep })[0].problem).toContain('64');
    const p = validateRequestValue({ ...base, submitted_output: { big: 2 ** 60, sci: 1e21, ok: 2 ** 53 - 1 } });
    // judged on the value: 1e21 is a whole number beyond 2^53 however it was written
    expect(p.integrity.unsafeIntegers).toEqual(['$.big', '$.sci']);
  });
});

describe('safe integers are judged on the value', () => {
  const body = (n: string): string => `{"task_id":"t","expected_schema":{},"submitted_output":{"n":${n}}}`;
  it('gives 1e16 and 10000000000000000 the same finding', () => {
    for (const n of ['1e16', '10000000000000000', '1.0e16', '1e300', '-1E+17', '9007199254740993', '9007199254740992.0']) {
      expect(parseVerificationRequest(body(n)).integrity.unsafeIntegers, n).toEqual(['$.n']);
    }
    for (const n of ['9007199254740991', '-9007199254740991', '9.007199254740991e15', '1e15', '0.5', '1e-300']) {
      expect(parseVerificationRequest(body(n)).integrity.unsafeIntegers, n).toEqual([]);
    }
  });

  it('keeps exponent-written large numbers outside the output acceptable (a schema may say multipleOf 1e308)', () => {
    const p = parseVerificationRequest('{"task_id":"t","expected_schema":{"multipleOf":1e308},"submitted_output":1}');
    expect(p.integrity.unsafeIntegers).toEqual([]);
  });
});
