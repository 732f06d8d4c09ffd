import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../src/cli/index.js';
import type { CliIO } from '../src/cli/io.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixture = (name: string) => path.join(root, 'test', 'fixtures', name);

function memoryIO(stdin = ''): CliIO & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout(t: string) {
      io.out += t;
    },
    stderr(t: string) {
      io.err += t;
    },
    readFile(p: string) {
      return p === '-' ? stdin : readFileSync(p, 'utf8');
    },
  };
  return io;
}

async function cli(argv: string[], stdin?: string) {
  const io = memoryIO(stdin);
  const code = await main(['verify', ...argv], io);
  return { code, out: io.out, err: io.err, json: io.out.startsWith('{') ? JSON.parse(io.out) : undefined };
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'aov-verify-'));
  const req = JSON.parse(readFileSync(fixture('invoice.request.json'), 'utf8'));
  writeFileSync(path.join(dir, 'schema.json'), JSON.stringify(req.expected_schema));
  writeFileSync(path.join(dir, 'output.json'), JSON.stringify(req.submitted_output));
  writeFileSync(path.join(dir, 'output-pass.json'), JSON.stringify({ ...req.submitted_output, total: 129.5 }));
  writeFileSync(path.join(dir, 'rules.json'), JSON.stringify(req.rules));
  writeFileSync(path.join(dir, 'bounds.json'), JSON.stringify({ 'line_items[].qty': { max: 2 } }));
  writeFileSync(path.join(dir, 'dup.json'), '{"a":1,"a":2}');
  writeFileSync(path.join(dir, 'bad.json'), '{"a":');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const f = (n: string) => path.join(dir, n);

