/**
 * @module Repair corpus: how much of realistic failing agent output the repair
 * loop fixes. Builds a seeded corpus of failing invoices and deliverables (wrong
 * totals, numeric strings, enums in the wrong case, fields the schema forbids,
 * missing properties that have a default, dates written another way, float sums
 * such as 0.1 + 0.2, and faults with no known fix), then counts, with the
 * in-process verifier the service uses:
 *   - how many pass after the determined repairs alone (one round, as `aov repair`);
 *   - how many with the first option of each candidate repair too (`aov repair --apply candidates`);
 *   - how many pass after one `regenerate` by a scripted fixer that reads only the
 *     remaining hints and the output (as a model would), then verification again;
 *   - regressions: a check that passed before a determined repair and fails after it
 *     (must be 0).
 * Run: npm run bench:repair   (a few seconds; CORPUS_SIZE and CORPUS_SEED change the corpus)
 * With --write, the table replaces the marked block in docs/repair.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createSchemaEngine } from '../src/core/schema/index.js';
import { createVerifier } from '../src/core/verify.js';
import { parseVerificationRequest } from '../src/core/request.js';
import type { Json, JsonObject, Verdict } from '../src/core/types.js';
import { applyRepairs, type RepairableVerdict } from '../src/repair/apply-repairs.js';
import { applyPatch, type JsonPatchOperation } from '../src/core/json-patch.js';

const SIZE = Number(process.env.CORPUS_SIZE ?? 400);
const SEED = Number(process.env.CORPUS_SEED ?? 39);

/** mulberry32: a small seeded PRNG, so the corpus is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const cents = (lo: number, hi: number) => int(lo * 100, hi * 100) / 100;
/** Exact decimal sum of two-decimal amounts (the correct figure an agent should have written). */
const sumCents = (xs: number[]) => Math.round(xs.reduce((s, x) => s + Math.round(x * 100), 0)) / 100;

type Request = { task_id: string; expected_schema: Json; submitted_output: JsonObject; rules?: Json; enforce_rules?: boolean; strict_content_check?: boolean };

const INVOICE_SCHEMA: JsonObject = {
  type: 'object',
  additionalProperties: false,
  required: ['invoice_id', 'issue_date', 'currency', 'status', 'payment_terms', 'line_items', 'total'],
  properties: {
    invoice_id: { type: 'string', pattern: '^INV-[0-9]{4}$' },
    issue_date: { type: 'string', format: 'date' },
    currency: { enum: ['USD', 'EUR', 'GBP'] },
    status: { enum: ['draft', 'sent', 'paid'] },
    payment_terms: { type: 'string', enum: ['net15', 'net30', 'net60'], default: 'net30' },
    line_items: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['sku', 'qty', 'unit_price', 'line_total'],
        properties: {
          sku: { type: 'string', minLength: 3 },
          qty: { type: 'integer', minimum: 1 },
          unit_price: { type: 'number', minimum: 0, multipleOf: 0.01 },
          line_total: { type: 'number', minimum: 0, multipleOf: 0.01 },
        },
      },
    },
    total: { type: 'number', minimum: 0, multipleOf: 0.01 },
  },
};
const INVOICE_RULES = [{ type: 'sum_equals', field: 'line_items[].line_total', equals_field: 'total', tolerance: 0.005 }];

const DELIVERABLE_SCHEMA: JsonObject = {
  type: 'object',
  additionalProperties: false,
  required: ['task_id', 'status', 'priority', 'delivered_at', 'entries', 'hours_total'],
  properties: {
    task_id: { type: 'string', minLength: 1 },
    status: { enum: ['complete', 'partial', 'blocked'] },
    priority: { enum: ['low', 'medium', 'high'], default: 'medium' },
    delivered_at: { type: 'string', format: 'date-time' },
    entries: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'hours'],
        properties: { name: { type: 'string', minLength: 1 }, hours: { type: 'number', minimum: 0, multipleOf: 0.1 } },
      },
    },
    hours_total: { type: 'number', minimum: 0, multipleOf: 0.1 },
    reviewed: { type: 'boolean', default: false },
  },
};
const DELIVERABLE_RULES = [{ type: 'sum_equals', field: 'entries[].hours', equals_field: 'hours_total', tolerance: 0.0005 }];

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function validInvoice(): JsonObject {
  const lines = Array.from({ length: int(1, 5) }, () => {
    const qty = int(1, 9);
    const unit = cents(0.5, 250);
    return { sku: `SKU-${int(100, 999)}`, qty, unit_price: unit, line_total: sumCents(Array(qty).fill(unit)) };
  });
  return {
    invoice_id: `INV-${pad(int(0, 9999), 4)}`,
    issue_date: `2026-${pad(int(1, 12))}-${pad(int(1, 28))}`,
    currency: pick(['USD', 'EUR', 'GBP']),
    status: pick(['draft', 'sent', 'paid']),
    payment_terms: pick(['net15', 'net30', 'net60']),
    line_items: lines,
    total: sumCents(lines.map((l) => l.line_total)),
  };
}

