/**
 * @module Property test: the published JSON Schema of the verification request
 * (VERIFICATION_REQUEST_SCHEMA, served in /openapi.json and as the MCP tools'
 * `inputSchema`) accepts and rejects the same requests as the request validator
 * (src/core/request.ts), on generated valid and near-valid requests. Where the
 * schema accepts what the validator refuses, every problem the validator names must
 * be one of the few conditions the schema leaves out on purpose (EXCLUDED below,
 * also listed in the module header of wire-schemas.ts); the reverse (the schema
 * refusing a request the service accepts) is never allowed.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { isApiError, type FieldProblem } from '../errors.js';
import { MAX_ID_LENGTH, validateRequestValue } from '../core/request.js';
import { RULE_TYPES } from '../core/types.js';
import { verificationRequestSchema } from '../http/schemas.js';
import { TOOL_DEFINITIONS } from '../mcp/tool-definitions.js';
import { httpDiscovery } from '../payments/discovery.js';
import { VERIFICATION_REQUEST_SCHEMA } from './wire-schemas.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

/**
 * Validator problems the schema does not express, each as narrow as its message:
 * cross-field conditions and value rules JSON Schema cannot state simply.
 */
const EXCLUDED: ReadonlyArray<{ why: string; field: RegExp; problem: RegExp }> = [
  { why: 'path syntax', field: /^(rules\[\d+\]\.(field|equals_field|other_field|in_field)|bounds\[.*\])$/, problem: /^is not a valid path: / },
  { why: 'a rule takes exactly one reference of its pair', field: /^rules\[\d+\]$/, problem: /^gives (both|neither) '/ },
  { why: 'which references apply to a rule type', field: /^rules\[\d+\]\.(equals_field|equals|other_field|value|in_field|values)$/, problem: /^does not apply to a '/ },
  { why: 'a bound gives min or max', field: /^bounds\[.*\]$/, problem: /^gives neither 'min' nor 'max'$/ },
  { why: "a bound's min <= max", field: /^bounds\[.*\]$/, problem: /^has 'min' greater than 'max'$/ },
  { why: 'integers beyond 2^53 outside the output', field: /^(?!submitted_output\b)/, problem: /^is an integer outside / },
];

const excluded = (p: FieldProblem) => EXCLUDED.some((x) => x.field.test(p.field) && x.problem.test(p.problem));

// Both dialects a client may compile the schema with: draft-07 (the MCP SDK's default Ajv) and 2020-12 (OpenAPI 3.1).
const ajv07 = new Ajv({ allowUnionTypes: true });
const ajv2020 = new Ajv2020({ allowUnionTypes: true });
const schemaAccepts07 = ajv07.compile(VERIFICATION_REQUEST_SCHEMA);
const schemaAccepts2020 = ajv2020.compile(VERIFICATION_REQUEST_SCHEMA);

function validator(value: unknown): { ok: true } | { ok: false; problems: FieldProblem[] } {
  try {
    validateRequestValue(value);
    return { ok: true };
  } catch (e) {
    if (isApiError(e) && e.code === 'invalid_request') return { ok: false, problems: e.fields };
    throw e;
  }
}

/** Checks one request; returns a description of the disagreement, or null. */
function disagreement(value: Json): string | null {
  const byValidator = validator(value);
  for (const [dialect, accepts] of [['draft-07', schemaAccepts07], ['2020-12', schemaAccepts2020]] as const) {
    const bySchema = accepts(value);
    if (bySchema && !byValidator.ok) {
      const unexplained = byValidator.problems.filter((p) => !excluded(p));
      if (unexplained.length > 0) return `schema (${dialect}) accepts, validator refuses: ${JSON.stringify(unexplained)}`;
    }
    if (!bySchema && byValidator.ok) return `schema (${dialect}) refuses a request the validator accepts: ${JSON.stringify(accepts.errors)}`;
  }
  return null;
}

// ---- generators -------------------------------------------------------------------------

const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const validId = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s)),
  // Exactly at the limit, in astral characters: 200 code points are 400 UTF-16 units.
  fc.constantFrom('x'.repeat(MAX_ID_LENGTH), '😀'.repeat(MAX_ID_LENGTH), `a${'𝔸'.repeat(MAX_ID_LENGTH - 1)}`),
);
const control = fc.integer({ min: 0, max: 0x20 }).map((c) => String.fromCharCode(c === 0x20 ? 0x7f : c));
const badId: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(''),
  fc.tuple(validId, control, fc.nat()).map(([s, c, at]) => {
    const cps = [...s];
    cps.splice(at % (cps.length + 1), 0, c);
    return cps.join('');
  }),
  fc.constantFrom('x'.repeat(MAX_ID_LENGTH + 1), '😀'.repeat(MAX_ID_LENGTH + 1), 'é'.repeat(MAX_ID_LENGTH + 7)),
  fc.integer(),
  fc.boolean(),
  fc.constant<Json>([]),
  fc.constant<Json>({}),
);
const path = fc.constantFrom('total', 'items[].price', 'a.b', "['x.y']", 'line_items[].qty', 'n');
const badPath = fc.constantFrom('', 'a..b', '[', 'a[', "['x", '.a');
// Numbers a valid request may carry outside the output: no integer between 2^53 and 1e21 (a request error there).
const num = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ min: -1e15, max: 1e15, noNaN: true }), fc.constantFrom(1e300, -1e21, 5e-324, -0));
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, fc.constant(null));

