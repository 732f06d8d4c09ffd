/**
 * @module Verification throughput bench: our full verify (schema engine with
 * check counting + rules + verdict, compiled schema cached; "request
 * pre-parsed" rows exclude parsing, the "strict parse +" row includes it)
 * against Ajv 8 (draft 2020-12, allErrors, formats) validating the same
 * documents in the same run; the schema evaluation alone on single documents
 * and on 1,000 distinct documents about half of them invalid; compile time of
 * never-seen schemas; strict parsing vs JSON.parse.
 * Run: npx tsx bench/engine.ts   (about 30 s)
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { createSchemaCache, createSchemaEngine } from '../src/core/schema/index.js';
import { createVerifier } from '../src/core/verify.js';
import { parseVerificationRequest } from '../src/core/request.js';
import { parseStrictJson } from '../src/core/strict-json.js';
import type { Json, JsonObject } from '../src/core/types.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 300);
const ROUNDS = 5;

/**
 * Operations per CPU second of one round (ROUND_MS of wall time). CPU time of
 * this process, not wall time: on a shared machine a round that loses the CPU to
 * another process would otherwise count the wait as work (getrusage covers this
 * process's threads, so GC helper threads are counted as the work they are).
 */
function round(fn: () => unknown): number {
  let n = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  while (performance.now() - start < ROUND_MS) {
    for (let i = 0; i < 16; i++) fn();
    n += 16;
  }
  const used = process.cpuUsage(cpu);
  return (n * 1e6) / (used.user + used.system);
}

/**
 * Operations per second of `ours` and `base`: after a warm-up of each, ROUNDS
 * rounds alternating between the two, median of each side. Alternating puts
 * both sides under the same load from other processes on a shared machine.
 */
