/**
 * @module `aov repair` as a child process (the real binary's entry, run from source):
 * exit codes, the text and JSON reports, --write feeding `aov verify`, and the
 * body limit a repair must not cross.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from './http-helpers.js';

const fixture = (name: string) => path.join(projectRoot, 'test', 'fixtures', name);
const INVOICE = JSON.parse(readFileSync(fixture('invoice-pass.request.json'), 'utf8'));

function aov(args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', path.join(projectRoot, 'src/cli/index.ts'), ...args],
      { cwd: projectRoot, env: { ...process.env, ...options.env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
    child.stdin?.end(options.input ?? '');
  });
}

let dir: string;
const f = (n: string) => path.join(dir, n);
const write = (name: string, value: unknown) => writeFileSync(f(name), JSON.stringify(value, null, 2));

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'aov-repair-'));
  // Determined faults only: a numeric string in an integer field, an enum in the wrong case, a field the schema forbids.
  const schema = structuredClone(INVOICE.expected_schema);
  schema.additionalProperties = false;
  write('determined.request.json', {
    ...INVOICE,
    expected_schema: schema,
    submitted_output: {
      ...INVOICE.submitted_output,
      currency: 'usd',
      line_items: [{ ...INVOICE.submitted_output.line_items[0], qty: '3' }, INVOICE.submitted_output.line_items[1]],
      comment: 'not in the schema',
    },
  });
  // Only a wrong total: two fixes are possible (the total, or a line), so nothing is determined.
  write('total.request.json', { ...INVOICE, submitted_output: { ...INVOICE.submitted_output, total: 130 } });
  // A fault with no known fix: the invoice id does not match its pattern.
  write('pattern.request.json', { ...INVOICE, submitted_output: { ...INVOICE.submitted_output, invoice_id: 'nope' } });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('aov repair', () => {
  it('usage errors exit 2 with the usage; --help exits 0', async () => {
    const [none, bad, unknown, help] = await Promise.all([
      aov(['repair']),
      aov(['repair', f('total.request.json'), '--apply', 'all']),
      aov(['repair', f('total.request.json'), '--aply', 'candidates']),
      aov(['repair', '--help']),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/give exactly one request file[\s\S]*usage: aov repair/);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--apply must be 'determined' or 'candidates'");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('did you mean --apply?');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--apply determined|candidates');
  });

  it('an invalid request exits 2 with the coded error; a missing file exits 2', async () => {
    const [invalid, missing] = await Promise.all([aov(['repair', '-'], { input: '{"task_id":"t","expected_schema":{}' }), aov(['repair', f('nope.json')])]);
    expect(invalid.code).toBe(2);
    expect(JSON.parse(invalid.stdout)).toMatchObject({ code: 'invalid_request' });
    expect(invalid.stderr).toContain('invalid request');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read');
  });

  it('a passing request exits 0 and says there is nothing to repair', async () => {
    const r = await aov(['repair', fixture('invoice-pass.request.json')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^before {2}pass\nthe output already passes/);
  });

  it('a fault without a known fix exits 1 with the verdict and the output unchanged', async () => {
    const r = await aov(['repair', f('pattern.request.json'), '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.before.result).toBe('fail');
    expect(out.after).toBeNull();
    expect(out.repairs.applied).toEqual([]);
    expect(out.request.submitted_output.invoice_id).toBe('nope');
    expect(r.stderr).toContain('no repair applies');
  });

  it('determined faults only: exit 0; the repaired request written with --write passes aov verify', async () => {
    const r = await aov(['repair', f('determined.request.json'), '--write', f('fixed.request.json')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^before {2}fail {2}blocking /);
    expect(r.stdout).toMatch(/^after {3}pass$/m);
    expect(r.stdout).toContain("applied  schema:type at '$.line_items[0].qty'");
    const fixed = JSON.parse(readFileSync(f('fixed.request.json'), 'utf8'));
    expect(fixed.submitted_output).toEqual(INVOICE.submitted_output);
    const verified = await aov(['verify', f('fixed.request.json')]);
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout).result).toBe('pass');
  });

  it('--json: both verdicts, the repairs, and the repaired request', async () => {
    const r = await aov(['repair', f('determined.request.json'), '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.before.result).toBe('fail');
    expect(out.before.next_actions[0]).toMatchObject({ action: 'apply_repairs' });
    expect(out.after.result).toBe('pass');
    expect(out.repairs.applied.map((a: { certainty: string }) => a.certainty)).toEqual(['determined', 'determined', 'determined']);
    expect(out.request.submitted_output).toEqual(INVOICE.submitted_output);
    expect(out.after.output_hash).not.toBe(out.before.output_hash);
  });

  it('a wrong total has only candidate repairs: exit 1 with the candidate skipped; --apply candidates takes the first option and exits 0', async () => {
    const plain = await aov(['repair', f('total.request.json')]);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toContain('skipped (candidate; --apply candidates takes its first option) consistency:sum_equals');
    expect(plain.stderr).toContain('no repair applies');
    const opted = await aov(['repair', f('total.request.json'), '--apply', 'candidates', '--json']);
    expect(opted.code, opted.stderr).toBe(0);
    const out = JSON.parse(opted.stdout);
    expect(out.repairs.applied).toMatchObject([{ check: 'consistency:sum_equals', certainty: 'candidate' }]);
    expect(out.request.submitted_output.total).toBe(129.5);
    expect(out.after.result).toBe('pass');
  });

  it('a repair that would exceed BODY_LIMIT_BYTES is not applied: exit 1 with the error naming it', async () => {
    const schema = structuredClone(INVOICE.expected_schema);
    schema.properties.memo = { type: 'string', default: 'm'.repeat(2000) };
    schema.required = [...schema.required, 'memo'];
    write('big.request.json', { ...INVOICE, expected_schema: schema });
    const size = Buffer.byteLength(JSON.stringify(JSON.parse(readFileSync(f('big.request.json'), 'utf8'))));
    const r = await aov(['repair', f('big.request.json')], { env: { BODY_LIMIT_BYTES: String(size + 500) } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the repair of schema:required at '\$' would make the request body \d+ bytes, over the limit of \d+; nothing was sent/);
    // With room for it, the same repair applies and the output passes.
    const roomy = await aov(['repair', f('big.request.json')], { env: { BODY_LIMIT_BYTES: String(size + 5000) } });
    expect(roomy.code, roomy.stderr).toBe(0);
  });
});

