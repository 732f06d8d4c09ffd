import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { createSchemaEngine } from './schema/index.js';
import { parseVerificationRequest } from './request.js';
import { createVerifier } from './verify.js';
import { applyPatch } from './json-patch.js';
import { locationTokens, losslessNumber } from './repairs.js';
import type { Hint, Json, Repair, Verdict } from './types.js';

const verifier = createVerifier({ engine: createSchemaEngine() });
const verify = (request: object): Verdict => verifier.evaluate(parseVerificationRequest(JSON.stringify(request)));
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;
const one = (schema: Json, output: Json): Verdict => verify({ task_id: 't', expected_schema: schema, submitted_output: output });
const repairOf = (v: Verdict, check: string): Repair | undefined => v.hints.find((h) => h.check === check)?.repair;

/** Every determined patch of a verdict, applied in hint order. */
function applyDetermined(output: Json, hints: readonly Hint[]): Json {
  let doc: unknown = output;
  for (const h of hints) if (h.repair?.certainty === 'determined') doc = applyPatch(doc, h.repair.patch);
  return doc as Json;
}

describe('repairs in the verdict (docs/protocol.md#repairs)', () => {
  it('the invoice with a wrong total gets a candidate: replace the total, or one of the lines', () => {
    const v = verify(fixture('invoice.request.json'));
    expect(v.result).toBe('fail');
    const hint = v.hints.find((h) => h.check === 'consistency:sum_equals');
    expect(Object.keys(hint ?? {})).toEqual(['source', 'check', 'path', 'expected', 'found', 'repair']);
    const repair = hint?.repair;
    expect(repair?.certainty).toBe('candidate');
    if (repair?.certainty !== 'candidate') return;
    expect(repair.options.map((o) => o.patch)).toEqual([
      [{ op: 'replace', path: '/total', value: 129.5 }],
      [{ op: 'replace', path: '/line_items/0/line_total', value: 92.5 }],
      [{ op: 'replace', path: '/line_items/1/line_total', value: 48 }],
    ]);
    // Each option, applied alone, makes the request pass; none is applied by the verifier.
    const request = fixture('invoice.request.json');
    for (const option of repair.options) {
      expect(verify({ ...request, submitted_output: applyPatch(request.submitted_output, option.patch) }).result).toBe('pass');
    }
    // Candidates are not counted as determined: the next action stays the hints.
    expect(v.next_actions).toEqual([{ action: 'repair_and_reverify', using: 'hints' }]);
    // A repair never changes a count.
    expect(v.overall).toEqual({ ratio: 0.96, passed: 24, total: 25 });
  });

  it('sums exactly: lines 0.1 and 0.2 against a total of 0.4 suggest a total of 0.3', () => {
    const v = verify({
      task_id: 't',
      expected_schema: true,
      submitted_output: { lines: [0.1, 0.2], total: 0.4 },
      rules: [{ type: 'sum_equals', field: 'lines[]', equals_field: 'total' }],
      enforce_rules: true,
    });
    const r = repairOf(v, 'consistency:sum_equals');
    expect(r?.certainty === 'candidate' && r.options[0].patch).toEqual([{ op: 'replace', path: '/total', value: 0.3 }]);
  });

  it('"12" in an integer field gets a determined patch, and apply_repairs comes first', () => {
    const v = one({ type: 'object', properties: { qty: { type: 'integer' } } }, { qty: '12' });
    expect(repairOf(v, 'schema:type')).toEqual({ certainty: 'determined', patch: [{ op: 'replace', path: '/qty', value: 12 }], note: 'Send the number 12 instead of the text that spells it.' });
    expect(v.next_actions).toEqual([{ action: 'apply_repairs', count: 1 }, { action: 'repair_and_reverify', using: 'hints' }]);
    expect(one({ type: 'object', properties: { qty: { type: 'integer' } } }, { qty: 12 }).result).toBe('pass');
  });

  it('no repair where the fix is not known', () => {
    const int = { type: 'object', properties: { qty: { type: 'integer' } } };
    for (const text of ['12abc', '1.5', ' 12', '0x10', '9007199254740993', '1e400', '', '+1', '01']) {
      expect(repairOf(one(int, { qty: text }), 'schema:type'), text).toBeUndefined();
    }
    // Two enum members equal up to case: which one is meant is not known.
    expect(repairOf(one({ enum: ['usd', 'USD', 'EUR'] }, 'Usd'), 'schema:enum')).toBeUndefined();
    // A day-first date is ambiguous.
    expect(repairOf(one({ format: 'date' }, '02/01/2024'), 'schema:format')).toBeUndefined();
    // A time without a zone is not one instant.
    expect(repairOf(one({ format: 'date-time' }, '2024-01-02 10:00:00'), 'schema:format')).toBeUndefined();
    // Not rounding error: 1.000000000001 is meant as written.
    expect(repairOf(one({ multipleOf: 1 }, 1.000000000001), 'schema:multipleOf')).toBeUndefined();
    // A missing property without a default.
    expect(repairOf(one({ required: ['a'], properties: { a: { type: 'string' } } }, {}), 'schema:required')).toBeUndefined();
    // Other keywords carry prose only.
    expect(repairOf(one({ pattern: '^A' }, 'b'), 'schema:pattern')).toBeUndefined();
  });

  it('a determined patch that would break another check at that value is dropped', () => {
    // "12" → 12 would fail minimum 20, which does not apply to a string today.
    const v = one({ type: 'object', properties: { qty: { type: 'integer', minimum: 20 } } }, { qty: '12' });
    expect(v.result).toBe('fail');
    expect(repairOf(v, 'schema:type')).toBeUndefined();
    expect(v.next_actions).toEqual([{ action: 'repair_and_reverify', using: 'hints' }]);
    // A const that another branch contradicts.
    const c = one({ allOf: [{ const: 'a' }, { not: { const: 'a' } }] }, 'b');
    expect(repairOf(c, 'schema:const')).toBeUndefined();
  });

  it('each determined kind, applied, passes', () => {
    const schema = {
      type: 'object',
      required: ['a', 'b'],
      properties: {
        a: { const: 'x' },
        b: { type: 'integer', default: 3 },
        c: { enum: ['USD', 'EUR'] },
        d: { format: 'date' },
        t: { format: 'date-time' },
        m: { multipleOf: 0.01 },
        one: { enum: ['only'] },
        'odd/key~': { type: 'number' },
      },
      additionalProperties: false,
    };
    const output = { a: 'y', c: ' usd', d: '2024/1/02', t: '2024-01-02 10:00:00+0200', m: 0.1 + 0.2, one: 'other', 'odd/key~': '-2.50e1', z: 1 };
    const v = one(schema, output);
    const kinds = v.hints.map((h) => [h.check, h.repair?.certainty]);
    expect(kinds).toEqual([
      ['schema:required', 'determined'],
      ['schema:const', 'determined'],
      ['schema:enum', 'determined'],
      ['schema:format', 'determined'],
      ['schema:format', 'determined'],
      ['schema:multipleOf', 'determined'],
      ['schema:enum', 'determined'],
      ['schema:type', 'determined'],
      ['schema:additionalProperties', 'determined'],
    ]);
    expect(v.next_actions[0]).toEqual({ action: 'apply_repairs', count: 9 });
    const fixed = applyDetermined(output, v.hints);
    expect(fixed).toEqual({ a: 'x', c: 'USD', d: '2024-01-02', t: '2024-01-02T10:00:00+02:00', m: 0.3, one: 'only', 'odd/key~': -25, b: 3 });
    expect(one(schema, fixed).result).toBe('pass');
  });

  it('bounds, minimum and maxLength get no repair: a clamp or a cut is no choice between fixes', () => {
    const v = verify({ task_id: 't', expected_schema: { properties: { s: { maxLength: 2 }, n: { minimum: 1 } } }, submitted_output: { s: 'a😀c', n: 0, p: 250 }, bounds: { p: { min: 0, max: 100 } }, enforce_rules: true });
    expect(v.hints.map((h) => h.check).sort()).toEqual(['bounds:range', 'schema:maxLength', 'schema:minimum']);
    for (const h of v.hints) expect(h.repair, h.check).toBeUndefined();
    expect(v.next_actions).toEqual([{ action: 'repair_and_reverify', using: 'hints' }]);
  });

  it('a candidate always offers two or more options: a sum over more lines than are listed keeps none', () => {
    const lines = Array.from({ length: 12 }, (_, i) => ({ sku: `s${i}`, t: 1 }));
    const v = verify({ task_id: 't', expected_schema: {}, submitted_output: { lines, total: 13 }, rules: [{ type: 'sum_equals', field: 'lines[].t', equals_field: 'total' }], enforce_rules: true });
    expect(v.result).toBe('fail');
    for (const h of v.hints) if (h.repair?.certainty === 'candidate') expect(h.repair.options.length).toBeGreaterThanOrEqual(2);
    const two = verify({ task_id: 't', expected_schema: {}, submitted_output: { lines: lines.slice(0, 2), total: 3 }, rules: [{ type: 'sum_equals', field: 'lines[].t', equals_field: 'total' }], enforce_rules: true });
    const r = two.hints.find((h) => h.check === 'consistency:sum_equals')?.repair;
    expect(r?.certainty === 'candidate' && r.options.length).toBe(3);
  });

  it('the compact form carries no hints and so no repairs', () => {
    const v = one({ type: 'integer' }, '12');
    expect(v.hints[0].repair?.certainty).toBe('determined');
    const compact = verify({ task_id: 't', expected_schema: { type: 'integer' }, submitted_output: '12', detail: 'compact' });
    expect(compact.next_actions[0]).toEqual({ action: 'apply_repairs', count: 1 });
  });
});