function validDeliverable(): JsonObject {
  const entries = Array.from({ length: int(1, 6) }, (_, i) => ({ name: `step ${i + 1}`, hours: int(1, 80) / 10 }));
  return {
    task_id: `task-${int(1, 9999)}`,
    status: pick(['complete', 'partial', 'blocked']),
    priority: pick(['low', 'medium', 'high']),
    delivered_at: `2026-${pad(int(1, 12))}-${pad(int(1, 28))}T${pad(int(0, 23))}:${pad(int(0, 59))}:00Z`,
    entries,
    hours_total: Math.round(entries.reduce((s, e) => s + e.hours * 10, 0)) / 10,
    reviewed: rand() < 0.5,
  };
}

/** A fault an agent makes, and whether the verifier is meant to know its one fix. */
interface Fault {
  name: string;
  /** The kind of fix expected: the one determined fix, alternatives only, or none known. */
  expected: 'determined' | 'candidate' | 'none';
  applies(doc: JsonObject, kind: 'invoice' | 'deliverable'): boolean;
  apply(doc: JsonObject, kind: 'invoice' | 'deliverable'): void;
}

const items = (doc: JsonObject) => doc.line_items as JsonObject[];
const entriesOf = (doc: JsonObject) => doc.entries as JsonObject[];

const FAULTS: Fault[] = [
  {
    name: 'wrong total',
    expected: 'candidate',
    applies: () => true,
    apply(doc, kind) {
      if (kind === 'invoice') doc.total = Math.round((Number(doc.total) + pick([1, 10, 0.5, -0.25])) * 100) / 100;
      else doc.hours_total = Math.round((Number(doc.hours_total) + pick([1, 0.5, 2])) * 10) / 10;
    },
  },
  {
    name: 'number as string',
    expected: 'determined',
    applies: () => true,
    apply(doc, kind) {
      if (kind === 'invoice') {
        const line = pick(items(doc));
        if (rand() < 0.5) line.qty = String(line.qty);
        else line.unit_price = String(line.unit_price);
      } else {
        const e = pick(entriesOf(doc));
        e.hours = String(e.hours);
      }
    },
  },
  {
    name: 'enum in another case',
    expected: 'determined',
    applies: () => true,
    apply(doc, kind) {
      if (kind === 'invoice') {
        if (rand() < 0.5) doc.currency = (doc.currency as string).toLowerCase();
        else doc.status = pick([(doc.status as string).toUpperCase(), ` ${doc.status as string} `, (doc.status as string)[0].toUpperCase() + (doc.status as string).slice(1)]);
      } else doc.status = (doc.status as string).toUpperCase();
    },
  },
  {
    name: 'extra field',
    expected: 'determined',
    applies: () => true,
    apply(doc, kind) {
      if (kind === 'invoice') {
        if (rand() < 0.5) doc.notes = 'Thank you for your business';
        else pick(items(doc)).description = 'widget, blue';
      } else doc.comment = 'done ahead of schedule';
    },
  },
  {
    name: 'missing property with a default',
    expected: 'determined',
    applies: () => true,
    apply(doc, kind) {
      if (kind === 'invoice') delete doc.payment_terms;
      else delete doc.priority;
    },
  },
  {
    name: 'date in another format',
    expected: 'determined',
    applies: () => true,
    apply(doc, kind) {
      if (kind === 'invoice') {
        const [y, m, d] = (doc.issue_date as string).split('-');
        doc.issue_date = pick([`${y}/${m}/${d}`, `${y}.${m}.${d}`, `${y}-${Number(m)}-${Number(d)}`]);
      } else {
        doc.delivered_at = (doc.delivered_at as string).replace('T', ' ');
      }
    },
  },
  {
    name: 'date only the writer can read',
    expected: 'none',
    applies: (_doc, kind) => kind === 'invoice',
    apply(doc) {
      const [y, m, d] = (doc.issue_date as string).split('-');
      doc.issue_date = `${m}/${d}/${y}`; // month or day first? the data cannot say
    },
  },
  {
    name: 'float sum',
    expected: 'determined',
    applies: () => true,
    apply(doc, kind) {
      if (kind === 'invoice') {
        // Binary floating point: 0.1 + 0.2 written as 0.30000000000000004.
        doc.line_items = [
          { sku: 'SKU-010', qty: 1, unit_price: 0.1, line_total: 0.1 },
          { sku: 'SKU-020', qty: 1, unit_price: 0.2, line_total: 0.2 },
          ...items(doc),
        ];
        doc.total = items(doc).reduce((s, l) => s + Number(l.line_total), 0);
      } else {
        doc.entries = [{ name: 'a', hours: 0.1 }, { name: 'b', hours: 0.2 }, ...entriesOf(doc)];
        doc.hours_total = entriesOf(doc).reduce((s, e) => s + Number(e.hours), 0);
      }
    },
  },
  {
    name: 'malformed id',
    expected: 'none',
    applies: (_doc, kind) => kind === 'invoice',
    apply(doc) {
      doc.invoice_id = `inv ${(doc.invoice_id as string).slice(4)}`;
    },
  },
];

