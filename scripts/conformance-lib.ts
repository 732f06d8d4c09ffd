/**
 * @module The JSON-Schema-Test-Suite runner shared by scripts/conformance.ts and
 * test/conformance.test.ts: required tests and optional/format tests for draft
 * 2020-12, 2019-09 and draft-07, remotes served in memory (never fetched).
 * Required tests run with formats as annotations (what the suite expects);
 * optional/format tests run with format assertion on (what the product does).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Json } from '../src/core/types.js';
import type { SchemaEngine } from '../src/core/schema/engine.js';
import { createSchemaEngine } from '../src/core/schema/index.js';
import { isSkipped } from '../src/core/schema/conformance-skips.js';

export const DRAFTS = [
  { name: 'draft2020-12', dialect: 'https://json-schema.org/draft/2020-12/schema' },
  { name: 'draft2019-09', dialect: 'https://json-schema.org/draft/2019-09/schema' },
  { name: 'draft7', dialect: 'http://json-schema.org/draft-07/schema#' },
] as const;

export type SuiteKind = 'required' | 'format';

export interface TestFailure {
  id: string;
  reason: string;
}

export interface GroupResult {
  draft: string;
  kind: SuiteKind;
  file: string;
  passed: number;
  total: number;
  skipped: number;
  failures: TestFailure[];
}

interface SuiteCase {
  description: string;
  schema: Json;
  tests: Array<{ description: string; data: Json; valid: boolean }>;
}

/** Where the suite lives: `../shared/conformance/json-schema-test-suite` from the project root. */
export function suiteDir(projectRoot: string): string {
  return path.resolve(projectRoot, '..', 'shared', 'conformance', 'json-schema-test-suite');
}

function loadRemotes(dir: string): Map<string, Json> {
  const out = new Map<string, Json>();
  const walk = (d: string, rel: string): void => {
    for (const name of readdirSync(d)) {
      const full = path.join(d, name);
      const r = rel === '' ? name : `${rel}/${name}`;
      if (statSync(full).isDirectory()) walk(full, r);
      else if (name.endsWith('.json')) out.set(`http://localhost:1234/${r}`, JSON.parse(readFileSync(full, 'utf8')) as Json);
    }
  };
  walk(dir, '');
  return out;
}

function jsonFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
}

/** Run every selected group; never throws for a failing schema (it becomes a failure). */
export function runConformance(root: string, engine: SchemaEngine = createSchemaEngine()): GroupResult[] {
  // every keyword as a closure: results must be identical to the default (generated) path
  const reference = createSchemaEngine({ generatedCode: false });
  const resources = loadRemotes(path.join(root, 'remotes'));
  const results: GroupResult[] = [];
  for (const draft of DRAFTS) {
    const base = path.join(root, 'tests', draft.name);
    const groups: Array<[SuiteKind, string, string]> = [
      ...jsonFiles(base).map((f): [SuiteKind, string, string] => ['required', f, path.join(base, f)]),
      ...jsonFiles(path.join(base, 'optional', 'format')).map((f): [SuiteKind, string, string] => [
        'format', `optional/format/${f}`, path.join(base, 'optional', 'format', f),
      ]),
    ];
    for (const [kind, file, full] of groups) {
      const cases = JSON.parse(readFileSync(full, 'utf8')) as SuiteCase[];
      const g: GroupResult = { draft: draft.name, kind, file, passed: 0, total: 0, skipped: 0, failures: [] };
      for (const c of cases) {
        let compiled: ReturnType<SchemaEngine['compile']> | null = null;
        let closures: ReturnType<SchemaEngine['compile']> | null = null;
        let compileError = '';
        try {
          const options = { resources, assertFormats: kind === 'format', defaultDialect: draft.dialect };
          compiled = engine.compile(c.schema, options);
          closures = reference.compile(c.schema, options);
        } catch (e) {
          compileError = e instanceof Error ? e.message : String(e);
        }
        for (const t of c.tests) {
          const id = `${draft.name}/${file}/${c.description}/${t.description}`;
          if (isSkipped(id)) {
            g.skipped++;
            continue;
          }
          g.total++;
          if (compiled === null) {
            g.failures.push({ id, reason: `compile error: ${compileError}` });
            continue;
          }
          let reason = '';
          try {
            const r = compiled.evaluate(t.data);
            if (r.valid !== t.valid) reason = `expected ${t.valid ? 'valid' : 'invalid'}, got ${r.valid ? 'valid' : 'invalid'}`;
            else if (r.valid !== (r.passed === r.total) || r.passed > r.total) reason = `counting invariant broken: ${r.passed}/${r.total} valid=${r.valid}`;
            else if (!r.valid && r.failures.length === 0) reason = 'invalid without a failure';
            else {
              const slow = closures!.evaluate(t.data);
              const a = compiled.evaluate(t.data, { collectUndeclared: true });
              const b = closures!.evaluate(t.data, { collectUndeclared: true });
              if (JSON.stringify(slow) !== JSON.stringify(r) || JSON.stringify(a) !== JSON.stringify(b) || a.passed !== r.passed || a.total !== r.total) {
                reason = `generated and closure paths disagree: ${r.passed}/${r.total} vs ${slow.passed}/${slow.total}`;
              }
            }
          } catch (e) {
            reason = `threw: ${e instanceof Error ? e.message : String(e)}`;
          }
          if (reason === '') g.passed++;
          else g.failures.push({ id, reason });
        }
      }
      results.push(g);
    }
  }
  return results;
}

export interface Totals {
  passed: number;
  total: number;
  skipped: number;
}

export function totals(results: GroupResult[], draft: string, kind: SuiteKind): Totals {
  const t: Totals = { passed: 0, total: 0, skipped: 0 };
  for (const r of results) {
    if (r.draft !== draft || r.kind !== kind) continue;
    t.passed += r.passed;
    t.total += r.total;
    t.skipped += r.skipped;
  }
  return t;
}
