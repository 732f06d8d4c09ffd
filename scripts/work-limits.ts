/**
 * @module Measures how far real workloads stay inside the work limits:
 * `npx tsx scripts/work-limits.ts`. Prints the largest compiled size and
 * evaluation steps over every JSON-Schema-Test-Suite case (when ../shared is
 * present), a 1,000-line invoice and a 1 MiB invoice-like output, next to the
 * default limits. Used to choose the defaults (see docs/security.md).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { createSchemaEngine, DEFAULT_WORK_LIMITS, type CompiledSchema } from '../src/core/schema/index.js';
import type { Json } from '../src/core/types.js';
import { runConformance, suiteDir } from './conformance-lib.js';
import type { SchemaEngine } from '../src/core/schema/engine.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** An engine that remembers the largest figures of everything it compiled and evaluated. */
function measuringEngine(): { engine: SchemaEngine; max: { compiledSize: number; steps: number } } {
  const inner = createSchemaEngine();
  const max = { compiledSize: 0, steps: 0 };
  const engine: SchemaEngine = {
    compile(schema, options) {
      const c = inner.compile(schema, options);
      max.compiledSize = Math.max(max.compiledSize, c.compiledSize);
      const wrapped: CompiledSchema = {
        dialect: c.dialect,
        compiledSize: c.compiledSize,
        warnings: c.warnings,
        evaluate(instance, o) {
          const r = c.evaluate(instance, o);
          max.steps = Math.max(max.steps, r.steps);
          return r;
        },
      };
      return wrapped;
    },
  };
  return { engine, max };
}

const INVOICE_SCHEMA: Json = {
  type: 'object',
  required: ['invoice_id', 'currency', 'line_items', 'total'],
  additionalProperties: false,
  properties: {
    invoice_id: { type: 'string', pattern: '^INV-[0-9]{4}$' },
    currency: { enum: ['USD', 'EUR'] },
    issued: { type: 'string', format: 'date' },
    customer: { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, email: { type: 'string', format: 'email' } } },
    line_items: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['sku', 'qty', 'line_total'],
        additionalProperties: false,
        properties: {
          sku: { type: 'string', pattern: '^[A-Z]{1,4}-[0-9]{1,6}$' },
          description: { type: 'string', maxLength: 2000 },
          qty: { type: 'integer', minimum: 1 },
          unit_price: { type: 'number', minimum: 0, multipleOf: 0.01 },
          line_total: { type: 'number', minimum: 0 },
        },
      },
    },
    total: { type: 'number' },
  },
};

function invoice(lines: number, descriptionLength: number): Json {
  const items: Json[] = [];
  for (let i = 0; i < lines; i++) {
    items.push({ sku: `AB-${i % 999999}`, description: 'Consulting services, week '.padEnd(descriptionLength, 'x'), qty: 1 + (i % 7), unit_price: 12.5, line_total: 12.5 * (1 + (i % 7)) });
  }
  return { invoice_id: 'INV-0001', currency: 'USD', issued: '2026-11-30', customer: { name: 'ACME', email: 'billing@acme.example' }, line_items: items, total: 0 };
}

const engine = createSchemaEngine();
const compiled = engine.compile(INVOICE_SCHEMA);
for (const [name, doc] of [
  ['1,000-line invoice', invoice(1000, 40)],
  ['1 MiB invoice (≈7,000 lines)', invoice(7000, 100)],
] as const) {
  const bytes = Buffer.byteLength(JSON.stringify(doc));
  compiled.evaluate(doc);
  const t0 = performance.now();
  const r = compiled.evaluate(doc);
  const ms = performance.now() - t0;
  console.log(`${name}: ${(bytes / 1024).toFixed(0)} KiB, ${r.total} checks, ${r.steps} steps (${((100 * r.steps) / DEFAULT_WORK_LIMITS.maxEvaluationSteps).toFixed(1)}% of the limit), ${ms.toFixed(1)} ms`);
}
console.log(`invoice schema: compiled size ${compiled.compiledSize} (${((100 * compiled.compiledSize) / DEFAULT_WORK_LIMITS.maxCompiledSize).toFixed(2)}% of the limit)`);

const dir = suiteDir(projectRoot);
if (existsSync(dir)) {
  const { engine: measured, max } = measuringEngine();
  runConformance(dir, measured);
  console.log(
    `JSON-Schema-Test-Suite: largest compiled size ${max.compiledSize} (${((100 * max.compiledSize) / DEFAULT_WORK_LIMITS.maxCompiledSize).toFixed(2)}%), most steps ${max.steps} (${((100 * max.steps) / DEFAULT_WORK_LIMITS.maxEvaluationSteps).toFixed(3)}%)`,
  );
}
console.log('limits:', JSON.stringify(DEFAULT_WORK_LIMITS));
