/** @module Engine behaviour: check counting (docs/protocol.md#schema-checks), failure descriptions, compile errors, the cache. */
import { describe, expect, it } from 'vitest';
import type { Json } from '../types.js';
import { createSchemaCache, createSchemaEngine, SchemaCompileError } from './index.js';

const engine = createSchemaEngine();

const INVOICE_SCHEMA: Json = {
  type: 'object',
  required: ['invoice_id', 'currency', 'line_items', 'total'],
  properties: {
    invoice_id: { type: 'string', pattern: '^INV-[0-9]{4}$' },
    currency: { enum: ['USD', 'EUR'] },
    line_items: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['sku', 'qty', 'line_total'],
        properties: {
          sku: { type: 'string' },
          qty: { type: 'integer', minimum: 1 },
          line_total: { type: 'number', minimum: 0 },
        },
      },
    },
    total: { type: 'number' },
  },
};

const INVOICE: Json = {
  invoice_id: 'INV-0001',
  currency: 'USD',
  line_items: [
    { sku: 'A-1', qty: 2, line_total: 87.0 },
    { sku: 'B-2', qty: 1, line_total: 42.5 },
  ],
  total: 135.0,
};

function counts(schema: Json, instance: Json): [number, number, boolean] {
  const r = engine.compile(schema).evaluate(instance);
  return [r.passed, r.total, r.valid];
}

describe('the invoice example (docs/protocol.md#worked-example)', () => {
  it('has 22 schema checks, all passing', () => {
    const r = engine.compile(INVOICE_SCHEMA).evaluate(INVOICE);
    expect(r).toMatchObject({ valid: true, passed: 22, total: 22, failures: [] });
  });

  it('reports a failing line item with a concrete path and message', () => {
    const bad = structuredClone(INVOICE) as any;
    bad.line_items[1].qty = 0;
    const r = engine.compile(INVOICE_SCHEMA).evaluate(bad);
    expect(r.valid).toBe(false);
    expect(r.passed).toBe(21);
    expect(r.total).toBe(22);
    expect(r.failures).toEqual([
      {
        keyword: 'minimum',
        instancePath: '$.line_items[1].qty',
        schemaPath: '#/properties/line_items/items/properties/qty/minimum',
        expected: '>= 1',
        found: '0',
        message: '$.line_items[1].qty: must be >= 1, found 0',
      },
    ]);
  });
});

function evaluate(schema: Json, instance: Json) {
  return engine.compile(schema).evaluate(instance);
}

