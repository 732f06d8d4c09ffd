/**
 * @module Memory benchmark: the built server in several variants side by side, in the same run, so that their
 * ratios hold on a machine whose load changes. Each variant is a built tree (`dist` of this checkout, or of
 * another one: a copy of the previous build, say), Node flags and environment. All start together on fresh
 * data directories; after `--idle` seconds with no request their resident memory is read (VmRSS); then rounds
 * of the same closed-loop load as `npm run bench:http` (POST /verify/schema, the invoice fixture, 32
 * connections) go to each variant in turn, and at the end each one's peak resident memory (VmHWM) is read.
 * Prints, per variant, idle RSS, peak RSS, the median req/s and its ratio to the first variant's.
 *
 *   npx tsx bench/memory.ts [--idle 10] [--runs 3] [--duration 10] [--connections 32]
 *                           [--variant 'name;dist=dist;flags=--max-semi-space-size=2;env=VERIFY_WORKERS=1'] ...
 *
 * Without --variant: this checkout's dist/ as `npm start` runs it. Linux only (/proc).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startChild } from './processes.js';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const START_FLAGS = startFlags();

/** The Node flags of `npm start` (package.json's start script), so that the default variant runs as it does. */
function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const start = pkg.scripts.start ?? '';
  const m = /node ((?:--\S+ )*)dist\/cli\/index\.js serve/.exec(start);
  return m ? m[1].trim().split(/\s+/).filter(Boolean) : [];
}

interface Variant {
  name: string;
  dist: string;
  flags: string[];
  env: Record<string, string>;
}

function parseVariant(spec: string): Variant {
  const [name, ...parts] = spec.split(';');
  const v: Variant = { name: name.trim(), dist: 'dist', flags: START_FLAGS, env: {} };
  for (const part of parts) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 'dist') v.dist = value;
    else if (key === 'flags') v.flags = value.split(/\s+/).filter(Boolean);
    else if (key === 'env') {
      for (const kv of value.split(',').filter(Boolean)) v.env[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
    } else throw new Error(`unknown variant field ${key} in ${spec}`);
  }
  return v;
}

function args(name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < process.argv.length - 1; i++) if (process.argv[i] === `--${name}`) out.push(process.argv[i + 1] as string);
  return out;
}
const num = (name: string, def: number): number => Number(args(name)[0] ?? def);

/** VmRSS and VmHWM of `pid` in MiB. */
function memory(pid: number): { rss: number; peak: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN);
  return { rss: Math.round(kb('VmRSS') / 102.4) / 10, peak: Math.round(kb('VmHWM') / 102.4) / 10 };
}

async function load(url: string, body: string, connections: number, duration: number): Promise<{ reqPerSec: number; bad: number }> {
  const autocannon = require('autocannon') as (o: object, cb: (err: Error | null, r: { requests: { average: number }; non2xx: number; errors: number; timeouts: number }) => void) => unknown;
  const r = await new Promise<{ requests: { average: number }; non2xx: number; errors: number; timeouts: number }>((resolve, reject) =>
    autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections, duration }, (err, res) => (err ? reject(err) : resolve(res))),
  );
  return { reqPerSec: Math.round(r.requests.average), bad: r.non2xx + r.errors + r.timeouts };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

async function main(): Promise<void> {
  const variants = (args('variant').length > 0 ? args('variant') : ['dist']).map(parseVariant);
  const idle = num('idle', 10);
  const runs = num('runs', 3);
  const duration = num('duration', 10);
  const connections = num('connections', 32);
  const body = readFileSync(path.join(root, 'test/fixtures/invoice.request.json'), 'utf8');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'aov-bench-memory-'));
  const children: ChildProcess[] = [];
  try {
    const servers: Array<{ v: Variant; proc: ChildProcess; url: string; idle?: number; runs: number[]; bad: number }> = [];
    for (const [i, v] of variants.entries()) {
      const port = await freePort();
      const cli = path.resolve(root, v.dist, 'cli/index.js');
      const proc = await startChild(process.execPath, [...v.flags, cli, 'serve', '--port', String(port), '--data-dir', path.join(dataDir, String(i)), '--free-allowance', '1000000000'], {
        LOG_LEVEL: 'warn',
        ...v.env,
      });
      children.push(proc);
      servers.push({ v, proc, url: `http://127.0.0.1:${port}/verify/schema`, runs: [], bad: 0 });
    }
    await new Promise((r) => setTimeout(r, idle * 1000));
    for (const s of servers) s.idle = memory(s.proc.pid as number).rss;
    for (const s of servers) await load(s.url, body, connections, 2); // warm-up
    for (let i = 0; i < runs; i++) {
      for (const s of servers) {
        const r = await load(s.url, body, connections, duration);
        s.runs.push(r.reqPerSec);
        s.bad += r.bad;
      }
      process.stdout.write(`run ${i + 1}: ${servers.map((s) => `${s.v.name} ${s.runs[i]}`).join(', ')} req/s\n`);
    }
    const first = median(servers[0]!.runs);
    process.stdout.write(`\n| variant | idle RSS at ${idle} s (MiB) | peak RSS (MiB) | req/s (median of ${runs}) | ratio | non-2xx or errors |\n|---|---|---|---|---|---|\n`);
    for (const s of servers) {
      const rps = median(s.runs);
      process.stdout.write(`| ${s.v.name} | ${s.idle} | ${memory(s.proc.pid as number).peak} | ${rps} | ${Math.round((rps / first) * 100) / 100} | ${s.bad} |\n`);
    }
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