const verifier = createVerifier({ engine: createSchemaEngine() });
const evaluate = (req: Request): Verdict => verifier.evaluate(parseVerificationRequest(JSON.stringify(req)));
/**
 * The failing checks of a verdict: a schema or content check by its location; a rule or a
 * bound by its id alone, since where it reports a failure (the first non-number, or the
 * whole sum) changes with the data while it is one check.
 */
const failing = (v: Verdict) => new Set(v.errors_detail.map((e) => (e.check.startsWith('schema:') || e.check.startsWith('content:') ? `${e.check} ${e.path}` : e.check)));

/**
 * The scripted fixer: what a model does with the feedback, using only the hints and
 * the output. A candidate repair is taken as its first option; a sum is recomputed;
 * a date is read month first; a numeric string loses its non-digits; an id is
 * rebuilt from its digits.
 */
function scriptedFixer(output: JsonObject, verdict: Verdict, kind: 'invoice' | 'deliverable'): JsonObject {
  let doc = structuredClone(output);
  for (const hint of verdict.hints) {
    const repair = (hint as { repair?: { certainty: string; options?: Array<{ patch: JsonPatchOperation[] }>; patch?: JsonPatchOperation[] } }).repair;
    try {
      if (repair?.certainty === 'candidate' && repair.options) {
        doc = applyPatch(doc, repair.options[0].patch) as JsonObject;
        continue;
      }
      if (repair?.certainty === 'determined' && repair.patch) {
        doc = applyPatch(doc, repair.patch) as JsonObject;
        continue;
      }
    } catch {
      // An earlier fix moved the target: the prose below may still apply.
    }
    if (hint.check === 'consistency:sum_equals') {
      if (kind === 'invoice') doc.total = sumCents(items(doc).map((l) => Number(l.line_total)));
      else doc.hours_total = Math.round(entriesOf(doc).reduce((s, e) => s + Number(e.hours) * 10, 0)) / 10;
    }
    if (hint.check === 'schema:format' && typeof doc.issue_date === 'string') {
      const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(doc.issue_date);
      if (m) doc.issue_date = `${m[3]}-${pad(Number(m[1]))}-${pad(Number(m[2]))}`;
    }
    if (hint.check === 'schema:pattern' && typeof doc.invoice_id === 'string') {
      const digits = doc.invoice_id.replace(/\D/g, '').slice(-4).padStart(4, '0');
      doc.invoice_id = `INV-${digits}`;
    }
  }
  return doc;
}

interface Row {
  kind: string;
  faults: string[];
  passedDetermined: boolean;
  passedCandidates: boolean;
  passedRegenerate: boolean;
  regressions: number;
  applied: number;
}