describe('helpers', () => {
  it('losslessNumber reads only JSON numbers whose decimal value the double holds', () => {
    expect(losslessNumber('12')).toBe(12);
    expect(losslessNumber('12.50')).toBe(12.5);
    expect(losslessNumber('-0')).toBe(0);
    expect(losslessNumber('1e3')).toBe(1000);
    expect(losslessNumber('0.1')).toBe(0.1);
    for (const bad of ['12abc', '1.', '.5', '9007199254740993', '9007199254740992', '1e300', '0.30000000000000000001', 'NaN', 'Infinity', '1e309']) expect(losslessNumber(bad), bad).toBeNull();
  });

  it('locationTokens inverts the verifier’s locations', () => {
    expect(locationTokens('$')).toEqual([]);
    expect(locationTokens('$.a[1].b_2')).toEqual(['a', 1, 'b_2']);
    expect(locationTokens("$['a.b']['it\\'s']")).toEqual(['a.b', "it's"]);
    expect(locationTokens('$.a[].b')).toBeNull();
  });
});

// ---------------------------------------------------------------------------
// Property: a single corruption with a determined repair, patched, passes again.

type Kind = {
  schema: Json;
  valid: fc.Arbitrary<Json>;
  /** A corrupted value (or `undefined`: delete the property) with a determined fix. */
  corrupt(value: Json): fc.Arbitrary<Json | undefined>;
  required?: boolean;
};

