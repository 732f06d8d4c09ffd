/**
 * @module The public entries: the root does what the README and docs/library.md promise (verify
 * in-process, an offline receipt check with only public keys, repairs); every entry of package.json
 * `exports` names its exports (no wildcard), each with TSDoc, the root's each with an example and at
 * most 25 of them; `./receipts` answers as the root's verifyReceipt does; and the pages (web/) reach
 * the package only through these entries. The exact surface is etc/*.api.md (`npm run api:check`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';
import * as receipts from '../src/receipts/portable.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const golden = (name: string) => readFileSync(new URL(`./golden/${name}`, import.meta.url), 'utf8');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, { types: string; default: string }>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** The source of a public entry: `./dist/x.js` is built from `src/x.ts`. */
const sourceOf = (target: { default: string }) => target.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts');
const entries = Object.entries(pkg.exports).map(([subpath, target]) => ({ name: pkg.name + subpath.slice(1), source: sourceOf(target) }));

describe('package root', () => {
  it('verifies a golden receipt against its agent card, and rejects a tampered one', () => {
    const card = JSON.parse(golden('agent-card.json'));
    const receipt = golden('receipt-fail.json');
    const request = JSON.parse(readFileSync(new URL('./fixtures/invoice.request.json', import.meta.url), 'utf8'));
    expect(api.verifyReceipt(receipt, { agentCard: card }, { request })).toMatchObject({ valid: true });
    const tampered = receipt.replace('"result":"fail"', '"result":"pass"');
    expect(tampered).not.toBe(receipt);
    expect(api.verifyReceipt(tampered, { agentCard: card })).toMatchObject({ valid: false, failedCheck: 'signature' });
  });

  it('verifies in-process with the exported engine and verifier', () => {
    const verifier = api.createVerifier({ engine: api.createSchemaEngine() });
    const body = readFileSync(new URL('./fixtures/invoice.request.json', import.meta.url), 'utf8');
    const verdict = verifier.evaluate(api.parseVerificationRequest(body));
    expect(verdict.result).toBe('fail');
    expect(verdict.blocking_checks).toEqual(['consistency:sum_equals']);
    expect(verdict.schema_compliance).toEqual({ ratio: 1, passed: 22, total: 22 });
    // The old name of evaluate stays as a deprecated alias, detached use included.
    const { verify } = verifier;
    expect(verify(api.parseVerificationRequest(body))).toEqual(verdict);
  });

  it('applies the determined repairs of a verdict to a request (applyRepairs)', () => {
    const request = JSON.parse(readFileSync(new URL('./fixtures/invoice-pass.request.json', import.meta.url), 'utf8'));
    const broken = { ...request, submitted_output: { ...request.submitted_output, currency: 'usd' } };
    const verdict = {
      result: 'fail' as const,
      hints: [{ check: 'schema:enum', path: '/currency', repair: { certainty: 'determined' as const, patch: [{ op: 'replace' as const, path: '/currency', value: 'USD' }], note: 'case' } }],
    };
    const { request: patched, applied } = api.applyRepairs(broken, verdict);
    expect(applied).toHaveLength(1);
    expect(patched).toEqual(request);
    expect(() => api.applyRepairs(broken, verdict, { maxBodyBytes: 10 })).toThrow(api.RepairError);
  });
});

interface ExportedName {
  name: string;
  docs: string;
  tags: string[];
}

/** Each name an entry's source exports, with the TSDoc of its declaration (re-exports followed). */
function exportedNames(program: ts.Program, source: string): ExportedName[] {
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(path.join(root, source));
  if (!file) throw new Error(`${source} is not in the program`);
  const moduleSymbol = checker.getSymbolAtLocation(file)!;
  return checker.getExportsOfModule(moduleSymbol).map((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return {
      name: symbol.name,
      docs: ts.displayPartsToString(target.getDocumentationComment(checker)).trim(),
      tags: target.getJsDocTags(checker).map((t) => t.name),
    };
  });
}