describe('check counting (docs/protocol.md#schema-checks)', () => {
  it('counts type-specific assertions only for instances of their type', () => {
    expect(counts({ type: 'integer', minimum: 1 }, 'abc')).toEqual([0, 1, false]);
    expect(counts({ type: 'integer', minimum: 1 }, 3)).toEqual([2, 2, true]);
    expect(counts({ minLength: 2, minItems: 1, required: ['a'] }, 5)).toEqual([0, 0, true]);
  });

  it('does not count subschemas of missing properties', () => {
    expect(counts({ properties: { a: { type: 'string' }, b: { type: 'number', minimum: 0 } } }, { a: 'x' })).toEqual([1, 1, true]);
  });

  it('counts transparent applicators only through what they apply ($ref, allOf, items, prefixItems)', () => {
    const s: Json = { $defs: { s: { type: 'string' } }, allOf: [{ $ref: '#/$defs/s' }, { minLength: 1 }] };
    expect(counts(s, 'x')).toEqual([2, 2, true]);
    expect(counts({ prefixItems: [{ type: 'string' }], items: { type: 'number' } }, ['a', 1, 2])).toEqual([3, 3, true]);
  });

  it('counts false under additionalProperties/items/unevaluated*/propertyNames as one check at the parent', () => {
    const r = evaluate({ properties: { a: {} }, additionalProperties: false }, { a: 1, b: 2, c: 3 });
    expect([r.passed, r.total, r.valid]).toEqual([0, 1, false]);
    expect(r.failures[0]).toMatchObject({ keyword: 'additionalProperties', instancePath: '$', found: "properties 'b', 'c'" });
    expect(counts({ properties: { a: {} }, additionalProperties: false }, { a: 1 })).toEqual([1, 1, true]);
    expect(counts({ prefixItems: [{}], items: false }, [1, 2])).toEqual([0, 1, false]);
    expect(counts({ prefixItems: [{}], items: false }, [1])).toEqual([1, 1, true]);
    expect(counts({ unevaluatedProperties: false, properties: { a: { type: 'number' } } }, { a: 1 })).toEqual([2, 2, true]);
    expect(counts({ unevaluatedProperties: false }, { a: 1 })).toEqual([0, 1, false]);
    expect(counts({ unevaluatedItems: false, prefixItems: [{ type: 'number' }] }, [1, 2])).toEqual([1, 2, false]);
    expect(counts({ propertyNames: false }, {})).toEqual([1, 1, true]);
  });

  it('counts false reached elsewhere as one failed check at its location', () => {
    const r = evaluate({ properties: { a: false } }, { a: 1 });
    expect([r.passed, r.total]).toEqual([0, 1]);
    expect(r.failures[0]).toMatchObject({ keyword: 'false', instancePath: '$.a', schemaPath: '#/properties/a' });
  });

  it('counts anyOf/oneOf/not as one check each with nothing inside counted', () => {
    const anyOf: Json = { anyOf: [{ type: 'string', minLength: 2 }, { type: 'number', minimum: 0 }] };
    expect(counts(anyOf, 5)).toEqual([1, 1, true]);
    const r = evaluate(anyOf, true);
    expect([r.passed, r.total, r.valid]).toEqual([0, 1, false]);
    expect(r.failures.map((f) => f.keyword)).toEqual(['anyOf']);
    expect(counts({ oneOf: [{ type: 'number' }, { minimum: 0 }] }, 1)).toEqual([0, 1, false]);
    expect(counts({ oneOf: [{ type: 'number' }, { type: 'string' }] }, 1)).toEqual([1, 1, true]);
    expect(counts({ not: { type: 'string', maxLength: 1 } }, 'abc')).toEqual([1, 1, true]);
    expect(counts({ not: { type: 'string' } }, 'abc')).toEqual([0, 1, false]);
  });

  it('counts contains as one check, minContains and maxContains one more each', () => {
    expect(counts({ contains: { type: 'string', minLength: 1 } }, [1, 'a', 'b'])).toEqual([1, 1, true]);
    expect(counts({ contains: { type: 'string' } }, [1])).toEqual([0, 1, false]);
    expect(counts({ contains: { type: 'string' }, minContains: 2, maxContains: 2 }, ['a', 'b', 'c'])).toEqual([2, 3, false]);
    expect(counts({ contains: { type: 'string' }, minContains: 0 }, [])).toEqual([2, 2, true]);
    // a failing minContains fails schema:minContains, not schema:contains
    const r = evaluate({ contains: { type: 'string' }, minContains: 2 }, ['a', 1]);
    expect([r.passed, r.total, r.valid]).toEqual([1, 2, false]);
    expect(r.failures.map((f) => [f.keyword, f.schemaPath])).toEqual([['minContains', '#/minContains']]);
    // no match at all: both fail
    expect(evaluate({ contains: { type: 'string' }, minContains: 2 }, [1]).failures.map((f) => f.keyword)).toEqual(['contains', 'minContains']);
    // draft-07 has no minContains: not counted
    expect(counts({ $schema: 'http://json-schema.org/draft-07/schema#', contains: { type: 'string' }, minContains: 2 }, ['a'])).toEqual([1, 1, true]);
  });

  it('does not count uniqueItems: false, counts false subschemas at the parent, type-specific keywords only on their type', () => {
    expect(counts({ uniqueItems: false }, [1, 1])).toEqual([0, 0, true]);
    expect(counts({ uniqueItems: true }, [1, 2])).toEqual([1, 1, true]);
    expect(counts({ additionalProperties: false }, {})).toEqual([1, 1, true]);
    expect(counts({ items: false }, [])).toEqual([1, 1, true]);
    expect(counts({ propertyNames: false }, {})).toEqual([1, 1, true]);
    expect(counts({ unevaluatedProperties: false }, {})).toEqual([1, 1, true]);
    expect(counts({ minimum: 1, minLength: 1 }, 'x')).toEqual([1, 1, true]);
    expect(counts({ minimum: 1, minLength: 1 }, 5)).toEqual([1, 1, true]);
    expect(counts({ minLength: 0, dependentRequired: { a: ['b'] } }, '')).toEqual([1, 1, true]);
    expect(counts({ dependentRequired: { a: ['b'] } }, {})).toEqual([1, 1, true]);
  });

  it('never counts the if condition; only the branch that applies is transparent', () => {
    const s = { if: { type: 'number', minimum: 10 }, then: { multipleOf: 5 }, else: { type: 'string' } };
    expect(counts(s, 20)).toEqual([1, 1, true]);
    expect(counts(s, 21)).toEqual([0, 1, false]);
    expect(counts(s, 3)).toEqual([0, 1, false]);
    expect(counts(s, 'x')).toEqual([1, 1, true]);
    expect(counts({ if: { type: 'string' } }, 1)).toEqual([0, 0, true]);
  });

  it('counts required, dependentRequired and draft-07 dependencies as one check per location', () => {
    const r = evaluate({ required: ['a', 'b', 'c'] }, { c: 1 });
    expect([r.passed, r.total]).toEqual([0, 1]);
    expect(r.failures[0]).toMatchObject({ keyword: 'required', expected: "properties 'a', 'b'", found: 'missing' });
    expect(counts({ dependentRequired: { a: ['b'], c: ['d'] } }, { a: 1, b: 1 })).toEqual([1, 1, true]);
    expect(counts({ dependentRequired: { a: ['b'] } }, { a: 1 })).toEqual([0, 1, false]);
    const d7 = { $schema: 'http://json-schema.org/draft-07/schema#', dependencies: { a: ['b'], c: { required: ['d'] } } };
    expect(counts(d7, { a: 1, c: 1 })).toEqual([0, 2, false]);
  });

  it('counts format only when the engine asserts it', () => {
    expect(counts({ format: 'date' }, '2024-02-30')).toEqual([0, 1, false]);
    expect(counts({ format: 'date' }, '2024-02-29')).toEqual([1, 1, true]);
    expect(counts({ format: 'not-a-known-format' }, 'x')).toEqual([0, 0, true]);
    expect(engine.compile({ format: 'date' }, { assertFormats: false }).evaluate('nope')).toMatchObject({ valid: true, total: 0 });
  });

  it('counts a false root as one failed check and a true root as none', () => {
    const r = evaluate(false, { any: 1 });
    expect([r.passed, r.total, r.valid]).toEqual([0, 1, false]);
    expect(r.failures[0]).toMatchObject({ keyword: 'false', instancePath: '$', schemaPath: '#' });
    expect(evaluate(true, 1)).toMatchObject({ valid: true, passed: 0, total: 0, failures: [] });
  });

  it('follows draft-07 semantics: $ref overrides siblings, items arrays with additionalItems', () => {
    const s = { $schema: 'http://json-schema.org/draft-07/schema#', definitions: { a: { type: 'string' } }, $ref: '#/definitions/a', type: 'number' };
    expect(counts(s, 'x')).toEqual([1, 1, true]);
    const t = { $schema: 'http://json-schema.org/draft-07/schema#', items: [{ type: 'string' }], additionalItems: false };
    expect(counts(t, ['a', 'b'])).toEqual([1, 2, false]);
    expect(engine.compile(t).dialect).toBe('http://json-schema.org/draft-07/schema#');
    expect(engine.compile({}).dialect).toBe('https://json-schema.org/draft/2020-12/schema');
  });
});

