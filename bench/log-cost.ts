/**
 * @module What the transparency log costs the hot path: the built server as shipped against the
 * same build with the log's sequencer not started (an app option that only this benchmark uses),
 * under the same autocannon load, alternating, each a fresh child process and data directory.
 * Everything else is identical, including the queue row each receipt gets in its own transaction
 * (written by the store in both variants, so that part of the log's cost is not in the difference).
 * Reports throughput and the server's CPU time per request (all threads, from /proc), and the
 * shipped build's throughput as a fraction of the log-off one: the log's budget is 10%.
 *
 *   npm run bench:log                 (builds, then runs this)
 *   npx tsx bench/log-cost.ts [--rounds 5] [--duration 8] [--connections 32]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { freePort, startChild } from './processes.js';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const self = fileURLToPath(import.meta.url);
const body = readFileSync(path.join(root, 'test/fixtures/invoice.request.json'), 'utf8');

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] ? Number(process.argv[i + 1]) : def;
}

/** Child mode: the built app with its sequencer off, listening like `aov serve`. */
async function serveWithoutLog(port: number, dataDir: string): Promise<void> {
  const { loadConfig } = (await import(pathToFileURL(path.join(root, 'dist/config.js')).href)) as typeof import('../src/config.js');
  const { createApp } = (await import(pathToFileURL(path.join(root, 'dist/app.js')).href)) as typeof import('../src/app.js');
  const config = loadConfig(process.env, { port: String(port), 'data-dir': dataDir, 'free-allowance': '1000000000' });
  const handle = await createApp(config, { sequencer: false });
  const address = await handle.app.listen({ host: config.host, port: config.port });
  process.stdout.write(`listening on ${address}\n`);
  process.on('SIGTERM', () => void handle.close().then(() => process.exit(0)));
}

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function load(url: string, connections: number, duration: number): Promise<{ reqPerSec: number; total: number; non2xx: number }> {
  const autocannon = require('autocannon') as (o: object, cb: (err: Error | null, r: any) => void) => unknown;
  const r = await new Promise<any>((resolve, reject) =>
    autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections, duration }, (err, res) => (err ? reject(err) : resolve(res))),
  );
  return { reqPerSec: Math.round(r.requests.average), total: r.requests.total, non2xx: r.non2xx + r.errors + r.timeouts };
}

async function measure(variant: 'with log' | 'log off', connections: number, duration: number): Promise<{ reqPerSec: number; cpuUs: number; errors: number }> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'aov-logcost-'));
  let child: ChildProcess | undefined;
  try {
    child =
      variant === 'with log'
        ? await startChild(process.execPath, [path.join(root, 'dist/cli/index.js'), 'serve', '--port', String(port), '--data-dir', dataDir, '--free-allowance', '1000000000'], { LOG_LEVEL: 'warn' })
        : await startChild(process.execPath, ['--import', 'tsx', self, '--serve-without-log', String(port), dataDir], { LOG_LEVEL: 'warn' });
    const url = `http://127.0.0.1:${port}/verify/schema`;
    await load(url, connections, 2);
    const before = cpuSeconds(child.pid!);
    const r = await load(url, connections, duration);
    const cpuUs = ((cpuSeconds(child.pid!) - before) * 1e6) / Math.max(1, r.total);
    return { reqPerSec: r.reqPerSec, cpuUs: Math.round(cpuUs), errors: r.non2xx };
  } finally {
    child?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    child?.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rounds = arg('rounds', 5);
  const duration = arg('duration', 8);
  const connections = arg('connections', 32);
  const load0 = loadavg()[0]!;
  const rows: Array<{ round: number; withLog: number; off: number; cpuWith: number; cpuOff: number; errors: number }> = [];
  for (let round = 1; round <= rounds; round++) {
    // Alternate which variant goes first, so a drift in the machine's load hits both alike.
    const order: Array<'with log' | 'log off'> = round % 2 === 1 ? ['with log', 'log off'] : ['log off', 'with log'];
    const got: Record<string, { reqPerSec: number; cpuUs: number; errors: number }> = {};
    for (const v of order) got[v] = await measure(v, connections, duration);
    const w = got['with log']!;
    const o = got['log off']!;
    rows.push({ round, withLog: w.reqPerSec, off: o.reqPerSec, cpuWith: w.cpuUs, cpuOff: o.cpuUs, errors: w.errors + o.errors });
    process.stdout.write(
      `round ${round}: with log ${w.reqPerSec} req/s (${w.cpuUs} µs CPU/req), log off ${o.reqPerSec} req/s (${o.cpuUs} µs CPU/req), ratio ${(w.reqPerSec / o.reqPerSec).toFixed(3)}\n`,
    );
  }
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const ratios = rows.map((r) => r.withLog / r.off);
  const cpuRatios = rows.map((r) => r.cpuWith / r.cpuOff);
  process.stdout.write(
    `\nthroughput with log / log off: median ${median(ratios).toFixed(3)} (range ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}), ` +
      `CPU per request with log / log off: median ${median(cpuRatios).toFixed(3)} (range ${Math.min(...cpuRatios).toFixed(3)}–${Math.max(...cpuRatios).toFixed(3)}); ` +
      `errors ${rows.reduce((a, r) => a + r.errors, 0)}; load average ${load0.toFixed(2)} -> ${loadavg()[0]!.toFixed(2)}\n` +
      `log cost (1 - median ratio): ${((1 - median(ratios)) * 100).toFixed(1)}% of throughput (budget 10%)\n`,
  );
}

if (process.argv.includes('--serve-without-log')) {
  const i = process.argv.indexOf('--serve-without-log');
  await serveWithoutLog(Number(process.argv[i + 1]), process.argv[i + 2]!);
} else {
  await main();
}
