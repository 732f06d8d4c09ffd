/**
 * @module Work limits: the hostile schema families (exponential $ref towers through
 * allOf/anyOf/oneOf/$dynamicRef, huge counted repetition, slow patterns on long
 * input, backreferences) get a too_complex error naming the location and the
 * limit; limits are counted in steps, so the answer is the same on the closure
 * path and the generated-code path; real documents stay far inside.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../types.js';
import { ApiError } from '../../errors.js';
import { parseVerificationRequest } from '../request.js';
import { createVerifier } from '../verify.js';
import { createSchemaCache, createSchemaEngine, DEFAULT_WORK_LIMITS, SchemaCompileError, type SchemaCompileProblem } from './index.js';
import { propertyAlternation } from '../../../test/unicode-properties.js';

const engine = createSchemaEngine();

function tower(depth: number, keyword: string, ref = '$ref'): Json {
  const defs: Record<string, Json> = {};
  for (let i = 0; i < depth; i++) defs[`d${i}`] = { [keyword]: [{ [ref]: `#/$defs/d${i + 1}` }, { [ref]: `#/$defs/d${i + 1}` }] };
  defs[`d${depth}`] = { type: 'integer', minimum: 0 };
  return { $defs: defs, $ref: '#/$defs/d0' };
}

/** The too_complex problem of compiling and evaluating `schema` on `instance` twice (closures, then generated code). */
function problem(schema: Json, instance: Json, e = engine): SchemaCompileProblem | null {
  try {
    const c = e.compile(schema);
    c.evaluate(instance);
    c.evaluate(instance);
    return null;
  } catch (err) {
    if (err instanceof SchemaCompileError) return err.problem;
    throw err;
  }
}