const rows: Row[] = [];
let attempts = 0;
while (rows.length < SIZE && attempts < SIZE * 10) {
  attempts++;
  const kind = rand() < 0.6 ? ('invoice' as const) : ('deliverable' as const);
  const doc = kind === 'invoice' ? validInvoice() : validDeliverable();
  const base: Omit<Request, 'submitted_output'> =
    kind === 'invoice'
      ? { task_id: `corpus-${rows.length}`, expected_schema: INVOICE_SCHEMA, rules: INVOICE_RULES, enforce_rules: true }
      : { task_id: `corpus-${rows.length}`, expected_schema: DELIVERABLE_SCHEMA, rules: DELIVERABLE_RULES, enforce_rules: true };
  if (evaluate({ ...base, submitted_output: doc }).result !== 'pass') throw new Error(`the generator made a failing ${kind} before any fault: ${JSON.stringify(doc)}`);
  // One to three faults: realistic output is rarely wrong in only one way.
  const candidates = FAULTS.filter((f) => f.applies(doc, kind));
  const n = pick([1, 1, 2, 2, 3]);
  const chosen: Fault[] = [];
  while (chosen.length < n) {
    const f = pick(candidates);
    if (!chosen.includes(f)) chosen.push(f);
  }
  // A wrong total goes in last, so no other fault (a float sum recomputing the total) undoes it.
  chosen.sort((a, b) => Number(a.name === 'wrong total') - Number(b.name === 'wrong total'));
  for (const f of chosen) f.apply(doc, kind);
  const request: Request = { ...base, submitted_output: doc };
  const before = evaluate(request);
  if (before.result === 'pass') continue; // the faults cancelled out: not a failing output
  const repaired = applyRepairs(request, before as unknown as RepairableVerdict);
  const after = repaired.applied.length > 0 ? evaluate(repaired.request) : before;
  // A regression: a check that passed before the determined repairs and fails after them.
  const was = failing(before);
  const regressions = [...failing(after)].filter((k) => !was.has(k)).length;
  // `aov repair --apply candidates`: the first option of each candidate as well, no model.
  const withCandidates = applyRepairs(request, before as unknown as RepairableVerdict, { candidates: true });
  const passedCandidates = withCandidates.applied.length > 0 && evaluate(withCandidates.request).result === 'pass';
  let passedRegenerate = after.result === 'pass';
  if (!passedRegenerate) {
    const regenerated = { ...repaired.request, submitted_output: scriptedFixer(repaired.request.submitted_output, after, kind) };
    passedRegenerate = evaluate(regenerated).result === 'pass';
  }
  rows.push({ kind, faults: chosen.map((f) => f.name), passedDetermined: after.result === 'pass', passedCandidates, passedRegenerate, regressions, applied: repaired.applied.length });
}

const pct = (a: number, b: number) => (b === 0 ? '–' : `${((100 * a) / b).toFixed(1)}%`);
const count = (rs: Row[], p: (r: Row) => boolean) => rs.filter(p).length;

const lines: string[] = [];
lines.push(`Corpus: ${rows.length} failing outputs (seed ${SEED}; ${count(rows, (r) => r.kind === 'invoice')} invoices, ${count(rows, (r) => r.kind === 'deliverable')} deliverables; 1–3 faults each).`);
lines.push('');
lines.push('| outputs | count | pass after determined repairs | … with `--apply candidates` | pass after one regenerate |');
lines.push('|---|---:|---:|---:|---:|');
const group = (label: string, rs: Row[]) =>
  lines.push(`| ${label} | ${rs.length} | ${count(rs, (r) => r.passedDetermined)} (${pct(count(rs, (r) => r.passedDetermined), rs.length)}) | ${count(rs, (r) => r.passedCandidates)} (${pct(count(rs, (r) => r.passedCandidates), rs.length)}) | ${count(rs, (r) => r.passedRegenerate)} (${pct(count(rs, (r) => r.passedRegenerate), rs.length)}) |`);
group('all', rows);
const onlyDetermined = rows.filter((r) => r.faults.every((f) => FAULTS.find((x) => x.name === f)?.expected === 'determined'));
group('only faults with one known fix', onlyDetermined);
group('with a wrong total', rows.filter((r) => r.faults.includes('wrong total')));
group('with a fault no data can fix', rows.filter((r) => r.faults.some((f) => FAULTS.find((x) => x.name === f)?.expected === 'none')));
for (const f of FAULTS) group(`single fault: ${f.name}`, rows.filter((r) => r.faults.length === 1 && r.faults[0] === f.name));
lines.push('');
lines.push(`Determined repairs applied: ${rows.reduce((s, r) => s + r.applied, 0)}; regressions (a check passing before a determined repair and failing after it): ${rows.reduce((s, r) => s + r.regressions, 0)}.`);
const table = lines.join('\n');
console.log(table);

if (process.argv.includes('--write')) {
  const doc = new URL('../docs/repair.md', import.meta.url);
  const text = readFileSync(doc, 'utf8');
  const start = '<!-- repair-corpus:start -->';
  const end = '<!-- repair-corpus:end -->';
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error('docs/repair.md has no repair-corpus block');
  writeFileSync(doc, `${text.slice(0, i + start.length)}\n${table}\n${text.slice(j)}`);
  console.log('\nwritten to docs/repair.md');
}
