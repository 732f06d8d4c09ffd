/**
 * @module Idle resident memory of the built server: starts `aov serve` as `npm start` runs it (V8's pool of
 * one background thread), on a fresh data directory, sends nothing, and reads its RSS from /proc at the
 * given moments after it says it is listening; then stops it. Repeats the whole start `--runs` times and
 * prints each reading and the median per moment. Exits 1 when the median at the last moment is over
 * `--bar` MiB (100). The last default moment is 30 s: V8 gives back the start-up's garbage when its memory
 * reducer runs, about 8 s after the allocations stop, so a reading at 10 s finds some runs before it (~15 MiB
 * more) and some after; by 30 s every run has settled.
 *
 *   node scripts/measure-idle-rss.mjs [--at 3,10,30] [--runs 3] [--bar 100] [--dist dist] [-- extra serve flags]
 *
 * Environment variables pass through (e.g. VERIFY_WORKERS=0 to compare without the pool). Linux only (/proc).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash < 0 ? argv : argv.slice(0, dash);
const extra = dash < 0 ? [] : argv.slice(dash + 1);
const arg = (name, def) => {
  const i = own.indexOf(`--${name}`);
  return i >= 0 && own[i + 1] !== undefined ? own[i + 1] : def;
};
const moments = arg('at', '3,10,30').split(',').map(Number);
const runs = Number(arg('runs', '3'));
const bar = Number(arg('bar', '100'));
const cli = path.resolve(root, arg('dist', 'dist'), 'cli/index.js');

/** Resident set size now (VmRSS) and its peak so far (VmHWM) of `pid`, in MiB, and its thread count. */
function status(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024, threads: readdirSync(`/proc/${pid}/task`).length };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x) => Math.round(x * 10) / 10;

async function once() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'aov-idle-rss-'));
  const child = spawn(process.execPath, ['--v8-pool-size=1', cli, 'serve', '--port', '0', '--data-dir', dataDir, ...extra], {
    cwd: root,
    env: { LOG_LEVEL: 'warn', ...process.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  try {
    const deadline = Date.now() + 30_000;
    while (!out.includes('listening on')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start: ${err || out}`);
      await sleep(20);
    }
    const listening = Date.now();
    const readings = [];
    for (const at of moments) {
      await sleep(Math.max(0, listening + at * 1000 - Date.now()));
      readings.push({ at, ...status(child.pid) });
    }
    return readings;
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const all = [];
for (let i = 0; i < runs; i++) {
  const readings = await once();
  all.push(readings);
  process.stdout.write(`run ${i + 1}: ${readings.map((r) => `${r.at} s ${round(r.rss)} MiB (peak ${round(r.hwm)}, ${r.threads} threads)`).join('; ')}\n`);
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const medians = moments.map((at, k) => ({ at, rss: round(median(all.map((r) => r[k].rss))) }));
process.stdout.write(`idle RSS, median of ${runs}: ${medians.map((m) => `${m.at} s ${m.rss} MiB`).join(', ')}\n`);
const last = medians[medians.length - 1];
process.stdout.write(`bar: idle RSS at ${last.at} s ≤ ${bar} MiB: ${last.rss <= bar ? 'met' : 'NOT met'}\n`);
process.exitCode = last.rss <= bar ? 0 : 1;
