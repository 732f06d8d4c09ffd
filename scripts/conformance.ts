/**
 * @module Prints JSON-Schema-Test-Suite results per draft and per file:
 * `npx tsx scripts/conformance.ts [--failures]` (exit code 1 when a required test fails).
 * Required tests run with formats as annotations (what the suite expects for
 * 2019-09/2020-12); optional/format tests run with format assertion on.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DRAFTS, runConformance, suiteDir, totals } from './conformance-lib.js';
import { CONFORMANCE_SKIPS } from '../src/core/schema/conformance-skips.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = suiteDir(projectRoot);
if (!existsSync(dir)) {
  console.log(`JSON-Schema-Test-Suite not found at ${dir}; nothing to run.`);
  process.exit(0);
}
const showFailures = process.argv.includes('--failures');
const results = runConformance(dir);
let failedRequired = 0;
for (const draft of DRAFTS) {
  for (const kind of ['required', 'format'] as const) {
    const t = totals(results, draft.name, kind);
    console.log(`${draft.name} ${kind === 'required' ? 'required' : 'optional/format'}: ${t.passed}/${t.total} passed${t.skipped ? `, ${t.skipped} skipped` : ''}`);
    if (kind === 'required') failedRequired += t.total - t.passed;
    for (const g of results) {
      if (g.draft !== draft.name || g.kind !== kind) continue;
      console.log(`  ${g.file}: ${g.passed}/${g.total}${g.skipped ? ` (${g.skipped} skipped)` : ''}`);
      if (showFailures) for (const f of g.failures) console.log(`    FAIL ${f.id}: ${f.reason}`);
    }
  }
}
if (CONFORMANCE_SKIPS.length > 0) {
  console.log('Deliberate skips:');
  for (const s of CONFORMANCE_SKIPS) console.log(`  ${s.id}: ${s.reason}`);
}
process.exit(failedRequired > 0 ? 1 : 0);