describe('failures', () => {
  it('describes values without echoing strings', () => {
    const s = {
      properties: {
        name: { type: 'string', maxLength: 3 },
        tags: { type: 'array', maxItems: 1 },
        code: { enum: ['A', 'B'] },
        'a.b': { type: 'integer' },
      },
    };
    const r = evaluate(s, { name: 'secret-value', tags: [1, 2, 3], code: 'zzz', 'a.b': 1.5 });
    expect(r.failures.map((f) => [f.keyword, f.instancePath, f.expected, f.found])).toEqual([
      ['maxLength', '$.name', 'length <= 3', 'length 12'],
      ['maxItems', '$.tags', '<= 1 items', '3 items'],
      ['enum', '$.code', 'one of "A", "B"', 'string of length 3'],
      ['type', "$['a.b']", 'type integer', 'type number'],
    ]);
    expect(JSON.stringify(r.failures)).not.toContain('secret');
    expect(r.failures[3].message).toBe("$['a.b']: must be type integer, found type number");
  });

  it('gives concrete array paths through $ref', () => {
    const s = { $defs: { item: { properties: { qty: { minimum: 1 } } } }, items: { $ref: '#/$defs/item' } };
    const r = evaluate(s, [{ qty: 1 }, { qty: 0 }]);
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0]).toMatchObject({ instancePath: '$[1].qty', schemaPath: '#/$defs/item/properties/qty/minimum' });
  });

  it('keeps valid equal to all checks passed', () => {
    const s = { type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, required: ['a'] };
    for (const inst of [{ a: 'x' }, { a: 1 }, {}, 3, { a: null }]) {
      const r = evaluate(s, inst as Json);
      expect(r.valid).toBe(r.passed === r.total);
      expect(r.failures.length).toBe(r.total - r.passed);
    }
  });
});

