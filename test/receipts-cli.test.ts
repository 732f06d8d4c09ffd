import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { main } from '../src/cli/index.js';
import type { CliIO } from '../src/cli/io.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const FAIL_REQUEST = path.join(ROOT, 'test', 'fixtures', 'invoice.request.json');
const PASS_REQUEST = path.join(ROOT, 'test', 'fixtures', 'invoice-pass.request.json');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `aov ...` in-process; `files` overrides what reading a path returns (`-` = stdin). */
async function aov(argv: string[], files: Record<string, string> = {}): Promise<Run> {
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

function cardFromKeys(keysJson: string): string {
  return JSON.stringify({
    name: 'agent-output-verifier',
    capabilities: { extensions: [{ uri: 'urn:json-schema-verifier:extension:attestation:v1', required: false, params: { publicKeys: JSON.parse(keysJson) } }] },
  });
}

let dir: string;
let dataDir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'aov-receipts-cli-'));
  dataDir = path.join(dir, 'data');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('aov verify --sign → aov receipt verify --agent-card', () => {
  let receipt: string;
  let card: string;
  const failRequest = readFileSync(FAIL_REQUEST, 'utf8');

  beforeAll(async () => {
    const gen = await aov(['keys', 'generate', '--data-dir', dataDir]);
    expect(gen.code).toBe(0);
    const signed = await aov(['verify', '--sign', '--data-dir', dataDir, FAIL_REQUEST]);
    expect(signed.code).toBe(1); // the invoice fails verification; the receipt is still signed
    receipt = signed.stdout.trimEnd();
    const list = await aov(['keys', 'list', '--data-dir', dataDir]);
    expect(list.code).toBe(0);
    card = cardFromKeys(list.stdout);
    for (const out of [gen, signed, list]) expect(`${out.stdout}${out.stderr}`).not.toMatch(/PRIVATE KEY/);
  });

  const verifyArgs = ['receipt', 'verify', 'R', '--agent-card', 'C', '--request', 'Q'];

  it('a fresh receipt verifies, with and without the request', async () => {
    const ok = await aov(verifyArgs, { R: receipt, C: card, Q: failRequest });
    expect(ok).toMatchObject({ code: 0, stderr: '' });
    expect(ok.stdout).toMatch(/^ok: .*key_version k-\d{8}-[0-9a-f]+\)\n$/);
    expect((await aov(['receipt', 'verify', '-', '--agent-card', 'C'], { '-': receipt, C: card })).code).toBe(0);
    const pub = JSON.parse(card).capabilities.extensions[0].params.publicKeys[0].publicKey as string;
    expect((await aov(['receipt', 'verify', 'R', '--public-key', pub, '--request', 'Q'], { R: receipt, Q: failRequest })).code).toBe(0);
  });

  it('changing any single byte of the receipt fails it, naming the check', async () => {
    const original = JSON.parse(receipt) as unknown;
    const bytes = Buffer.from(receipt, 'utf8');
    const seen = new Map<string, number>();
    let tried = 0;
    for (let i = 0; i < bytes.length; i++) {
      for (const flip of [0x01, 0x20]) {
        const b = Buffer.from(bytes);
        b[i] ^= flip;
        const text = b.toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined; // breaks parsing: must be rejected as well
        }
        if (parsed !== undefined && isDeepStrictEqual(parsed, original)) continue;
        tried++;
        const r = await aov(verifyArgs, { R: text, C: card, Q: failRequest });
        const m = /^invalid: ([a-z_]+): /.exec(r.stdout);
        if (r.code !== 1 || !m) throw new Error(`byte ${i} ^ 0x${flip.toString(16)} was accepted or misreported: ${r.code} ${r.stdout}${r.stderr}`);
        seen.set(m[1], (seen.get(m[1]) ?? 0) + 1);
      }
    }
    expect(tried).toBeGreaterThan(bytes.length);
    // Mutations land in every part: format (broken JSON/encoding, mismatched key versions), algorithm, signature.
    // (A single byte cannot reach key_not_found: both key_version copies would have to change.)
    for (const check of ['format', 'signature', 'algorithm']) expect(seen.get(check) ?? 0).toBeGreaterThan(0);
  });

  it('changing any field of the request fails it, naming the hash', async () => {
    const req = JSON.parse(failRequest);
    const variants: Array<[string, Record<string, unknown>]> = [
      ['request_hash', { ...req, task_id: 'invoice-example-2' }],
      ['request_hash', { ...req, agent_id: 'someone-else' }],
      ['request_hash', { ...req, agent_id: null }],
      ['schema_hash', { ...req, expected_schema: { ...req.expected_schema, required: ['invoice_id'] } }],
      ['output_hash', { ...req, submitted_output: { ...req.submitted_output, total: 129.5 } }],
      ['rules_hash', { ...req, rules: [{ ...req.rules[0], tolerance: 0.5 }] }],
      ['rules_hash', { ...req, rules: null }],
      ['rules_hash', { ...req, bounds: { total: { min: 0 } } }],
      ['request_hash', { ...req, enforce_rules: false }],
      ['request_hash', { ...req, strict_content_check: true }],
      ['request_invalid', { ...req, unknown_field: 1 }],
    ];
    for (const [check, variant] of variants) {
      const r = await aov(verifyArgs, { R: receipt, C: card, Q: JSON.stringify(variant) });
      expect(r.code, JSON.stringify(variant).slice(0, 80)).toBe(1);
      expect(r.stdout).toMatch(new RegExp(`^invalid: ${check}: `));
    }
    // Same request, other spelling: still valid (hashes cover the parsed value, detail is not hashed).
    expect((await aov(verifyArgs, { R: receipt, C: card, Q: JSON.stringify({ ...req, detail: 'compact' }) })).code).toBe(0);
  });

  it('changing any single byte of the request file fails it when the parsed value changes', async () => {
    const original = JSON.parse(failRequest) as unknown;
    const bytes = Buffer.from(failRequest, 'utf8');
    let tried = 0;
    for (let i = 0; i < bytes.length; i++) {
      const b = Buffer.from(bytes);
      b[i] ^= 0x01;
      const text = b.toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (parsed !== undefined && isDeepStrictEqual(parsed, original)) continue;
      tried++;
      const r = await aov(verifyArgs, { R: receipt, C: card, Q: text });
      if (r.code !== 1 || !/^invalid: (output_hash|schema_hash|rules_hash|request_hash|request_invalid): /.test(r.stdout)) {
        throw new Error(`request byte ${i} change was accepted or misreported: ${r.code} ${r.stdout}`);
      }
    }
    expect(tried).toBeGreaterThan(100);
  });

  it('after rotation: the old receipt still verifies; new receipts carry the new key_version', async () => {
    const oldVersion = JSON.parse(receipt).attestation.key_version as string;
    const rotated = await aov(['keys', 'rotate', '--data-dir', dataDir]);
    expect(rotated.code).toBe(0);
    const newVersion = JSON.parse(rotated.stdout).keyVersion as string;
    expect(newVersion).not.toBe(oldVersion);
    const signed = await aov(['verify', '--sign', '--data-dir', dataDir, PASS_REQUEST]);
    expect(signed.code).toBe(0);
    const fresh = JSON.parse(signed.stdout);
    expect(fresh.attestation.key_version).toBe(newVersion);
    expect(fresh.verify.key_version).toBe(newVersion);
    const list = await aov(['keys', 'list', '--data-dir', dataDir]);
    const keys = JSON.parse(list.stdout) as Array<{ keyVersion: string; status: string; notAfter: string | null }>;
    expect(keys.map((k) => [k.keyVersion, k.status])).toEqual([
      [oldVersion, 'retired'],
      [newVersion, 'active'],
    ]);
    const card2 = cardFromKeys(list.stdout);
    expect((await aov(verifyArgs, { R: receipt, C: card2, Q: failRequest })).code).toBe(0);
    expect((await aov(verifyArgs, { R: signed.stdout, C: card2, Q: readFileSync(PASS_REQUEST, 'utf8') })).code).toBe(0);
    // The old card does not know the new key.
    const stale = await aov(verifyArgs, { R: signed.stdout, C: card, Q: readFileSync(PASS_REQUEST, 'utf8') });
    expect(stale.code).toBe(1);
    expect(stale.stdout).toMatch(/^invalid: key_not_found: /);
  });

  it('usage errors exit 2', async () => {
    expect((await aov(['receipt', 'verify', 'R'], { R: receipt })).code).toBe(2);
    expect((await aov(['receipt', 'verify', 'R', '--public-key', 'abc'], { R: receipt })).code).toBe(2);
    expect((await aov(['receipt', 'verify', 'R', '--agent-card', 'C', '--public-key', 'x'], { R: receipt, C: card })).code).toBe(2);
    expect((await aov(['receipt', 'verify', 'R', '--agent-card', 'C', '--context', 'x'], { R: receipt, C: card })).code).toBe(2);
    expect((await aov(['receipt', 'verify', path.join(dir, 'missing.json'), '--agent-card', 'C'], { C: card })).code).toBe(2);
    expect((await aov(['receipt', 'frobnicate'])).code).toBe(2);
    expect((await aov(['keys'])).code).toBe(2);
    expect((await aov(['request-hash'])).code).toBe(2);
  });
});