function withoutUndefined(o: Record<string, Json | undefined>): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

const bound: fc.Arbitrary<Json> = fc
  .record({ a: fc.option(num, { nil: undefined }), b: fc.option(num, { nil: undefined }), if_present: optional(nullable(fc.boolean())) })
  .filter((r) => r.a !== undefined || r.b !== undefined)
  .map(({ a, b, if_present }) => {
    const [min, max] = a !== undefined && b !== undefined ? [Math.min(a, b), Math.max(a, b)] : [a, b];
    return withoutUndefined({ min, max, if_present });
  });

const rule: fc.Arbitrary<Json> = fc
  .record({
    type: fc.constantFrom(...RULE_TYPES),
    field: path,
    byField: fc.boolean(),
    refPath: path,
    constant: num,
    values: fc.array(fc.oneof(num, text, fc.boolean(), fc.constant(null), fc.constant<Json>([1, 'a'])), { maxLength: 3 }) as fc.Arbitrary<Json[]>,
    tolerance: optional(nullable(fc.double({ min: 0, max: 1e15, noNaN: true }))),
    if_present: optional(nullable(fc.boolean())),
    nulls: fc.boolean(),
  })
  .map((r) => {
    const out: Record<string, Json | undefined> = { type: r.type, field: r.field, tolerance: r.tolerance, if_present: r.if_present };
    const pair = { sum_equals: ['equals_field', 'equals'], gte: ['other_field', 'value'], lte: ['other_field', 'value'], exists_in: ['in_field', 'values'], unique: null }[r.type];
    // The canonical form writes every absent reference as null; clients may send it back that way.
    if (r.nulls) for (const k of ['equals_field', 'equals', 'other_field', 'value', 'in_field', 'values']) out[k] = null;
    if (pair) {
      const [f, c] = pair as [string, string];
      if (r.byField) out[f] = r.refPath;
      else out[c] = c === 'values' ? r.values : r.constant;
    }
    return withoutUndefined(out);
  });

const validRequest: fc.Arbitrary<Obj> = fc
  .record({
    task_id: validId,
    agent_id: optional(nullable(validId)),
    // Any object passes the request validator (compiling it is a later step); safe numbers only, as
    // an integer beyond 2^53 outside the output is a request error (one of the exclusions).
    expected_schema: fc.oneof(fc.boolean(), fc.constant({ type: 'object' }), fc.dictionary(text, fc.oneof(fc.boolean(), text, fc.integer(), fc.constant(null)), { maxKeys: 3 })),
    submitted_output: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
    strict_content_check: optional(nullable(fc.boolean())),
    enforce_rules: optional(nullable(fc.boolean())),
    detail: optional(nullable(fc.constantFrom('full', 'compact'))),
    strict_schema: optional(nullable(fc.boolean())),
    bounds: optional(nullable(fc.dictionary(path, bound, { maxKeys: 3 }))),
    rules: optional(nullable(fc.array(rule, { maxLength: 3 }))),
  })
  .map((r) => withoutUndefined(r));

/** Every place in a request outside the two free-form members (schema and output), as a key path. */
function places(v: Json, at: Array<string | number> = []): Array<Array<string | number>> {
  if (at.length === 1 && (at[0] === 'expected_schema' || at[0] === 'submitted_output')) return [at];
  if (v === null || typeof v !== 'object') return [at];
  const inner = Array.isArray(v) ? v.flatMap((x, i) => places(x, [...at, i])) : Object.entries(v).flatMap(([k, x]) => places(x, [...at, k]));
  return [at, ...inner];
}

function parentOf(root: Json, at: Array<string | number>): Obj | Json[] | null {
  let v: Json = root;
  for (const k of at.slice(0, -1)) v = (v as Obj)[k as string] as Json;
  return v !== null && typeof v === 'object' ? v : null;
}

type Mutation =
  | { kind: 'replace'; pick: number; value: Json }
  | { kind: 'delete'; pick: number }
  | { kind: 'add'; pick: number; key: string; value: Json };

const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
  badId,
  badPath,
  fc.constantFrom<Json>(-1, 0, 1.5, 'full', 'compact', 'sum_equals', 'unique', 'min', true, null, [], {}),
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), value: anyValue }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
  fc.record({
    kind: fc.constant('add' as const),
    pick: fc.nat(),
    key: fc.oneof(text, fc.constantFrom('task_id', 'min', 'max', 'if_present', 'tolerance', 'values', 'equals', 'value', 'other_field', 'in_field', 'equals_field', 'type', 'field', 'extra')),
    value: anyValue,
  }),
);