describe('compile errors', () => {
  it('rejects a reference to anything not in the schema, the meta-schemas or the resources', () => {
    const ref = 'https://example.com/other.json#/$defs/a';
    try {
      engine.compile({ properties: { a: { $ref: ref } } });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(SchemaCompileError);
      expect((e as SchemaCompileError).problem).toEqual({ kind: 'unresolved_ref', ref });
    }
    expect(() => engine.compile({ $ref: '#/$defs/missing' })).toThrow(SchemaCompileError);
    const resources = new Map<string, Json>([['https://example.com/other.json', { $defs: { a: { type: 'string' } } }]]);
    expect(engine.compile({ $ref: ref }, { resources }).evaluate(1).valid).toBe(false);
  });

  it('resolves the built-in meta-schemas without the network', () => {
    const c = engine.compile({ $ref: 'https://json-schema.org/draft/2020-12/schema' });
    expect(c.evaluate({ type: 'string' }).valid).toBe(true);
    expect(c.evaluate({ type: 12 }).valid).toBe(false);
    const d7 = engine.compile({ $schema: 'http://json-schema.org/draft-07/schema#', $ref: 'http://json-schema.org/draft-07/schema#' });
    expect(d7.evaluate({ minimum: 'x' }).valid).toBe(false);
  });

  it('rejects unsupported dialects', () => {
    try {
      engine.compile({ $schema: 'http://json-schema.org/draft-04/schema#' });
      expect.unreachable();
    } catch (e) {
      expect((e as SchemaCompileError).problem).toEqual({ kind: 'unsupported_dialect', dialect: 'http://json-schema.org/draft-04/schema#' });
    }
  });

  it('rejects invalid patterns and malformed keywords', () => {
    try {
      engine.compile({ properties: { a: { pattern: '(' } } });
      expect.unreachable();
    } catch (e) {
      expect((e as SchemaCompileError).problem).toMatchObject({ kind: 'invalid_pattern', path: '#/properties/a/pattern' });
    }
    expect(() => engine.compile({ minimum: 'x' })).toThrow(/invalid schema at #\/minimum/);
    expect(() => engine.compile({ type: 'strng' })).toThrow(SchemaCompileError);
  });

  it('rejects absurdly deep schemas with a coded error', () => {
    let deep: Json = { type: 'string' };
    for (let i = 0; i < 20000; i++) deep = { items: deep };
    expect(() => engine.compile(deep)).toThrow(SchemaCompileError);
  });

  it('turns a reference cycle that never consumes the instance into a failure, not a crash', () => {
    const r = evaluate({ $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' }, 1);
    expect(r.valid).toBe(false);
    expect(r.passed).toBeLessThan(r.total);
  });
});

describe('undeclared properties', () => {
  it('lists properties no applying schema declares', () => {
    const s = {
      properties: { a: { properties: { x: {} } }, list: { items: { properties: { id: {} } } }, m: { additionalProperties: { type: 'number' } } },
      patternProperties: { '^p_': {} },
    };
    const inst = { a: { x: 1, y: 2 }, list: [{ id: 1, extra: 2 }], m: { q: 1 }, p_1: 1, zz: { deep: 1 } };
    const r = engine.compile(s).evaluate(inst, { collectUndeclared: true });
    expect(r.undeclared).toEqual(['$.a.y', '$.list[0].extra', '$.zz']);
    expect(engine.compile(s).evaluate(inst).undeclared).toBeUndefined();
  });
});

describe('createSchemaCache', () => {
  it('returns the same compiled object on a hit and keeps at most max entries', () => {
    let compiles = 0;
    const counting = { compile: (s: Json, o?: Parameters<typeof engine.compile>[1]) => (compiles++, engine.compile(s, o)) };
    const cache = createSchemaCache({ engine: counting, max: 2 });
    const a = cache.get('a', { type: 'string' });
    expect(cache.get('a', { type: 'string' })).toBe(a);
    cache.get('b', { type: 'number' });
    cache.get('a', { type: 'string' }); // a is now most recent
    cache.get('c', { type: 'null' }); // evicts b
    expect(cache.size).toBe(2);
    expect(compiles).toBe(3);
    expect(cache.get('a', { type: 'string' })).toBe(a);
    cache.get('b', { type: 'number' });
    expect(compiles).toBe(4);
    expect(() => cache.get('bad', { $ref: '#/nope' })).toThrow(SchemaCompileError);
    expect(cache.size).toBe(2);
  });
});

describe('generated code', () => {
  const closures = createSchemaEngine({ generatedCode: false });
  /** Code is generated from the second evaluation on. */
  const warm = (schema: Json, inst: Json) => {
    const c = engine.compile(schema);
    const first = c.evaluate(inst);
    const second = c.evaluate(inst);
    // As JSON: toEqual on the objects would skip the failures (read through a getter).
    expect(JSON.parse(JSON.stringify(second))).toEqual(JSON.parse(JSON.stringify(first)));
    return second;
  };

  it('handles keys that collide with Object.prototype or need quoting, like the closure path', () => {
    // parsed, so that "__proto__" is an own key as in any request
    const schema = JSON.parse(
      JSON.stringify({
        type: 'object',
        required: ['__proto__', 'constructor', 'a"b\\c', 'toString'],
        properties: {
          PROTO: { type: 'integer', minimum: 1 },
          constructor: { type: 'string' },
          'a"b\\c': { enum: ["x'y", 'z'] },
          hasOwnProperty: { type: 'null' },
        },
        additionalProperties: false,
      }).replace('"PROTO"', '"__proto__"'),
    ) as Json;
    const inst = JSON.parse('{"__proto__": 0, "constructor": 1, "a\\"b\\\\c": "x\'y", "toString": 2, "x": 1}') as Json;
    const fast = warm(schema, inst);
    expect(JSON.parse(JSON.stringify(fast))).toEqual(JSON.parse(JSON.stringify(closures.compile(schema).evaluate(inst))));
    expect(fast.failures.map((f) => [f.keyword, f.instancePath])).toEqual([
      ['minimum', '$.__proto__'],
      ['type', '$.constructor'],
      ['additionalProperties', '$'],
    ]);
    expect(fast.failures[2].found).toBe("properties 'toString', 'x'");
    expect(warm(schema, {}).failures[0].expected).toBe(
      `properties '__proto__', 'constructor', 'a"b\\c', 'toString'`,
    );
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  });

  it('inlines $ref targets and still reports the target schema path', () => {
    const schema: Json = { $defs: { pos: { type: 'integer', exclusiveMinimum: 0 } }, type: 'array', items: { $ref: '#/$defs/pos' } };
    const r = warm(schema, [1, 0, 'x']);
    expect(JSON.parse(JSON.stringify(r))).toEqual(JSON.parse(JSON.stringify(closures.compile(schema).evaluate([1, 0, "x"]))));
    expect(r.failures.map((f) => [f.instancePath, f.schemaPath])).toEqual([
      ['$[1]', '#/$defs/pos/exclusiveMinimum'],
      ['$[2]', '#/$defs/pos/type'],
    ]);
  });
});