describe('aov request-hash', () => {
  it('prints the hash and canonical form of test vector 1', async () => {
    const v1 = '{"task_id":"tv-1","expected_schema":{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}},"submitted_output":{"ok":true}}';
    expect(await aov(['request-hash', '-'], { '-': v1 })).toEqual({ code: 0, stdout: '5366542000b4226c5efb411c15ec8f0aac3c63844343997aa1bcc3c585086f97\n', stderr: '' });
    const c = await aov(['request-hash', 'F', '--canonical'], { F: v1 });
    expect(c.stdout).toBe(
      '{"agent_id":null,"bounds":null,"enforce_rules":false,"expected_schema":{"properties":{"ok":{"type":"boolean"}},"required":["ok"],"type":"object"},"rules":null,"strict_content_check":false,"submitted_output":{"ok":true},"task_id":"tv-1"}\n',
    );
    const bad = await aov(['request-hash', 'F'], { F: '{"task_id":"x"}' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected_schema/);
  });
});

describe('the aov binary as a separate process', () => {
  it('exit codes 0 / 1 / 2 for receipt verify', () => {
    const d = path.join(dir, 'proc');
    const cli = ['--import', 'tsx', path.join(ROOT, 'src', 'cli', 'index.ts')];
    const run = (args: string[], input?: string) => spawnSync(process.execPath, [...cli, ...args], { cwd: ROOT, input, encoding: 'utf8' });
    const signed = run(['verify', '--sign', '--data-dir', d, PASS_REQUEST]);
    expect(signed.status).toBe(0);
    const keys = execFileSync(process.execPath, [...cli, 'keys', 'list', '--data-dir', d], { cwd: ROOT, encoding: 'utf8' });
    const cardFile = path.join(dir, 'card.json');
    writeFileSync(cardFile, cardFromKeys(keys));
    expect(run(['receipt', 'verify', '-', '--agent-card', cardFile, '--request', PASS_REQUEST], signed.stdout).status).toBe(0);
    const tampered = run(['receipt', 'verify', '-', '--agent-card', cardFile], signed.stdout.replace('"result":"pass"', '"result":"fail"'));
    expect(tampered.status).toBe(1);
    expect(tampered.stdout).toMatch(/^invalid: signature: /);
    expect(run(['receipt', 'verify', '-'], signed.stdout).status).toBe(2);
  });
});