function pairedOpsPerSec(ours: () => unknown, base: () => unknown): { ours: number; base: number } {
  for (const fn of [ours, base]) {
    // One round's worth: the optimizing compiler needs a few hundred ms on a busy machine.
    const warmEnd = performance.now() + ROUND_MS;
    while (performance.now() < warmEnd) fn();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    a.push(round(ours));
    b.push(round(base));
  }
  return { ours: median(a), base: median(b) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const invoiceText = readFileSync(new URL('../test/fixtures/invoice.request.json', import.meta.url), 'utf8');
const invoicePassText = readFileSync(new URL('../test/fixtures/invoice-pass.request.json', import.meta.url), 'utf8');
const invoice = JSON.parse(invoiceText) as JsonObject;

function bigInvoiceText(items: number): string {
  const line_items: Json[] = [];
  let total = 0;
  for (let i = 0; i < items; i++) {
    const line_total = ((i * 37) % 1000) / 4;
    total += line_total;
    line_items.push({ sku: `SKU-${i}`, qty: 1 + (i % 9), line_total });
  }
  return JSON.stringify({ ...invoice, submitted_output: { invoice_id: 'INV-1000', currency: 'EUR', line_items, total } });
}
const bigText = bigInvoiceText(1000);

const engine = createSchemaEngine();
const cache = createSchemaCache({ engine, max: 100 });
const verifier = createVerifier({ engine: cache });
const ajv = new Ajv2020({ allErrors: true });
addFormats(ajv);
const ajvValidate = ajv.compile(invoice.expected_schema as object);

interface Row {
  name: string;
  ours: number;
  ajv: number;
  unit: string;
}
const rows: Row[] = [];

for (const [label, text] of [
  ['invoice example (fails its rule)', invoiceText],
  ['invoice example, total 129.5 (passes)', invoicePassText],
  ['invoice, 1,000 line items', bigText],
] as const) {
  const parsed = parseVerificationRequest(text);
  const output = parsed.request.submitted_output;
  const compiled = cache.get('bench', parsed.request.expected_schema);
  // Same verdict on both sides before timing: the comparison is meaningless otherwise.
  const oursValid = compiled.evaluate(output).valid;
  if (oursValid !== ajvValidate(output)) throw new Error(`validity differs on ${label}`);
  const full = pairedOpsPerSec(() => verifier.evaluate(parsed, { schemaKey: 'bench' }), () => ajvValidate(output));
  rows.push({ name: `full verify (request pre-parsed) vs ajv.validate — ${label}`, ours: full.ours, ajv: full.base, unit: 'ops/s' });
  const evaluation = pairedOpsPerSec(() => compiled.evaluate(output), () => ajvValidate(output));
  rows.push({ name: `schema evaluate (counting) vs ajv.validate — ${label}`, ours: evaluation.ours, ajv: evaluation.base, unit: 'ops/s' });
  if (text === invoicePassText) continue; // same size as the failing body: one parse row is enough
  const mb = Buffer.byteLength(text) / 1e6;
  const parse = pairedOpsPerSec(() => parseStrictJson(text), () => JSON.parse(text));
  rows.push({
    name: `strict parse vs JSON.parse — ${label} (${(mb * 1000).toFixed(1)} kB)`,
    ours: parse.ours * mb,
    ajv: parse.base * mb,
    unit: 'MB/s',
  });
}

// 1,000 distinct documents, about half invalid with the failures agents make: wrong
// types, out-of-range numbers, missing required properties, pattern and enum misses.
// One operation = one document, taken in turn, so no document stays hot in a cache.
const MIXED = 1000;
function mixedDocuments(): Json[] {
  let seed = 42;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const docs: Json[] = [];
  for (let d = 0; d < MIXED; d++) {
    const items: JsonObject[] = [];
    const count = 1 + rnd(5);
    let total = 0;
    for (let i = 0; i < count; i++) {
      const line_total = rnd(40000) / 100;
      total += line_total;
      items.push({ sku: `SKU-${d}-${i}`, qty: 1 + rnd(20), line_total });
    }
    const doc: JsonObject = {
      invoice_id: `INV-${String(d % 10000).padStart(4, '0')}`,
      currency: rnd(2) === 0 ? 'USD' : 'EUR',
      line_items: items,
      total: Math.round(total * 100) / 100,
    };
    if (d % 2 === 1) {
      // one or two realistic failures
      const faults = 1 + (rnd(3) === 0 ? 1 : 0);
      for (let f = 0; f < faults; f++) {
        const item = items[rnd(items.length)];
        switch (rnd(8)) {
          case 0: item.qty = String(item.qty); break; // number sent as a string
          case 1: doc.total = String(doc.total); break;
          case 2: item.qty = 0; break; // out of range
          case 3: item.line_total = -(1 + rnd(100)); break;
          case 4: delete doc.currency; break; // missing required
          case 5: delete item.sku; break;
          case 6: doc.invoice_id = `INV-${d}`; break; // pattern miss (not four digits)
          default: doc.currency = 'GBP'; // enum miss
        }
      }
      // a fault that cancels out (e.g. INV-1000's own id) would leave the document valid
    }
    // as the service sees them: parsed from text (no shapes left over from the edits above)
    docs.push(JSON.parse(JSON.stringify(doc)) as Json);
  }
  return docs;
}
const mixed = mixedDocuments();
{
  const compiled = cache.get('bench', invoice.expected_schema);
  let invalid = 0;
  for (const doc of mixed) {
    const ours = compiled.evaluate(doc).valid;
    if (ours !== ajvValidate(doc)) throw new Error('validity differs on a mixed document');
    if (!ours) invalid++;
  }
  const label = `${MIXED.toLocaleString('en-US')} distinct documents, ${invalid} invalid`;
  // what the service passes: at most listCap (100) failures built, the rest counted
  const evalOptions = { maxFailures: 100 };
  let i = 0;
  let j = 0;
  const evaluation = pairedOpsPerSec(
    () => compiled.evaluate(mixed[i++ % MIXED], evalOptions),
    () => ajvValidate(mixed[j++ % MIXED]),
  );
  rows.push({ name: `schema evaluate (counting) vs ajv.validate — ${label}`, ours: evaluation.ours, ajv: evaluation.base, unit: 'ops/s' });
  // Failure texts (instance path, message) are joined when `failures` is first read; Ajv builds
  // its errors eagerly. This row reads them on our side, as the verdict does.
  const withTexts = pairedOpsPerSec(
    () => compiled.evaluate(mixed[i++ % MIXED], evalOptions).failures.length,
    () => (ajvValidate(mixed[j++ % MIXED]) ? 0 : ajvValidate.errors!.length),
  );
  rows.push({ name: `schema evaluate + failure texts read vs ajv.validate — ${label}`, ours: withTexts.ours, ajv: withTexts.base, unit: 'ops/s' });
  // the whole request per document: strict parse of the body, validation, verdict
  const bodies = mixed.map((doc, n) => JSON.stringify({ ...invoice, task_id: `mixed-${n}`, submitted_output: doc }));
  const full = pairedOpsPerSec(
    () => verifier.evaluate(parseVerificationRequest(bodies[i++ % MIXED]), { schemaKey: 'bench' }),
    () => ajvValidate((JSON.parse(bodies[j++ % MIXED]) as JsonObject).submitted_output),
  );
  rows.push({ name: `strict parse + full verify vs JSON.parse + ajv.validate — ${label}`, ours: full.ours, ajv: full.base, unit: 'ops/s' });
}

// Compile time of a never-seen schema: vary a constant so no cache can hit.
const COMPILES = 60;
const variant = (i: number): Json => {
  const s = JSON.parse(JSON.stringify(invoice.expected_schema)) as JsonObject;
  const props = s.properties as JsonObject;
  props.invoice_id = { type: 'string', pattern: `^INV-[0-9]{4}$|^X${i}$` };
  props[`extra_${i}`] = { type: 'integer', minimum: i };
  return s;
};
const oursCompile: number[] = [];
const ajvCompile: number[] = [];
for (let i = 0; i < COMPILES; i++) {
  const a = variant(i);
  const b = variant(i + COMPILES);
  let t = performance.now();
  engine.compile(a);
  oursCompile.push(performance.now() - t);
  t = performance.now();
  ajv.compile(b as object);
  ajvCompile.push(performance.now() - t);
}
rows.push({ name: 'median compile of a never-seen schema', ours: median(oursCompile), ajv: median(ajvCompile), unit: 'ms' });

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toPrecision(3));
console.log(`node ${process.version}, ${ROUNDS} alternating rounds x ${ROUND_MS} ms per side, median; ops/s and MB/s per CPU second\n`);
const head = ['measurement', 'ours', 'baseline (ajv / JSON.parse)', 'ours/baseline'];
const body = rows.map((r) => [r.name, `${fmt(r.ours)} ${r.unit}`, `${fmt(r.ajv)} ${r.unit}`, (r.ours / r.ajv).toFixed(2)]);
const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
console.log(line(head));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const b of body) console.log(line(b));
console.log('\nFor ms rows lower is better (ratio < 1 = ours faster); for ops/s and MB/s higher is better.');