describe('the public entries', () => {
  const program = ts.createProgram(
    entries.map((e) => path.join(root, e.source)),
    { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true, types: ['node'] },
  );

  it('export by name only (no `export *`), each name with TSDoc', () => {
    const undocumented: Record<string, string[]> = {};
    for (const entry of entries) {
      const text = readFileSync(path.join(root, entry.source), 'utf8');
      expect(text, entry.source).not.toMatch(/export\s+(type\s+)?\*/);
      const names = exportedNames(program, entry.source).filter((n) => n.docs === '').map((n) => n.name);
      if (names.length > 0) undocumented[entry.name] = names;
    }
    expect(undocumented, 'exports without TSDoc').toEqual({});
  });

  it('the root exports at most 25 names, each with an @example', () => {
    const names = exportedNames(program, 'src/index.ts');
    expect(names.length).toBeLessThanOrEqual(25);
    expect(names.filter((n) => !n.tags.includes('example')).map((n) => n.name)).toEqual([]);
    // Internals stay out of the root (they remain exported from their own modules).
    for (const internal of ['buildResponse', 'createAttestor', 'ERROR_TABLE', 'errorBody', 'canonicalize', 'computeTrustScore']) {
      expect(names.map((n) => n.name)).not.toContain(internal);
    }
  });
});

describe('agent-output-verifier/receipts', () => {
  it('answers as the root verifyReceipt does, and traces each check', () => {
    const card = JSON.parse(golden('agent-card.json'));
    const request = readFileSync(new URL('./fixtures/invoice.request.json', import.meta.url), 'utf8');
    for (const name of ['receipt-pass.json', 'receipt-fail.json']) {
      const receipt = golden(name);
      const tampered = receipt.replace('"task_id":"', '"task_id":"x');
      for (const [text, opts] of [[receipt, { request }], [receipt, {}], [tampered, {}]] as const) {
        expect(receipts.verifyReceipt(text, { agentCard: card }, opts)).toEqual(api.verifyReceipt(text, { agentCard: card }, opts));
      }
    }
    const trace = receipts.newReceiptTrace();
    expect(receipts.verifyReceipt(golden('receipt-fail.json'), { agentCard: card }, { request, trace })).toMatchObject({ valid: true });
    expect(trace.steps.every((s) => s.ok)).toBe(true);
    for (const hash of receipts.HASH_FIELDS) expect(trace.hashes[hash]?.computed).toBe(trace.hashes[hash]?.receipt);
  });
});

describe('web/ (the pages)', () => {
  const webSources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? webSources(path.join(dir, d.name)) : /\.tsx?$/.test(d.name) ? [path.join(dir, d.name)] : []));

  it('imports the package only through its public entries, never its sources', () => {
    const publicNames = new Set(entries.map((e) => e.name));
    const dependencies = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)]);
    const files = webSources(path.join(root, 'web/src'));
    expect(files.length).toBeGreaterThan(5);
    const refused: string[] = [];
    for (const file of files) {
      for (const { fileName: spec } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
        const where = `${path.relative(root, file)}: ${spec}`;
        if (spec.startsWith('.')) {
          const resolved = path.relative(root, path.resolve(path.dirname(file), spec));
          // Inside web/, or a test fixture (the playground's example); never src/.
          if (!resolved.startsWith(`web${path.sep}`) && !resolved.startsWith(`test${path.sep}fixtures${path.sep}`)) refused.push(where);
        } else if (spec === pkg.name || spec.startsWith(`${pkg.name}/`)) {
          if (!publicNames.has(spec)) refused.push(where);
        } else {
          const dependency = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
          if (!dependencies.has(dependency)) refused.push(where);
        }
      }
    }
    expect(refused).toEqual([]);
  });

  it("resolves each public entry it uses to that entry's source, for the type check as for the build", () => {
    const config = ts.readConfigFile(path.join(root, 'web/tsconfig.json'), ts.sys.readFile).config as { compilerOptions: { paths: Record<string, string[]> } };
    const bySpecifier = new Map(entries.map((e) => [e.name, e.source]));
    const paths = Object.entries(config.compilerOptions.paths);
    expect(paths.length).toBeGreaterThan(0);
    for (const [specifier, [target]] of paths) expect(path.relative(root, path.resolve(root, 'web', target!)), specifier).toBe(bySpecifier.get(specifier));
  });
});
