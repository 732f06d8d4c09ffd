/**
 * @module kill -9 of the real server process under load, while its sequencer integrates every 10 ms (so the
 * kill lands among log appends), twice in a row: after restart every receipt a client received is in the
 * log, the log is one tree (every checkpoint seen before a crash is a prefix of the final one), and
 * `aov log audit` is clean.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/cli/index.js';
import { postJson, spawnServer, tempDir, type Child } from './http-helpers.js';
import { mth, mthLeaf, readAllEntries } from './log-reader.js';

const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 0 } } };
const body = (i: number) => JSON.stringify({ task_id: `crash-${i}`, agent_id: `crash-agent-${i % 4}`, expected_schema: schema, submitted_output: { n: i % 5 ? i : -i } });
const env = { FREE_ALLOWANCE_PER_DAY: '100000', LOG_INTERVAL_MS: '10' };

interface Seen {
  size: number;
  root: Buffer;
}
const parseCheckpoint = (t: string): Seen => {
  const [, size, root] = t.split('\n');
  return { size: Number(size), root: Buffer.from(root as string, 'base64') };
};

/** Load until `count` receipts are received and at least one checkpoint moved, then kill -9 mid-load. */
async function loadAndKill(server: Child, received: string[], seen: Seen[], count: number): Promise<void> {
  let enough!: () => void;
  const loaded = new Promise<void>((r) => (enough = r));
  const start = received.length;
  const worker = async (w: number) => {
    for (let i = 0; ; i++) {
      try {
        const res = await postJson(server.base, '/verify/schema', body(w * 1_000_000 + start * 16 + i));
        const text = await res.text();
        if (res.status === 200) received.push(JSON.parse(text).verification_id as string);
        if (i % 10 === 0) seen.push(parseCheckpoint(await (await fetch(`${server.base}/log/checkpoint`)).text()));
        if (received.length - start >= count) enough();
      } catch {
        return; // reset or refused: the server is gone
      }
    }
  };
  const workers = Array.from({ length: 12 }, (_, w) => worker(w));
  await loaded;
  server.proc.kill('SIGKILL');
  await Promise.all(workers);
  expect((await server.exited).signal).toBe('SIGKILL');
}

describe('transparency log: kill -9 under load', () => {
  const children: Child[] = [];
  const dirs: Array<() => void> = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    for (const d of dirs.splice(0)) d();
  });

  it('nothing acknowledged is missing from the log, the tree never forks, the audit is clean', async () => {
    const tmp = tempDir('aov-log-crash-');
    dirs.push(tmp.cleanup);
    const received: string[] = [];
    const seen: Seen[] = [];

    const first = await spawnServer(tmp.dir, env);
    children.push(first);
    await loadAndKill(first, received, seen, 120);
    const second = await spawnServer(tmp.dir, env);
    children.push(second);
    await loadAndKill(second, received, seen, 80);

    const third = await spawnServer(tmp.dir, env);
    children.push(third);
    // The restarted service integrates what was queued before it answers anything.
    const final = parseCheckpoint(await (await fetch(`${third.base}/log/checkpoint`)).text());
    expect(final.size).toBeGreaterThanOrEqual(received.length);
    const entries = await readAllEntries(third.base, final.size);
    const leaves = entries.map(mthLeaf);
    expect(mth(leaves).equals(final.root)).toBe(true);
    const logged = new Set(entries.map((e) => (JSON.parse(e.toString('utf8')) as { verification_id: string }).verification_id));
    expect(logged.size).toBe(entries.length);
    for (const id of received) expect(logged.has(id)).toBe(true);
    expect(seen.length).toBeGreaterThan(5);
    for (const c of seen) expect(mth(leaves.slice(0, c.size)).equals(c.root)).toBe(true);

    third.proc.kill('SIGTERM');
    expect((await third.exited).code).toBe(0);
    let out = '';
    const code = await main(['log', 'audit', '--data-dir', tmp.dir, '--json'], { stdout: (t) => void (out += t), stderr: () => undefined, readFile: (p) => readFileSync(p, 'utf8') });
    const report = JSON.parse(out) as { ok: boolean; queued: number; tree_size: number; findings: unknown[] };
    expect(report).toMatchObject({ ok: true, queued: 0, findings: [] });
    expect(report.tree_size).toBe(final.size);
    expect(code).toBe(0);
  });
});