const pad2 = (n: number) => String(n).padStart(2, '0');
const dateArb = fc.record({ y: fc.integer({ min: 1900, max: 2199 }), m: fc.integer({ min: 1, max: 12 }), d: fc.integer({ min: 1, max: 28 }) });
const nextUp = (x: number) => {
  const b = new Float64Array([x]);
  const i = new BigInt64Array(b.buffer);
  i[0] += x >= 0 ? 1n : -1n;
  return b[0];
};

const KINDS: Record<string, (seed: number) => Kind> = {
  const: () => ({
    schema: { const: 'fixed-value' },
    valid: fc.constant('fixed-value'),
    corrupt: () => fc.oneof(fc.string(), fc.integer(), fc.constant(null)).filter((x) => x !== 'fixed-value'),
  }),
  enum: () => ({
    schema: { enum: ['Draft', 'SENT', 'paid', 42] },
    valid: fc.constantFrom('Draft', 'SENT', 'paid', 42),
    corrupt: (v) =>
      typeof v === 'string'
        ? fc.constantFrom(v.toUpperCase(), v.toLowerCase(), ` ${v}`, `${v}\t`).filter((x) => x !== v)
        : fc.constant(v),
  }),
  single: () => ({ schema: { enum: ['only'] }, valid: fc.constant('only'), corrupt: () => fc.constantFrom('other', 1, false) }),
  integer: () => ({
    schema: { type: 'integer', minimum: -1000000 },
    valid: fc.integer({ min: -1000000, max: Number.MAX_SAFE_INTEGER }),
    corrupt: (v) => fc.constant(String(v)),
  }),
  number: () => ({
    schema: { type: ['number', 'null'] },
    valid: fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x) || Number.isSafeInteger(x)).map((x) => (Object.is(x, -0) ? 0 : x)),
    corrupt: (v) => fc.constant(String(v)),
  }),
  date: () => ({
    schema: { type: 'string', format: 'date' },
    valid: dateArb.map(({ y, m, d }) => `${y}-${pad2(m)}-${pad2(d)}`),
    corrupt: (v) => {
      const [y, m, d] = String(v).split('-');
      return fc.constantFrom(`${y}/${m}/${d}`, `${y}.${Number(m)}.${Number(d)}`, `${y}-${Number(m)}-${Number(d)}`, ` ${String(v)} `).filter((x) => x !== v);
    },
  }),
  dateTime: () => ({
    schema: { type: 'string', format: 'date-time' },
    valid: fc
      .record({ date: dateArb, h: fc.integer({ min: 0, max: 23 }), mi: fc.integer({ min: 0, max: 59 }), z: fc.constantFrom('Z', '+02:00', '-05:30') })
      .map(({ date, h, mi, z }) => `${date.y}-${pad2(date.m)}-${pad2(date.d)}T${pad2(h)}:${pad2(mi)}:00${z}`),
    corrupt: (v) => {
      const s = String(v);
      return fc.constantFrom(s.replace('T', ' '), s.replace(/([+-]\d\d):(\d\d)$/, '$1$2'), s.replace(':00Z', 'Z').replace(/:00([+-])/, '$1')).filter((x) => x !== s);
    },
  }),
  cents: () => ({
    schema: { type: 'number', multipleOf: 0.01 },
    valid: fc.integer({ min: -10000000, max: 10000000 }).filter((k) => k !== 0).map((k) => k / 100),
    corrupt: (v) => fc.constant(nextUp(v as number)),
  }),
  withDefault: () => ({
    schema: { type: 'string', default: 'n/a', minLength: 1 },
    valid: fc.string({ minLength: 1, maxLength: 5 }),
    corrupt: () => fc.constant(undefined),
    required: true,
  }),
};
const KIND_NAMES = Object.keys(KINDS);
const KEYS = ['a', 'b.c', 'x/y', 't~0', 'qty', 'Σ', '__proto__', 'constructor'];

