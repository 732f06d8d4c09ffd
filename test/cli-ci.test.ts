/**
 * @module The command line as CI jobs use it: --version, did-you-mean for
 * misspelt commands and flags, JSON syntax errors by line and column, one text
 * line per verdict over several outputs, the configured data directory
 * (DATA_DIR) for keys and signing, and an agent card fetched from its URL.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { main } from '../src/cli/index.js';
import type { CliIO } from '../src/cli/io.js';
import { didYouMean, lineColumn } from '../src/cli/args.js';
import { VERSION } from '../src/version.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const EXAMPLE = path.join(ROOT, 'examples', 'invoice');
const ex = (name: string) => path.join(EXAMPLE, name);

async function aov(argv: string[], files: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    readFile: (p) => (p in files ? files[p] : readFileSync(p, 'utf8')),
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'aov-ci-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('aov: version and misspellings', () => {
  it('--version prints the package version', async () => {
    expect(await aov(['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('suggests the command or flag that was meant, and exits 2', async () => {
    const cmd = await aov(['verfy']);
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toContain("unknown command 'verfy' — did you mean 'verify'?");
    const flag = await aov(['verify', '--schema', ex('schema.json'), '--ouput', ex('output.json')]);
    expect(flag.code).toBe(2);
    expect(flag.stdout).toBe('');
    expect(flag.stderr).toContain("unknown option '--ouput' — did you mean --output?");
    const keys = await aov(['keys', 'list', '--data-dri', dir]);
    expect(keys.stderr).toContain('did you mean --data-dir?');
    const action = await aov(['keys', 'rotat']);
    expect(action.stderr).toContain("did you mean 'rotate'?");
    const receipt = await aov(['receipt', 'verify', 'R', '--agent-crad', 'x']);
    expect(receipt.stderr).toContain('did you mean --agent-card?');
    const hash = await aov(['request-hash', 'R', '--canonicl']);
    expect(hash.stderr).toContain('did you mean --canonical?');
    expect((await aov(['log', 'audti'])).stderr).toContain("did you mean 'audit'?");
    expect((await aov(['log', 'verify', '--kye', 'x'])).stderr).toContain('did you mean --key?');
    // Nothing close: no guess.
    expect((await aov(['verify', '--zzzzzz'])).stderr).toMatch(/unknown option '--zzzzzz'\n/);
  });

  it('didYouMean only answers for near misses', () => {
    expect(didYouMean('ouput', ['output', 'schema'])).toBe('output');
    expect(didYouMean('formta', ['format', 'detail'])).toBe('format');
    expect(didYouMean('xyz', ['output', 'schema'])).toBeUndefined();
  });
});

describe('aov verify: JSON errors with line and column', () => {
  it('names the file, line and column of a syntax error', async () => {
    const r = await aov(['verify', 'REQ'], { REQ: '{\n  "task_id": "t",\n  "x": }\n' });
    expect(r.code).toBe(2);
    const body = JSON.parse(r.stdout);
    expect(body.code).toBe('invalid_request');
    expect(body.fields[0].problem).toBe('is not valid JSON (unexpected character at line 3, column 8 of REQ)');
    const part = await aov(['verify', '--schema', 'S', '--output', ex('output.json')], { S: '{"type":\n"object",,}' });
    expect(part.code).toBe(2);
    expect(JSON.parse(part.stdout).fields[0]).toMatchObject({ field: 'expected_schema', problem: expect.stringContaining('at line 2, column 10 of S') });
  });

  it('lineColumn counts from 1', () => {
    expect(lineColumn('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });
});

describe('aov verify: several outputs in one run', () => {
  const base = ['verify', '--schema', ex('schema.json'), '--rules', ex('rules.json'), '--enforce-rules'];

  it('--format text over three outputs: three lines, a summary on stderr, exit 1 when one fails', async () => {
    const r = await aov([...base, '--output', ex('output-fixed.json'), '--output', ex('output.json'), '--output', ex('output-fixed.json'), '--format', 'text']);
    expect(r.code).toBe(1);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(`pass ${ex('output-fixed.json')}  schema 22/22  integrity 3/3  overall 25/25`);
    expect(lines[1]).toBe(`fail ${ex('output.json')}  schema 22/22  integrity 2/3  overall 24/25  blocking consistency:sum_equals`);
    expect(lines[2]).toMatch(/^pass /);
    expect(r.stderr).toBe('aov verify: 3 verified: 2 pass, 1 fail\n');
  });

  it('exit 0 when all pass; a directory stands for its *.json files', async () => {
    const outs = path.join(dir, 'outputs');
    mkdirSync(outs);
    const fixed = readFileSync(ex('output-fixed.json'), 'utf8');
    writeFileSync(path.join(outs, 'b.json'), fixed);
    writeFileSync(path.join(outs, 'a.json'), fixed);
    writeFileSync(path.join(outs, 'notes.txt'), 'not an output');
    const r = await aov([...base, '--output', outs, '--format', 'text']);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n').map((l) => l.split(/\s+/).slice(0, 2).join(' '))).toEqual([`pass ${path.join(outs, 'a.json')}`, `pass ${path.join(outs, 'b.json')}`]);
  });

  it('JSON format: {summary, results}, one entry per file; an invalid output counts as invalid (exit 2)', async () => {
    const r = await aov([...base, '--output', ex('output.json'), '--output', 'BAD'], { BAD: '{"total": 1,' });
    expect(r.code).toBe(2);
    const body = JSON.parse(r.stdout);
    expect(body.summary).toEqual({ verified: 2, pass: 0, fail: 1, invalid: 1 });
    expect(body.results[0]).toMatchObject({ file: ex('output.json'), response: { result: 'fail' } });
    expect(body.results[1]).toMatchObject({ file: 'BAD', error: { code: 'invalid_request' } });
  });

  it('several request files: one verdict each', async () => {
    const r = await aov(['verify', ex('request.json'), path.join(ROOT, 'test', 'fixtures', 'invoice-pass.request.json'), '--format', 'text']);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n').filter(Boolean).map((l) => l.split(' ')[0])).toEqual(['fail', 'pass']);
  });
});

describe('the configured data directory (DATA_DIR)', () => {
  const cli = (args: string[], env: Record<string, string>) =>
    // cwd is a scratch folder (to show nothing lands in ./data), so tsx is named by its file.
    spawnSync(process.execPath, ['--import', pathToFileURL(path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href, path.join(ROOT, 'src', 'cli', 'index.ts'), ...args], {
      cwd: dir,
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });

  it('DATA_DIR=D aov keys rotate rotates the keys in D, not ./data', () => {
    const d = path.join(dir, 'service-data');
    expect(cli(['keys', 'generate'], { DATA_DIR: d }).status).toBe(0);
    const rotated = cli(['keys', 'rotate'], { DATA_DIR: d });
    expect(rotated.status).toBe(0);
    const list = JSON.parse(cli(['keys', 'list'], { DATA_DIR: d }).stdout) as Array<{ keyVersion: string; status: string }>;
    expect(list.map((k) => k.status)).toEqual(['retired', 'active']);
    expect(list[1].keyVersion).toBe(JSON.parse(rotated.stdout).keyVersion);
    expect(readdirSync(dir)).not.toContain('data');
  });

  it('aov verify --sign signs with the key in DATA_DIR; a new key is announced on stderr', () => {
    const fresh = path.join(dir, 'fresh-data');
    const first = cli(['verify', '--sign', ex('request.json')], { DATA_DIR: fresh });
    expect(first.status).toBe(1);
    expect(first.stderr).toMatch(/created a new signing key k-\S+ in /);
    const keyVersion = JSON.parse(first.stdout).attestation.key_version;
    expect(readdirSync(path.join(fresh, 'keys')).some((f) => f.startsWith(keyVersion))).toBe(true);
    const second = cli(['verify', '--sign', ex('request.json')], { DATA_DIR: fresh });
    expect(second.stderr).not.toMatch(/created a new signing key/);
    expect(JSON.parse(second.stdout).attestation.key_version).toBe(keyVersion);
  });
});

describe('aov receipt verify --agent-card URL', () => {
  let server: Server;
  let url: string;
  let receipt: string;

  beforeAll(async () => {
    const data = path.join(dir, 'card-data');
    const signed = await aov(['verify', '--sign', '--data-dir', data, ex('request.json')]);
    receipt = signed.stdout;
    const keys = JSON.parse((await aov(['keys', 'list', '--data-dir', data])).stdout);
    const card = JSON.stringify({
      name: 'agent-output-verifier',
      capabilities: { extensions: [{ uri: 'urn:json-schema-verifier:extension:attestation:v1', required: false, params: { publicKeys: keys } }] },
    });
    server = createServer((req, res) => {
      if (req.url === '/.well-known/agent-card.json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(card);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fetches the card and verifies the receipt with it', async () => {
    const r = await aov(['receipt', 'verify', 'R', '--agent-card', `${url}/.well-known/agent-card.json`, '--request', ex('request.json')], { R: receipt });
    expect(r.stdout).toMatch(/^ok: receipt signature valid and hashes match the request/);
    expect(r.code).toBe(0);
    const tampered = await aov(['receipt', 'verify', 'R', '--agent-card', `${url}/.well-known/agent-card.json`], { R: receipt.replace('"fail"', '"pass"') });
    expect(tampered.code).toBe(1);
  });

  it('an unreachable or missing card is a usage error (exit 2) naming the URL', async () => {
    const missing = await aov(['receipt', 'verify', 'R', '--agent-card', `${url}/nope.json`], { R: receipt });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`cannot fetch the agent card ${url}/nope.json: HTTP 404`);
  });
});

describe('aov serve: where to go', () => {
  it('lists the docs, MCP (with the add-mcp line) and agent card, and the start page only when served', async () => {
    const { whereToGo } = await import('../src/cli/serve.js');
    const without = whereToGo('http://h:1', () => false);
    expect(without).toBe(
      '  API docs    http://h:1/docs\n  MCP         http://h:1/mcp   (npx add-mcp http://h:1/mcp -n verifier)\n  agent card  http://h:1/.well-known/agent-card.json\n',
    );
    expect(whereToGo('http://h:1', (u) => u === '/')).toMatch(/^ {2}start page {2}http:\/\/h:1\/\n/);
  });
});