function mutate(request: Obj, m: Mutation): Json {
  const copy = structuredClone(request) as Json;
  const all = places(copy);
  if (m.kind === 'add') {
    const objects = all.filter((at) => {
      const v = at.reduce<Json>((o, k) => (o as Obj)[k as string] as Json, copy);
      return v !== null && typeof v === 'object' && !Array.isArray(v) && !(at.length === 1 && (at[0] === 'expected_schema' || at[0] === 'submitted_output'));
    });
    const at = objects[m.pick % objects.length]!;
    const target = at.reduce<Json>((o, k) => (o as Obj)[k as string] as Json, copy) as Obj;
    target[m.key] = m.value;
    return copy;
  }
  const inner = all.filter((at) => at.length > 0);
  const at = inner[m.pick % inner.length]!;
  const parent = parentOf(copy, at)!;
  const key = at[at.length - 1]!;
  if (m.kind === 'replace') (parent as Obj)[key as string] = m.value;
  else if (Array.isArray(parent)) parent.splice(key as number, 1);
  else delete parent[key as string];
  return copy;
}

const nearValid: fc.Arbitrary<Json> = fc.oneof(
  fc.tuple(validRequest, mutation).map(([r, m]) => mutate(r, m)),
  fc.tuple(validRequest, mutation, mutation).map(([r, m1, m2]) => mutate(mutate(r, m1) as Obj, m2)),
  fc.tuple(validRequest, fc.constantFrom('task_id', 'agent_id'), badId).map(([r, k, id]) => ({ ...r, [k]: id })),
  fc.tuple(validRequest, path, fc.oneof(num, fc.constantFrom<Json>('1', null, true)), fc.oneof(num, fc.constantFrom<Json>('1', null, []))).map(([r, p, min, max]) => ({ ...r, bounds: { [p]: { min, max } } })),
  fc.tuple(validRequest, rule, fc.constantFrom('tolerance', 'if_present', 'values', 'equals', 'value', 'type', 'field'), anyValue).map(([r, ru, k, v]) => ({ ...r, rules: [{ ...(ru as Obj), [k]: v }] })),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
);

// ---- the tests --------------------------------------------------------------------------

describe('published request schema vs the request validator', () => {
  it('is the schema OpenAPI and the MCP verify tool publish', () => {
    const { $id: _id, description: _d, examples: _e, ...openapi } = verificationRequestSchema;
    expect(openapi).toEqual(VERIFICATION_REQUEST_SCHEMA);
    const tool = TOOL_DEFINITIONS.find((t) => t.inputSchema === VERIFICATION_REQUEST_SCHEMA);
    expect(tool).toBeDefined();
  });

  it('accepts every valid request the validator accepts', () => {
    fc.assert(
      fc.property(validRequest, (r) => {
        expect(validator(r)).toEqual({ ok: true });
        expect(disagreement(r)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('accepts and refuses near-valid requests as the validator does', () => {
    let refused = 0;
    fc.assert(
      fc.property(nearValid, (r) => {
        if (!validator(r).ok) refused++;
        expect(disagreement(r)).toBeNull();
      }),
      { numRuns: 3000 },
    );
    // The generator must actually reach the refusals it is about.
    expect(refused).toBeGreaterThan(1000);
  });

  it('the shallow x402 discovery declaration never refuses a request the validator accepts', () => {
    const declared = httpDiscovery('verify') as { bazaar: { schema: { properties: { input: { properties: { body: object } } } } } };
    const accepts = ajv2020.compile(declared.bazaar.schema.properties.input.properties.body);
    fc.assert(
      fc.property(fc.oneof(validRequest, nearValid), (r) => {
        if (validator(r).ok) expect(accepts(r), JSON.stringify(accepts.errors)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees on the id rules at their edges', () => {
    const base = { task_id: 't', expected_schema: true, submitted_output: null };
    const cases: Array<[Json, boolean]> = [
      ['😀'.repeat(MAX_ID_LENGTH), true],
      ['😀'.repeat(MAX_ID_LENGTH + 1), false],
      ['a\nb', false],
      ['a\u007fb', false],
      ['a\u0080b', true],
      ['', false],
    ];
    for (const [id, ok] of cases) {
      for (const key of ['task_id', 'agent_id']) {
        const r = { ...base, [key]: id };
        expect(validator(r).ok, `${key}=${JSON.stringify(id)}`).toBe(ok);
        expect(schemaAccepts07(r), `${key}=${JSON.stringify(id)}`).toBe(ok);
        expect(schemaAccepts2020(r), `${key}=${JSON.stringify(id)}`).toBe(ok);
      }
    }
  });

  it('leaves out only the listed conditions, each reached by the generator', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(nearValid, (r) => {
        const v = validator(r);
        if (v.ok || !schemaAccepts2020(r)) return;
        for (const p of v.problems) for (const x of EXCLUDED) if (x.field.test(p.field) && x.problem.test(p.problem)) seen.add(x.why);
      }),
      { numRuns: 3000, seed: 1 },
    );
    // Integers beyond 2^53 outside the output are rare in generated doubles; the rest must show up.
    expect([...seen]).toEqual(expect.arrayContaining(EXCLUDED.map((x) => x.why).filter((w) => !w.startsWith('integers'))));
  });
});
