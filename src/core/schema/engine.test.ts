/** @module Engine behaviour: SPEC §2.1 check counting, failure descriptions, compile errors, the cache. */
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

describe('SPEC §8 invoice', () => {
  it('has 22 schema checks, all passing', () => {
    const r = engine.compile(INVOICE_SCHEMA).evaluate(INVOICE);
    expect(r).toEqual({ valid: true, passed: 22, total: 22, failures: [] });
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
