/**
 * @module One PostgreSQL, one or two service instances: the built server on
 * PostgreSQL (a fresh schema, dropped afterwards), first one instance under the
 * whole autocannon load, then two instances (separate processes and ports,
 * sharing the key directory as a deployment shares its keys) with the load split
 * between them, in alternating rounds. Reports req/s, p99, each instance's CPU, the
 * PostgreSQL server's CPU (every local `postgres` process, from /proc), its commits/s
 * and WAL flushes/s, so an operator can size a deployment. Prints a table; the
 * numbers go into docs/BENCHMARKS.md by hand (this machine's two cores cannot show
 * scaling, only where the time goes).
 *
 *   npm run build && npx tsx bench/postgres-instances.ts [--duration 10] [--connections 32] [--rounds 2] [--database-url URL]
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startChild } from './processes.js';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] ? (process.argv[i + 1] as string) : def;
}

interface PgClient {
  connect(): Promise<void>;
  query<R = Record<string, unknown>>(text: string): Promise<{ rows: R[] }>;
  end(): Promise<void>;
}
const pg = require('pg') as { Client: new (o: { connectionString: string; connectionTimeoutMillis?: number }) => PgClient };


/** utime + stime (seconds) of the processes whose pid is given, or of every process named `name`. */
function cpuSeconds(select: { pids?: number[]; name?: string }): number {
  let total = 0;
  const pids = select.pids ?? readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d)).map(Number);
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (select.name && stat.slice(stat.indexOf('(') + 1, close) !== select.name) continue;
      const f = stat.slice(close + 2).split(' ');
      total += Number(f[11]) + Number(f[12]);
    } catch {
      // exited meanwhile
    }
  }
  return total / 100;
}

async function counters(c: PgClient): Promise<{ commits: number; walSyncs: number }> {
  const a = await c.query<{ n: string }>('SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()');
  const b = await c.query<{ n: string }>('SELECT wal_sync AS n FROM pg_stat_wal');
  return { commits: Number(a.rows[0]?.n), walSyncs: Number(b.rows[0]?.n) };
}

function startServer(port: number, env: Record<string, string>): Promise<ChildProcess> {
  return startChild(process.execPath, [path.join(root, 'dist/cli/index.js'), 'serve', '--port', String(port)], env);
}

interface Load {
  reqPerSec: number;
  p99: number;
  total: number;
  errors: number;
}

async function load(url: string, body: string, connections: number, duration: number): Promise<Load> {
  const autocannon = require('autocannon') as (o: object, cb: (err: Error | null, r: any) => void) => unknown;
  const r = await new Promise<any>((resolve, reject) =>
    autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections, duration }, (e, res) => (e ? reject(e) : resolve(res))),
  );
  return { reqPerSec: Math.round(r.requests.average), p99: r.latency.p99, total: r.requests.total, errors: r.errors + r.timeouts + r.non2xx };
}

interface Row {
  setup: string;
  reqPerSec: number;
  p99: number[];
  errors: number;
  instanceCores: number[];
  pgCores: number;
  pgMsPerReq: number;
  commitsPerSec: number;
  walSyncsPerSec: number;
}

async function measure(setup: string, client: PgClient, servers: Array<{ url: string; pid: number }>, body: string, connections: number, duration: number): Promise<Row> {
  const each = Math.floor(connections / servers.length);
  const before = await counters(client);
  const pgBefore = cpuSeconds({ name: 'postgres' });
  const instBefore = servers.map((s) => cpuSeconds({ pids: [s.pid] }));
  const start = performance.now();
  const runs = await Promise.all(servers.map((s) => load(s.url, body, each, duration)));
  const wall = (performance.now() - start) / 1000;
  const pgCpu = cpuSeconds({ name: 'postgres' }) - pgBefore;
  const instCpu = servers.map((s, i) => cpuSeconds({ pids: [s.pid] }) - (instBefore[i] as number));
  // Backends publish their statistics within a second of going idle.
  await new Promise((r) => setTimeout(r, 1500));
  const after = await counters(client);
  const total = runs.reduce((n, r) => n + r.total, 0);
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    setup,
    reqPerSec: runs.reduce((n, r) => n + r.reqPerSec, 0),
    p99: runs.map((r) => r.p99),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    instanceCores: instCpu.map((c) => r2(c / wall)),
    pgCores: r2(pgCpu / wall),
    pgMsPerReq: r2((pgCpu * 1000) / Math.max(1, total)),
    commitsPerSec: Math.round((after.commits - before.commits - 2) / wall),
    walSyncsPerSec: Math.round((after.walSyncs - before.walSyncs) / wall),
  };
}

async function main(): Promise<void> {
  const duration = Number(arg('duration', '10'));
  const connections = Number(arg('connections', '32'));
  const rounds = Number(arg('rounds', '2'));
  const url = arg('database-url', process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/test');
  const body = readFileSync(path.join(root, 'test/fixtures/invoice.request.json'), 'utf8');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch (e) {
    process.stdout.write(`skipped: PostgreSQL not reachable (${(e as Error).message})\n`);
    return;
  }
  const schema = `aov_bench_inst_${process.pid}_${Date.now().toString(36)}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'aov-bench-inst-'));
  const env = { LOG_LEVEL: 'warn', DATABASE_URL: url, DATABASE_SCHEMA: schema, DATA_DIR: dataDir, FREE_ALLOWANCE_PER_DAY: '1000000000' };
  const procs: ChildProcess[] = [];
  const loadBefore = loadavg()[0] as number;
  try {
    // The first instance creates the schema and the signing key; the second shares the key directory.
    const ports = [await freePort(), await freePort()];
    procs.push(await startServer(ports[0] as number, env));
    procs.push(await startServer(ports[1] as number, env));
    const servers = ports.map((p, i) => ({ url: `http://127.0.0.1:${p}/verify/schema`, pid: procs[i]?.pid as number }));
    for (const s of servers) await load(s.url, body, connections, 2);
    const rows: Row[] = [];
    for (let i = 0; i < rounds; i++) {
      rows.push(await measure('one instance', client, servers.slice(0, 1), body, connections, duration));
      rows.push(await measure('two instances', client, servers, body, connections, duration));
    }
    const loadAfter = loadavg()[0] as number;
    process.stdout.write(
      [
        `| setup | req/s (sum) | p99 ms (each instance) | errors | instance CPU (cores) | PostgreSQL CPU (cores) | PostgreSQL CPU ms/request | commits/s | WAL flushes/s |`,
        `|---|---|---|---|---|---|---|---|---|`,
        ...rows.map(
          (r) =>
            `| ${r.setup} | ${r.reqPerSec} | ${r.p99.join(', ')} | ${r.errors} | ${r.instanceCores.join(' + ')} | ${r.pgCores} | ${r.pgMsPerReq} | ${r.commitsPerSec} | ${r.walSyncsPerSec} |`,
        ),
        '',
        `${connections} connections in all (split evenly between instances), ${duration} s per run, ${cpus().length} CPUs; load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)}; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
        '',
      ].join('\n'),
    );
  } finally {
    for (const p of procs) {
      p.kill('SIGTERM');
      await new Promise((r) => (p.exitCode !== null ? r(null) : p.once('exit', r)));
    }
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await client.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