describe('work limits: hostile schemas are refused, never run for long', () => {
  it.each(['allOf', 'anyOf', 'oneOf'])('refuses the exponential %s/$ref tower at compile time, naming where it explodes', (kw) => {
    const p = problem(tower(32, kw), 'x');
    expect(p).toMatchObject({ kind: 'too_complex', limit: 'maxExpandedSchemaSize', max: DEFAULT_WORK_LIMITS.maxExpandedSchemaSize });
    expect((p as { path: string }).path).toMatch(/^#\/\$defs\/d\d+$/);
  });

  it('refuses the $dynamicRef tower too', () => {
    expect(problem(tower(32, 'allOf', '$dynamicRef'), 5)).toMatchObject({ kind: 'too_complex', limit: 'maxExpandedSchemaSize' });
  });

  it('bounds evaluation by steps when the expansion limit is raised', () => {
    const loose = createSchemaEngine({ limits: { maxExpandedSchemaSize: 1e9, maxEvaluationSteps: 100_000 } });
    expect(problem(tower(24, 'allOf'), 5, loose)).toMatchObject({ kind: 'too_complex', limit: 'maxEvaluationSteps', max: 100_000 });
    expect(problem(tower(24, 'anyOf'), 'x', loose)).toMatchObject({ kind: 'too_complex', limit: 'maxEvaluationSteps' });
  });

  it('refuses counted repetition that expands past the pattern size limit before building anything', () => {
    expect(problem({ pattern: '(?:a{0,1000}){100}' }, 'a')).toMatchObject({ kind: 'too_complex', limit: 'maxPatternSize', path: '#/pattern' });
    expect(problem({ properties: { p: { pattern: '(?:\\P{L}){1000}$' } } }, {})).toMatchObject({ limit: 'maxPatternSize', path: '#/properties/p/pattern' });
    expect(problem({ patternProperties: { '(?<=a)(?:a|b){1,5000}c': true } }, {})).toMatchObject({ limit: 'maxPatternSize' });
  });

  it('refuses many large patterns by the compiled size of the schema', () => {
    const properties: Record<string, Json> = {};
    for (let i = 0; i < 200; i++) properties[`p${i}`] = { pattern: `^(?:[a-z]{0,1000}){2}${i}$` };
    expect(problem({ properties }, {})).toMatchObject({ kind: 'too_complex', limit: 'maxCompiledSize' });
  });

  it('charges pattern work over the input before running it, for every matcher', () => {
    const cases: Array<[string, string]> = [
      ['(?:a{0,100}){20}$', 'a'.repeat(3000) + 'b'], // large program (automaton: over RE2's repetition limit)
      ['(?:[a-z]{1,10}){100}$', 'a'.repeat(20_000) + '1'], // re2, large program
      ['(?<=a)(?:a|b){1,500}c', 'a'.repeat(100_000)], // lookaround automaton
      ['(a|a)'.repeat(13) + '\\1x', 'a'.repeat(100_000)], // backtracking with a backreference
      ['^[a-z ]+$', 'a'.repeat(1_000_000)], // a cheap pattern on a very long string
    ];
    for (const [pattern, input] of cases) {
      expect(problem({ pattern }, input), pattern).toMatchObject({ kind: 'too_complex', limit: 'maxEvaluationSteps', path: '#/pattern' });
    }
    // the same patterns on short input are fine
    for (const [pattern] of cases) expect(problem({ pattern }, 'aac'), pattern).toBeNull();
  });

  it('refuses 260 distinct Unicode property classes from the pattern text, before building their tables', () => {
    const p = propertyAlternation(260);
    const max = DEFAULT_WORK_LIMITS.maxPropertyTables;
    const cases: Array<[Json, string]> = [
      [{ pattern: p }, '#/pattern'],
      [{ properties: { name: { pattern: p } } }, '#/properties/name/pattern'],
      [{ patternProperties: { [p]: true } }, `#/patternProperties/${p}`],
      [{ propertyNames: { pattern: p } }, '#/propertyNames/pattern'],
    ];
    for (const [schema, path] of cases) {
      const t0 = performance.now();
      expect(problem(schema, { a: 'x' })).toMatchObject({ kind: 'too_complex', limit: 'maxPropertyTables', max, path });
      // building one table scans every code point; a refusal builds none
      expect(performance.now() - t0).toBeLessThan(1000);
    }
  });

  it('counts distinct property tables across the whole schema, each spelling of one table once', () => {
    const e = createSchemaEngine({ limits: { maxPropertyTables: 3 } });
    // gc=Lu, General_Category=Lu and Lu are one table, \P{…} uses the table of \p{…}, sc= is Script=
    const three = { properties: { a: { pattern: '^\\p{Lu}\\P{gc=Lu}$' }, b: { pattern: '\\p{General_Category=Lu}|\\p{sc=Greek}' }, c: { pattern: '[\\p{Script=Greek}\\p{N}]' } } };
    expect(problem(three, { a: 'Ab', b: 'λ', c: '7' }, e)).toBeNull();
    expect(e.compile(three).evaluate({ a: 'Ab', b: 'λ', c: 'x' }).valid).toBe(false);
    // a fourth table in another pattern of the same schema is one too many, named where it is used
    const four = { properties: { ...three.properties, d: { pattern: '\\p{Script=Han}' } } };
    expect(problem(four, {}, e)).toMatchObject({ kind: 'too_complex', limit: 'maxPropertyTables', max: 3, path: '#/properties/d/pattern' });
    // a literal backslash followed by p is no property class
    expect(problem({ pattern: '[\\\\p{L}]\\p{Lu}\\p{Ll}\\p{Lt}' }, 'x', e)).toBeNull();
  });

  it('gives the same answer whether the tables are already built in this process or not', () => {
    // classes this file uses nowhere else: the first compile builds their tables
    const classes = ['Soft_Dotted', 'Radical', 'Join_Control', 'Quotation_Mark', 'Sentence_Terminal'].map((b) => `\\p{${b}}`);
    const e = createSchemaEngine({ limits: { maxPropertyTables: 4 } });
    const over = { pattern: classes.join('|') };
    const within = { pattern: classes.slice(0, 4).join('|') };
    const outcome = (s: Json): string => {
      const p = problem(s, 'x', e);
      return p === null ? 'verdict' : p.kind === 'too_complex' ? p.limit : p.kind;
    };
    const outcomes = [over, within, over, within].map(outcome);
    expect(outcomes).toEqual(['maxPropertyTables', 'verdict', 'maxPropertyTables', 'verdict']);
    // every table built now, the five-table pattern is still refused
    expect(problem({ pattern: classes.slice(4).join('|') }, 'x', e)).toBeNull();
    expect(outcome(over)).toBe('maxPropertyTables');
  });

  it('refuses a backreference it cannot bound, saying why', () => {
    expect(problem({ pattern: '^(a+)\\1$' }, 'aa')).toMatchObject({ kind: 'too_complex', limit: 'backreferencePaths', path: '#/pattern' });
  });

  it('charges data-proportional keyword work (uniqueItems, unevaluatedProperties) too', () => {
    const small = createSchemaEngine({ limits: { maxEvaluationSteps: 15_000 } });
    const many = Array.from({ length: 20_000 }, (_, i) => ({ a: i }));
    expect(problem({ uniqueItems: true }, many, small)).toMatchObject({ limit: 'maxEvaluationSteps' });
    const wide = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]));
    expect(problem({ unevaluatedProperties: false }, wide, small)).toMatchObject({ limit: 'maxEvaluationSteps' });
  });
});