describe('aov verify (in-process)', () => {
  it('fails the invoice example with exit 1 and prints the full response', async () => {
    const r = await cli([fixture('invoice.request.json')]);
    expect(r.code).toBe(1);
    expect(r.json.result).toBe('fail');
    expect(r.json.summary.blocking_checks).toEqual(['consistency:sum_equals']);
    expect(r.json.schema_compliance).toEqual({ ratio: 1, passed: 22, total: 22 });
    expect(r.json.errors_detail[0].found).toBe('sum 129.5');
    expect(r.json.hints.some((h: { source: string }) => h.source === 'integrity')).toBe(true);
    expect(r.json.verification_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(r.json.verified_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(r.json.request_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(r.out).toContain('\n  "summary": {');
  });

  it('passes the invoice with total 129.5 (exit 0), compact on request', async () => {
    const r = await cli([fixture('invoice-pass.request.json'), '--detail', 'compact']);
    expect(r.code).toBe(0);
    expect(r.json.result).toBe('pass');
    expect(r.json).not.toHaveProperty('request_hash');
    expect(r.json).not.toHaveProperty('errors');
  });

  it('reads the request from standard input with -', async () => {
    const r = await cli(['-'], readFileSync(fixture('invoice-pass.request.json'), 'utf8'));
    expect(r.code).toBe(0);
  });

  it('builds the request from --schema/--output/--rules/--bounds files with the same hashes', async () => {
    const full = await cli([fixture('invoice.request.json')]);
    const parts = await cli(['--schema', f('schema.json'), '--output', f('output.json'), '--rules', f('rules.json'), '--enforce-rules', '--task-id', 'invoice-example-1', '--agent-id', 'test-invoice-agent']);
    expect(parts.code).toBe(1);
    for (const k of ['output_hash', 'schema_hash', 'rules_hash', 'request_hash']) expect(parts.json[k]).toBe(full.json[k]);
    const pass = await cli(['--schema', f('schema.json'), '--output', f('output-pass.json'), '--rules', f('rules.json'), '--enforce-rules']);
    expect(pass.code).toBe(0);
    expect(pass.json.task_id).toBe('local');
    expect(pass.json.agent_id).toBeNull();
    const warn = await cli(['--schema', f('schema.json'), '--output', f('output.json'), '--rules', f('rules.json')]);
    expect(warn.code).toBe(0);
    expect(warn.json.flags[0].severity).toBe('warning');
    const bounded = await cli(['--schema', f('schema.json'), '--output', f('output-pass.json'), '--bounds', f('bounds.json'), '--enforce-rules', '--strict']);
    expect(bounded.code).toBe(1);
    expect(bounded.json.summary.blocking_checks).toEqual(['bounds:range']);
    expect(bounded.json.strict_content_check).toBe(true);
  });

  it('treats a duplicated key inside the output file as a failed integrity check', async () => {
    const r = await cli(['--schema', f('schema.json'), '--output', f('dup.json')]);
    expect(r.code).toBe(1);
    expect(r.json.summary.blocking_checks).toContain('integrity:unique_keys');
  });

  it('prints the error object and exits 2 for an invalid request', async () => {
    const r = await cli(['-'], '{"task_id":"t","expected_schema":{},"submitted_output":1,"rules":[{"type":"nope","field":"x"}]}');
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ code: 'invalid_request', status: 422, charged: false });
    expect(r.json.fields).toEqual([
      { field: 'rules[0].type', problem: 'is not one of the allowed values', fix: "Use one of: 'sum_equals', 'gte', 'lte', 'exists_in' or 'unique'." },
    ]);
    const bad = await cli(['--schema', f('bad.json'), '--output', f('output.json')]);
    expect(bad.code).toBe(2);
    expect(bad.json.fields[0].field).toBe('expected_schema');
  });

  it('exits 2 with usage on stderr for usage errors', async () => {
    for (const argv of [[], ['--schema', 'x.json'], ['a.json', '--output', 'b.json'], ['--bogus'], ['a.json', '--strict'], ['--detail', 'tiny', 'a.json']]) {
      const r = await cli(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain('usage: aov verify');
    }
    const missing = await cli([f('does-not-exist.json')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('ENOENT');
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('--enforce-rules');
  });
});

describe('aov verify (child process)', () => {
  const run = (args: string[], input?: string) =>
    new Promise<{ code: number; stdout: string }>((resolve) => {
      const child = execFile('npx', ['tsx', 'src/cli/index.ts', 'verify', ...args], { cwd: root }, (err, stdout) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout });
      });
      if (input !== undefined) child.stdin?.end(input);
    });

  it('exits 1 on fail, 0 on pass, 2 on an invalid request', async () => {
    const [fail, pass, invalid] = await Promise.all([
      run([fixture('invoice.request.json')]),
      run([fixture('invoice-pass.request.json')]),
      run(['-'], '{"task_id":"t","expected_schema":{},"submitted_output":"\\ud800"}'),
    ]);
    expect(fail.code).toBe(1);
    expect(JSON.parse(fail.stdout).result).toBe('fail');
    expect(pass.code).toBe(0);
    expect(JSON.parse(pass.stdout).result).toBe('pass');
    expect(invalid.code).toBe(2);
    expect(JSON.parse(invalid.stdout).fields[0].field).toBe('submitted_output');
  });
});

describe('aov verify --strict-schema', () => {
  it('exits 2 with the did-you-mean message for a schema typo; without the flag it is a warning flag', async () => {
    writeFileSync(f('typo-schema.json'), JSON.stringify({ type: 'object', requried: ['total'], properties: { total: { type: 'number', minimun: 0 } } }));
    writeFileSync(f('negative.json'), JSON.stringify({ total: -5 }));
    const strict = await cli(['--schema', f('typo-schema.json'), '--output', f('negative.json'), '--strict-schema']);
    expect(strict.code).toBe(2);
    expect(strict.err).toContain('"requried" — did you mean "required"?');
    expect(strict.err).toContain('expected_schema.properties.total.minimun');
    const lax = await cli(['--schema', f('typo-schema.json'), '--output', f('negative.json')]);
    expect(lax.code).toBe(0);
    expect(lax.json.flags.map((x: { check: string }) => x.check)).toEqual(['schema:unknown_keyword', 'schema:unknown_keyword']);
    const clean = await cli(['--schema', f('schema.json'), '--output', f('output-pass.json'), '--strict-schema']);
    expect(clean.code).toBe(0);
  });
});
