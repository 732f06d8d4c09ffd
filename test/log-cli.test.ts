/**
 * @module `aov log verify | monitor | audit` against a real service (SQLite, loopback HTTP): a receipt file is
 * proven in the log and a changed byte is not; the monitor follows the log across runs and raises an alert
 * on a fork; deleting a failing receipt's row is found by the audit, while the checkpoints before and after
 * stay consistent (no fork).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/index.js';
import { postJson, startApp, tempDir, type Running } from './http-helpers.js';

let running: Running;
let tmp: { dir: string; cleanup(): void };
let work: string;
const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 0 } } };

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), readFile: (p) => readFileSync(p, 'utf8') });
  return { code, out, err };
}

async function verifyMany(n: number, agent: string, failEvery = 3): Promise<Array<{ id: string; result: string }>> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const res = await postJson(running.base, '/verify/schema', JSON.stringify({ task_id: `t${i}`, agent_id: agent, expected_schema: schema, submitted_output: { n: i % failEvery === 0 ? -1 : i } }));
    const body = (await res.json()) as { verification_id: string; result: string };
    out.push({ id: body.verification_id, result: body.result });
  }
  return out;
}

async function logSize(): Promise<number> {
  return Number((await (await fetch(`${running.base}/log/checkpoint`)).text()).split('\n')[1]);
}

async function waitForSize(n: number): Promise<void> {
  const t0 = Date.now();
  while ((await logSize()) < n) {
    if (Date.now() - t0 > 1000) throw new Error(`log did not reach ${n} within a second`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  tmp = tempDir('aov-log-cli-');
  work = mkdtempSync(path.join(tmpdir(), 'aov-log-cli-work-'));
  running = await startApp(tmp.dir);
});
afterAll(async () => {
  await running?.close();
  tmp?.cleanup();
  rmSync(work, { recursive: true, force: true });
});

describe('aov log', () => {
  it('verify: the served receipt bytes are proven in the log; a changed byte or a wrong key is not', async () => {
    const [first] = await verifyMany(1, 'seller-a');
    const text = await (await fetch(`${running.base}/verifications/${first!.id}`)).text();
    const file = path.join(work, 'receipt.json');
    writeFileSync(file, text);
    const ok = await cli(['log', 'verify', file, '--log', running.base]);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^ok: receipt .* is entry 0 of the log/);

    writeFileSync(file, text.replace('"result":"', '"result": "'));
    const changed = await cli(['log', 'verify', file, '--log', `${running.base}/log`]);
    expect(changed.code).toBe(1);
    expect(changed.out).toContain('receipt_sha256');

    writeFileSync(file, text);
    const otherKey = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
    const wrongKey = await cli(['log', 'verify', file, '--log', running.base, '--key', otherKey]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.out).toContain('checkpoint');

    expect((await cli(['log', 'verify', file])).code).toBe(2);
    expect((await cli(['log', 'verify', file, '--log', running.base, '--bogus'])).code).toBe(2);
  });

  it('monitor: follows the log across runs, per agent, and alerts on a fork', async () => {
    const state = path.join(work, 'monitor.json');
    const first = await cli(['log', 'monitor', running.base, '--state', state, '--json']);
    expect(first.code).toBe(0);
    const r1 = JSON.parse(first.out) as { from: number; to: number; agents: Array<{ agent_id: string; added: number }> };
    expect(r1.from).toBe(0);

    await verifyMany(6, 'seller-b');
    await verifyMany(2, 'seller-c');
    await waitForSize(r1.to + 8);
    const second = await cli(['log', 'monitor', running.base, '--state', state, '--json']);
    expect(second.code).toBe(0);
    const r2 = JSON.parse(second.out) as { from: number; to: number; agents: Array<{ agent_id: string; added: number; passes: number; fails: number }> };
    expect(r2.from).toBe(r1.to);
    expect(r2.agents.map((a) => [a.agent_id, a.added, a.fails]).sort()).toEqual([
      ['seller-b', 6, 2],
      ['seller-c', 2, 1],
    ]);

    // A state that remembers a different history (as if the log had been rewritten since) raises the alarm.
    const s = JSON.parse(readFileSync(state, 'utf8')) as { size: number; root_hash: string; frontier: string[] };
    const forged = { ...s, size: s.size - 1, root_hash: Buffer.alloc(32, 1).toString('base64'), frontier: s.frontier };
    const forgedFile = path.join(work, 'forged.json');
    writeFileSync(forgedFile, JSON.stringify(forged));
    const alert = await cli(['log', 'monitor', running.base, '--state', forgedFile]);
    expect(alert.code).toBe(1);
    expect(alert.out).toMatch(/ALERT/);
    expect(readFileSync(forgedFile, 'utf8')).toBe(JSON.stringify(forged));
  });

  it('audit: clean; then a deleted failing receipt row is found, and the checkpoints before and after stay consistent', async () => {
    const clean = await cli(["log", "audit", "--data-dir", tmp.dir, "--json"]);
    expect(JSON.parse(clean.out)).toMatchObject({ ok: true, findings: [] });
    expect(clean.code).toBe(0);

    const start = await logSize();
    const made = await verifyMany(3, 'seller-d', 1);
    const victim = made[0]!;
    expect(victim.result).toBe('fail');
    const before = start + 3;
    await waitForSize(before);
    const state = path.join(work, 'around-delete.json');
    expect((await cli(['log', 'monitor', running.base, '--state', state])).code).toBe(0);

    const Database = createRequire(import.meta.url)('better-sqlite3') as new (f: string) => { prepare(s: string): { run(...a: unknown[]): { changes: number } }; close(): void };
    const db = new Database(path.join(tmp.dir, 'verifier.db'));
    expect(db.prepare('DELETE FROM receipts WHERE verification_id = ?').run(victim.id).changes).toBe(1);
    db.close();

    const found = await cli(['log', 'audit', '--data-dir', tmp.dir, '--json']);
    expect(found.code).toBe(1);
    const report = JSON.parse(found.out) as { findings: Array<{ kind: string; verification_id: string }> };
    expect(report.findings).toEqual([expect.objectContaining({ kind: 'receipt_deleted', verification_id: victim.id })]);

    // The log itself did not change: more receipts, and the monitor sees a consistent extension.
    await verifyMany(2, 'seller-e');
    await waitForSize(before + 2);
    expect((await cli(['log', 'monitor', running.base, '--state', state])).code).toBe(0);
    const text = await cli(['log', 'audit', '--data-dir', tmp.dir]);
    expect(text.out).toMatch(/^FINDINGS: .*\n {2}- receipt_deleted #\d+ /);
  });
});