describe('work limits: deterministic and roomy', () => {
  it('charges the same steps on the closure path and the generated-code path', () => {
    const schema: Json = {
      type: 'object',
      required: ['id', 'items'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', pattern: '^[A-Z]{2}-[0-9]+$', minLength: 3 },
        mail: { type: 'string', format: 'email' },
        items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer', minimum: 1, multipleOf: 0.5 } } } },
      },
    };
    const docs: Json[] = [
      { id: 'AB-12', mail: 'a@b.example', items: [{ n: 1 }, { n: 2 }] },
      { id: 'x', mail: 'nope', items: [{ n: 0.25 }, { n: 'a' }], extra: true },
      { items: 'no' },
    ];
    const closures = createSchemaEngine({ generatedCode: false }).compile(schema);
    const generated = engine.compile(schema);
    for (const doc of docs) {
      const first = generated.evaluate(doc); // closures (first use)
      const second = generated.evaluate(doc); // generated code
      const reference = closures.evaluate(doc);
      expect(second.steps, JSON.stringify(doc)).toBe(first.steps);
      expect(reference.steps).toBe(first.steps);
      expect([second.passed, second.total]).toEqual([reference.passed, reference.total]);
    }
  });

  it('gives the same answer at the limit on first and later evaluations', () => {
    const schema: Json = { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' } };
    const probe = engine.compile(schema).evaluate(['abc', 'def', 'x1']).steps;
    for (const max of [probe - 1, probe]) {
      const e = createSchemaEngine({ limits: { maxEvaluationSteps: max } });
      const c = e.compile(schema);
      const outcomes = [0, 1, 2].map(() => problem(schema, ['abc', 'def', 'x1'], e)?.kind ?? 'verdict');
      void c;
      expect(new Set(outcomes).size, `limit ${max}`).toBe(1);
      expect(outcomes[0]).toBe(max < probe ? 'too_complex' : 'verdict');
    }
  });

  it('leaves a 1,000-line invoice far inside the limits', () => {
    const schema: Json = {
      type: 'object',
      required: ['invoice_id', 'line_items'],
      properties: {
        invoice_id: { type: 'string', pattern: '^INV-[0-9]{4}$' },
        line_items: {
          type: 'array',
          items: { type: 'object', required: ['sku', 'qty'], properties: { sku: { type: 'string', pattern: '^[A-Z]{1,4}-[0-9]{1,6}$' }, qty: { type: 'integer', minimum: 1 } } },
        },
      },
    };
    const doc = { invoice_id: 'INV-0001', line_items: Array.from({ length: 1000 }, (_, i) => ({ sku: `AB-${i}`, qty: 1 })) };
    const c = engine.compile(schema);
    const r = c.evaluate(doc);
    expect(r.valid).toBe(true);
    expect(r.steps).toBeLessThan(DEFAULT_WORK_LIMITS.maxEvaluationSteps / 20);
    expect(c.compiledSize).toBeLessThan(DEFAULT_WORK_LIMITS.maxCompiledSize / 100);
  });
});

describe('too_complex through the verifier', () => {
  const verifier = createVerifier({ engine });
  const refuse = (schema: Json, output: Json): ApiError => {
    try {
      verifier.evaluate(parseVerificationRequest(JSON.stringify({ task_id: 't', expected_schema: schema, submitted_output: output })));
    } catch (e) {
      if (e instanceof ApiError) return e;
      throw e;
    }
    throw new Error('expected an error, got a verdict');
  };

  it('is a 422 too_complex naming the schema location, the limit and a fix', () => {
    const e = refuse(tower(32, 'allOf'), 1);
    expect([e.code, e.status]).toEqual(['too_complex', 422]);
    expect(e.fields[0].field).toMatch(/^expected_schema\['\$defs'\]\.d\d+$/);
    expect(e.fields[0].problem).toContain('SCHEMA_MAX_EXPANDED_SIZE = 100000');
    expect(e.fields[0].fix).toMatch(/Flatten/);
    expect(e.toBody().charged).toBe(false);
  });

  it('names the pattern and says why a valid backreference pattern is refused', () => {
    const e = refuse({ properties: { code: { pattern: '^(a+)\\1$' } } }, { code: 'aa' });
    expect(e.code).toBe('too_complex');
    expect(e.fields[0].field).toBe('expected_schema.properties.code.pattern');
    expect(e.fields[0].problem).toMatch(/backreference/);
    expect(e.fields[0].fix).toMatch(/Remove the backreference|bound the repetition/);
    expect(e.fields[0].fix).not.toMatch(/valid ECMA-262/);
  });

  it('reports evaluation over the step limit the same way', () => {
    const e = refuse({ pattern: '^[a-z ]+$' }, 'a'.repeat(1_000_000));
    expect(e.code).toBe('too_complex');
    expect(e.fields[0].field).toBe('expected_schema.pattern');
    expect(e.fields[0].problem).toContain('SCHEMA_MAX_EVALUATION_STEPS');
  });
});

describe('the compiled-schema cache is bounded in bytes', () => {
  it('drops the least recently used entries to stay under its byte budget', () => {
    const cache = createSchemaCache({ engine, maxBytes: 5_000_000 });
    for (let i = 0; i < 100; i++) {
      const properties: Record<string, Json> = {};
      for (let j = 0; j < 20; j++) properties[`p${j}`] = { type: 'string', pattern: `^[a-z]{1,${j + 1}}-${i}$` };
      cache.get(`k${i}`, { properties });
      expect(cache.bytes).toBeLessThanOrEqual(5_000_000);
    }
    expect(cache.size).toBeGreaterThan(0);
    expect(cache.size).toBeLessThan(100);
  });

  it('does not keep an entry larger than the whole budget', () => {
    const cache = createSchemaCache({ engine, maxBytes: 10_000 });
    const big = { properties: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`p${i}`, { pattern: `^(?:ab){1,${i + 2}}$` }])) };
    expect(cache.get('big', big).evaluate({}).valid).toBe(true);
    expect(cache.size).toBe(0);
  });
});

describe('failures past the list cap', () => {
  it('are counted, not built, so a large failing output gets a verdict with exact totals', () => {
    const v = createVerifier({ engine, listCap: 10 });
    const output = [...Array.from({ length: 200_000 }, () => 1), 'ok', { a: 1 }];
    const body = JSON.stringify({ task_id: 't', expected_schema: { items: { type: 'string' }, maxItems: 3 }, submitted_output: output });
    const r = v.evaluate(parseVerificationRequest(body));
    expect(r.result).toBe('fail');
    expect(r.schema_compliance).toMatchObject({ passed: 1, total: 200_003 });
    expect([r.errors_total, r.errors.length, r.errors_omitted]).toEqual([200_002, 10, 199_992]);
    expect(r.hints_total).toBe(200_002);
    // maxItems fails after the cap is reached: it still blocks
    expect(r.blocking_checks).toEqual(['schema:type', 'schema:maxItems']);
    const direct = engine.compile({ items: { type: 'string' } }).evaluate([1, 2, 3], { maxFailures: 1 });
    expect([direct.failures.length, direct.omitted, direct.total - direct.passed]).toEqual([1, 2, 3]);
  });
});