const caseArb = fc
  .uniqueArray(fc.record({ key: fc.constantFrom(...KEYS), kind: fc.constantFrom(...KIND_NAMES) }), { minLength: 1, maxLength: 5, selector: (p) => p.key })
  .chain((props) => {
    const kinds = props.map((p) => ({ key: p.key, kind: KINDS[p.kind](0) }));
    const nested = fc.boolean();
    return fc.record({
      kinds: fc.constant(kinds),
      values: fc.tuple(...kinds.map((k) => k.kind.valid)),
      nested,
      closed: fc.boolean(),
      target: fc.integer({ min: 0, max: kinds.length }),
    });
  })
  .chain(({ kinds, values, nested, closed, target }) => {
    const corruption: fc.Arbitrary<{ index: number; value: Json | undefined } | { extra: string }> =
      target === kinds.length
        ? fc.constant({ extra: 'unexpected' })
        : kinds[target].kind.corrupt(values[target]).map((value) => ({ index: target, value }));
    return fc.record({ kinds: fc.constant(kinds), values: fc.constant(values), nested: fc.constant(nested), closed: fc.constant(closed || target === kinds.length), corruption });
  });

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function build(c: Case): { schema: Json; valid: Json; corrupted: Json } {
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  const valid: Record<string, Json> = {};
  const corrupted: Record<string, Json> = {};
  c.kinds.forEach(({ key, kind }, i) => {
    Object.defineProperty(properties, key, { value: kind.schema, enumerable: true, writable: true, configurable: true });
    if (kind.required) required.push(key);
    Object.defineProperty(valid, key, { value: c.values[i], enumerable: true, writable: true, configurable: true });
    const hit = 'index' in c.corruption && c.corruption.index === i ? c.corruption : null;
    if (hit === null) Object.defineProperty(corrupted, key, { value: c.values[i], enumerable: true, writable: true, configurable: true });
    else if (hit.value !== undefined) Object.defineProperty(corrupted, key, { value: hit.value, enumerable: true, writable: true, configurable: true });
  });
  if ('extra' in c.corruption) corrupted[c.corruption.extra] = 1;
  let schema: Json = { type: 'object', properties, ...(required.length ? { required } : {}), ...(c.closed ? { additionalProperties: false } : {}) };
  let validDoc: Json = valid;
  let corruptedDoc: Json = corrupted;
  if (c.nested) {
    schema = { type: 'object', required: ['items'], properties: { items: { type: 'array', items: schema } } };
    validDoc = { items: [valid, valid] };
    corruptedDoc = { items: [valid, corrupted] };
  }
  return { schema, valid: validDoc, corrupted: corruptedDoc };
}

describe('property: determined repairs restore a passing document', () => {
  it('5,000+ single corruptions with a determined repair: every patched output passes', () => {
    const stats = { cases: 0, withDetermined: 0, regressions: 0 };
    fc.assert(
      fc.property(caseArb, (c) => {
        stats.cases++;
        const { schema, valid, corrupted } = build(c);
        expect(one(schema, valid).result).toBe('pass');
        const v = one(schema, corrupted);
        if (v.result === 'pass') return; // e.g. an enum member changed to the value it already was
        const determined = v.hints.filter((h) => h.repair?.certainty === 'determined');
        if (determined.length === 0) return;
        stats.withDetermined++;
        expect(v.next_actions[0]).toEqual({ action: 'apply_repairs', count: determined.length });
        const patched = applyDetermined(corrupted, v.hints);
        const after = one(schema, patched);
        if (after.result !== 'pass') stats.regressions++;
        if (after.result !== "pass") throw new Error(`not restored: ${JSON.stringify({ schema, corrupted, patched, errors: after.errors })}`);
      }),
      { numRuns: 6000, seed: 390439 },
    );
    if (process.env.REPAIR_STATS) console.log(JSON.stringify(stats));
    expect(stats.regressions).toBe(0);
    expect(stats.withDetermined).toBeGreaterThanOrEqual(5000);
  }, 120_000);
});
