/**
 * @module HTTP benchmark: POST /verify/schema of the built server (verify +
 * sign + durable SQLite write per request) against two baselines measured in
 * the same run, each a separate child process under the same autocannon load:
 * the bare one (Fastify + Ajv, validate only) and the signed one (the same plus
 * the RFC 8785 form and an Ed25519 signature of a response as large as ours, no
 * store) — the fair ceiling for a signing service. The same server on
 * PostgreSQL runs beside them (a fresh schema per run, dropped afterwards; skipped
 * with a message when the server cannot be reached), with the PostgreSQL
 * server's own CPU time, commits and WAL flushes over its runs. Three interleaved
 * throughput runs, then open-loop runs of ours (each store) at a fixed 1,000 req/s
 * with evenly spaced arrivals, latency counted from each request's intended send
 * time. Prints a summary table and writes its tables into the marked block of docs/BENCHMARKS.md's "HTTP" section.
 *
 *   npm run bench:http            (builds, then runs this)
 *   npx tsx bench/http.ts [--duration 10] [--connections 32] [--runs 3] [--rate 1000] [--no-write]
 *                         [--database-url postgresql://…] [--no-postgres] [--v8-pool-size 1]
 *
 * The PostgreSQL URL is --database-url, else DATABASE_URL, else the local test
 * database postgresql://postgres@127.0.0.1:5432/test.
 */
import { spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, type Socket } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startChild } from './processes.js';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const invoicePath = path.join(root, 'test/fixtures/invoice.request.json');
const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/test';

// ---- PostgreSQL: a fresh schema, and what the server did during our runs ----
interface PgClient {
  connect(): Promise<void>;
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  end(): Promise<void>;
}
const pgModule = require('pg') as { Client: new (o: { connectionString: string; connectionTimeoutMillis?: number }) => PgClient };

/** A connection for the bench's own statistics queries, or why there is none. */
async function pgConnect(url: string): Promise<PgClient | string> {
  const client = new pgModule.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return client;
  } catch (e) {
    await client.end().catch(() => undefined);
    return e instanceof Error ? e.message : String(e);
  }
}

interface PgCounters {
  commits: number;
  walSyncs: number | null;
}

/**
 * CPU seconds of one process, all threads, or with `mainThread` of its main thread only (for a Node server: the HTTP
 * thread): user (utime) and kernel (stime) apart; null when it cannot be read.
 */
function processCpu(pid: number | undefined, mainThread = false): { user: number; system: number } | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return null;
  }
}

/** utime + stime of processCpu, in seconds. */
function processCpuSeconds(pid: number | undefined, mainThread = false): number | null {
  const c = processCpu(pid, mainThread);
  return c === null ? null : c.user + c.system;
}

/** Nanoseconds the main thread of `pid` has spent ready to run but waiting for a CPU (`/proc/<pid>/task/<pid>/schedstat`), or null. */
function mainThreadReadyNs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const waited = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]);
    return Number.isFinite(waited) ? waited : null;
  } catch {
    return null;
  }
}

type CpuRun = Run & {
  cpuMsPerReq: number | null;
  mainThreadMsPerReq: number | null;
  kernelShare: number | null;
  mainThreadBusy: number | null;
  /** Share of the run the main thread was ready but waiting for a CPU (other threads held both). */
  mainThreadReady: number | null;
  /** Cores this driver (the load generator) used during the run. */
  loadGeneratorCores: number;
};

/**
 * Runs a load and adds the CPU time `pid` spent on it per answered request (ms), whole process and main thread, and the
 * kernel's share of the process's CPU time, when readable: whether a server's cost per request is its own code or the
 * kernel's (system calls, thread wake-ups, a durable store's writes and syncs). Also the share of the run's wall-clock
 * time its main thread was on a CPU: a server whose HTTP thread is off a CPU under a closed-loop load is waiting on
 * something else (its other threads, the disk, the load generator) or for a CPU the machine's other threads hold.
 */
async function withCpu(pid: number | undefined, fn: () => Promise<Run>): Promise<CpuRun> {
  const before = processCpu(pid);
  const mainBefore = processCpuSeconds(pid, true);
  const readyBefore = mainThreadReadyNs(pid);
  const driverBefore = process.cpuUsage();
  const started = performance.now();
  const r = await fn();
  const wallSeconds = (performance.now() - started) / 1000;
  const driver = process.cpuUsage(driverBefore);
  const readyAfter = mainThreadReadyNs(pid);
  const after = processCpu(pid);
  const mainAfter = processCpuSeconds(pid, true);
  // Three decimals: a request costs 0.05-0.3 ms, and the clock ticks of /proc are 10 ms over thousands of requests.
  const perReq = (a: number | null, b: number | null): number | null => (a !== null && b !== null && r.total > 0 ? Math.round(((b - a) * 1e6) / r.total) / 1000 : null);
  const total = (c: { user: number; system: number } | null): number | null => (c === null ? null : c.user + c.system);
  const spent = before !== null && after !== null ? after.user + after.system - (before.user + before.system) : 0;
  const kernelShare = before !== null && after !== null && spent > 0 ? Math.round(((after.system - before.system) / spent) * 100) / 100 : null;
  const mainThreadBusy = mainBefore !== null && mainAfter !== null && wallSeconds > 0 ? Math.round(((mainAfter - mainBefore) / wallSeconds) * 100) / 100 : null;
  const mainThreadReady = readyBefore !== null && readyAfter !== null && wallSeconds > 0 ? Math.round(((readyAfter - readyBefore) / 1e9 / wallSeconds) * 100) / 100 : null;
  const loadGeneratorCores = wallSeconds > 0 ? Math.round(((driver.user + driver.system) / 1e6 / wallSeconds) * 100) / 100 : 0;
  return { ...r, cpuMsPerReq: perReq(total(before), total(after)), mainThreadMsPerReq: perReq(mainBefore, mainAfter), kernelShare, mainThreadBusy, mainThreadReady, loadGeneratorCores };
}

/** CPU seconds of every process named `postgres` on this machine (server, backends, WAL writer, checkpointer). */
function postgresCpuSeconds(): number | null {
  const tick = 100; // USER_HZ: 100 on Linux
  let total = 0;
  let found = false;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d));
  } catch {
    return null;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      // Fields 14 and 15 of /proc/<pid>/stat (utime, stime) are 12 and 13 after the comm field.
      total += Number(fields[11]) + Number(fields[12]);
      found = true;
    } catch {
      // The process exited between listing and reading.
    }
  }
  return found ? total / tick : null;
}

async function pgCounters(client: PgClient): Promise<PgCounters> {
  const db = await client.query<{ commits: string }>('SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()');
  let walSyncs: number | null = null;
  try {
    walSyncs = Number((await client.query<{ wal_sync: string }>('SELECT wal_sync FROM pg_stat_wal')).rows[0]?.wal_sync);
  } catch {
    // pg_stat_wal exists from PostgreSQL 14 on.
  }
  return { commits: Number(db.rows[0]?.commits ?? 0), walSyncs };
}

interface PgUsage {
  /** Seconds of wall time covered. */
  wall: number;
  cpu: number | null;
  commits: number;
  walSyncs: number | null;
  requests: number;
}

/** Runs `fn` and returns what PostgreSQL spent meanwhile (the whole server: other clients count too). */
async function measurePg<T extends { total?: number }>(client: PgClient | null, fn: () => Promise<T>): Promise<{ result: T; usage: PgUsage | null }> {
  if (!client) return { result: await fn(), usage: null };
  const before = await pgCounters(client);
  const cpuBefore = postgresCpuSeconds();
  const start = performance.now();
  const result = await fn();
  const wall = (performance.now() - start) / 1000;
  const cpuAfter = postgresCpuSeconds();
  // Backends publish their statistics at most once a second, and when idle: wait for the last ones.
  await new Promise((r) => setTimeout(r, 1500));
  const after = await pgCounters(client);
  return {
    result,
    usage: {
      wall,
      cpu: cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : null,
      // Less the statistics reads of our own (each is a transaction too).
      commits: Math.max(0, after.commits - before.commits - 2),
      walSyncs: before.walSyncs !== null && after.walSyncs !== null ? after.walSyncs - before.walSyncs : null,
      requests: result.total ?? 0,
    },
  };
}

// ---- the baseline server: bare Fastify + Ajv, validate only (run as a child of this script) ----
async function serveBaseline(port: number): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const Ajv = (await import('ajv')).default as unknown as new (o: object) => { compile(s: unknown): (d: unknown) => boolean };
  const addFormats = (await import('ajv-formats')).default as unknown as (a: unknown) => void;
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const cache = new Map<string, (d: unknown) => boolean>();
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  app.post('/validate', async (request) => {
    const body = request.body as { expected_schema: unknown; submitted_output: unknown };
    const key = JSON.stringify(body.expected_schema);
    let validate = cache.get(key);
    if (!validate) {
      validate = ajv.compile(body.expected_schema);
      cache.set(key, validate);
    }
    const valid = validate(body.submitted_output);
    return { result: valid ? 'pass' : 'fail' };
  });
  await app.listen({ host: '127.0.0.1', port });
  process.stdout.write('listening on baseline\n');
}

// ---- the signed baseline: the bare one plus the RFC 8785 form and an Ed25519 signature, no store ----
async function serveSignedBaseline(port: number, templatePath: string): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const Ajv = (await import('ajv')).default as unknown as new (o: object) => { compile(s: unknown): (d: unknown) => boolean };
  const addFormats = (await import('ajv-formats')).default as unknown as (a: unknown) => void;
  const { canonicalize } = await import('../src/receipts/jcs.js');
  const { generateKeyPairSync, sign } = await import('node:crypto');
  const { privateKey } = generateKeyPairSync('ed25519');
  // One response of ours, so the signed baseline canonicalizes, signs and sends as many bytes as we do.
  const { signature: _unused, ...template } = JSON.parse(readFileSync(templatePath, 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const cache = new Map<string, (d: unknown) => boolean>();
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  app.post('/validate', async (request) => {
    const body = request.body as { expected_schema: unknown; submitted_output: unknown };
    const key = JSON.stringify(body.expected_schema);
    let validate = cache.get(key);
    if (!validate) {
      validate = ajv.compile(body.expected_schema);
      cache.set(key, validate);
    }
    const valid = validate(body.submitted_output);
    const response: Record<string, unknown> = { ...template, result: valid ? 'pass' : 'fail', issued_at: new Date().toISOString() };
    response.signature = sign(null, Buffer.from(canonicalize(response), 'utf8'), privateKey).toString('base64url');
    return response;
  });
  await app.listen({ host: '127.0.0.1', port });
  process.stdout.write('listening on signed baseline\n');
}

// ---- the driver ----
interface Run {
  reqPerSec: number;
  p50: number;
  p90: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
}

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] ? (process.argv[i + 1] as string) : def;
}

/** Peak resident set size of a process so far (kB → MiB), from /proc. */
function peakRssMiB(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

async function load(url: string, body: string, options: { connections: number; duration: number; overallRate?: number }): Promise<Run> {
  const autocannon = require('autocannon') as (o: object, cb: (err: Error | null, r: any) => void) => unknown;
  const result = await new Promise<any>((resolve, reject) =>
    autocannon(
      {
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        connections: options.connections,
        duration: options.duration,
        ...(options.overallRate ? { overallRate: options.overallRate } : {}),
      },
      (err, r) => (err ? reject(err) : resolve(r)),
    ),
  );
  return {
    reqPerSec: Math.round(result.requests.average),
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (proc.exitCode === null) proc.kill('SIGKILL');
}

interface RateRun {
  intended: number;
  /** ours' event-loop delay during the run (from its /metrics), ms. */
  loop?: { p99: number; max: number };
  /** ours' WAL syncs during the run (SQLite only), from the aov_store_wal_sync_seconds histogram. */
  syncs?: SyncSummary;
  /** ours' WAL start-overs during the run (SQLite only) and the mean time each held every write back, ms (aov_store_wal_restart_seconds). */
  restarts?: { count: number; meanMs: number | null };
  /** ours' mean wait for the SQLite writer's answer during the run, ms, by what was written (aov_store_write_wait_seconds). */
  /** allowance: null when no request waited for a unit of its own (each took its unit with its receipt). */
  waits?: { allowance: number | null; receipt: number };
  achieved: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  /** Requests answered (for per-request figures). */
  total?: number;
}

const pct = (sorted: number[], q: number): number => (sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number));
const ms = (x: number): number => Math.round(x * 100) / 100;

/**
 * Open-loop load at a fixed rate: request i is due at start + i / rate and is sent on
 * the first timer tick at or after that moment (ticks are ~1 ms apart, so at 1,000 req/s
 * one or two requests leave per tick instead of a burst of every connection), on a free
 * keep-alive connection, or as soon as one frees up. Latency runs from the intended send
 * time, so time spent waiting for a free connection or behind a stalled server is counted
 * rather than hidden.
 *
 * The client is raw TCP: the request's bytes are built once and each response is framed by
 * its Content-Length. Node's HTTP client cost this process about twice the CPU per request
 * (160-180 against 70-90 us at 1,000 req/s), and on a 2-core machine shared with the server
 * its own delays were part of every latency measured: in five alternating pairs of runs the
 * signed baseline's p99 was 2.4-4.1 ms with it and 1.8-3.4 ms without, ours 7.8-21.7 and 6.6-7.7 ms.
 */
async function openLoop(url: string, body: string, options: { rate: number; duration: number; connections: number }): Promise<RateRun> {
  const target = new URL(url);
  const payload = Buffer.from(body);
  const request = Buffer.concat([
    Buffer.from(`POST ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`),
    payload,
  ]);
  const latencies: number[] = [];
  let errors = 0;
  const idle: Socket[] = [];
  const queued: number[] = [];
  const intendedOf = new Map<Socket, number>();
  const send = (socket: Socket, intended: number): void => {
    intendedOf.set(socket, intended);
    socket.write(request);
  };
  const sockets = await Promise.all(
    Array.from(
      { length: options.connections },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(Number(target.port), target.hostname, () => {
            socket.setNoDelay(true);
            resolve(socket);
          });
          socket.on('error', reject);
          let buffered: Buffer | null = null;
          let need = -1;
          let status = 0;
          socket.on('data', (chunk: Buffer) => {
            buffered = buffered ? Buffer.concat([buffered, chunk]) : chunk;
            while (buffered) {
              if (need < 0) {
                const headEnd = buffered.indexOf('\r\n\r\n');
                if (headEnd < 0) return;
                const head = buffered.toString('latin1', 0, headEnd);
                status = Number(head.slice(9, 12));
                const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
                need = headEnd + 4 + (length ? Number(length[1]) : 0);
              }
              if (buffered.length < need) return;
              latencies.push(performance.now() - (intendedOf.get(socket) as number));
              if (status !== 200) errors++;
              buffered = buffered.length > need ? buffered.subarray(need) : null;
              need = -1;
              const next = queued.shift();
              if (next === undefined) idle.push(socket);
              else send(socket, next);
            }
          });
        }),
    ),
  );
  idle.push(...sockets);
  const total = Math.round(options.rate * options.duration);
  const interval = 1000 / options.rate;
  const start = performance.now() + 5;
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      while (next < total && start + next * interval <= now) {
        const intended = start + next * interval;
        next++;
        const socket = idle.pop();
        if (socket) send(socket, intended);
        else queued.push(intended);
      }
      if (next < total) setTimeout(tick, 1);
      else resolve();
    };
    setTimeout(tick, 5);
  });
  const sentAt = performance.now();
  while (latencies.length < total && performance.now() - sentAt < 30_000) await new Promise((r) => setTimeout(r, 5));
  for (const socket of sockets) socket.destroy();
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    intended: options.rate,
    achieved: Math.round(latencies.length / elapsed),
    p50: ms(pct(latencies, 0.5)),
    p99: ms(pct(latencies, 0.99)),
    max: ms(latencies[latencies.length - 1] ?? NaN),
    // Non-200 answers plus requests that never got one (still pending after 30 s).
    errors: errors + (total - latencies.length),
    total: latencies.length,
  };
}

/** Median of the readable values, rounded to `decimals`, or 'n/a'. */
const knownMedian = (xs: Array<number | null>, decimals: number): string => {
  const known = xs.filter((x): x is number => x !== null);
  return known.length === 0 ? 'n/a' : String(Math.round(median(known) * 10 ** decimals) / 10 ** decimals);
};
/** CPU ms per request: three decimals. */
const cpuMedian = (xs: Array<number | null>): string => knownMedian(xs, 3);
/** Kernel shares: two decimals. */
const shareMedian = (xs: Array<number | null>): string => knownMedian(xs, 2);
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};
const r2 = (x: number): number => Math.round(x * 100) / 100;

async function fetchText(url: string, body: string): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return res.text();
}

/**
 * prom-client samples the loop with monitorEventLoopDelay at a 10 ms resolution, and the histogram holds the
 * whole time between two samples: an idle loop reads ~10 ms. The stall is what exceeds the interval.
 */
const LOOP_SAMPLING_MS = 10;

/**
 * One scrape of ours' /metrics around a fixed-rate run: the event-loop delay past the sampling interval since the previous
 * scrape (each scrape resets the monitor), in ms, the WAL sync histogram's cumulative buckets, the WAL restarts' sum and
 * count, and the sums and counts of the waits for the writer.
 */
async function scrapeRunMetrics(
  base: string,
): Promise<{ p99: number; max: number; syncs: Map<string, number>; restarts: { sum: number; count: number } | null; waits: Map<string, { sum: number; count: number }> }> {
  const res = await fetch(`${base}/metrics`, { headers: process.env.METRICS_TOKEN ? { authorization: `Bearer ${process.env.METRICS_TOKEN}` } : {} });
  const text = await res.text();
  const read = (name: string): number => {
    const m = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
    return m ? ms(Math.max(0, Number(m[1]) * 1000 - LOOP_SAMPLING_MS)) : NaN;
  };
  // The WAL sync histogram's cumulative buckets (le -> count) since the server started; empty on PostgreSQL.
  const syncs = new Map<string, number>();
  for (const m of text.matchAll(/^aov_store_wal_sync_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)) syncs.set(m[1] as string, Number(m[2]));
  // The waits for the writer's answer since the server started, by what was written: total seconds and calls.
  const waits = new Map<string, { sum: number; count: number }>();
  for (const m of text.matchAll(/^aov_store_write_wait_seconds_(sum|count)\{write="(\w+)"\} ([0-9.e+-]+)$/gm)) {
    const w = waits.get(m[2] as string) ?? { sum: 0, count: 0 };
    w[m[1] as 'sum' | 'count'] = Number(m[3]);
    waits.set(m[2] as string, w);
  }
  // The WAL's start-overs since the server started: total seconds they held the writes back, and how many.
  const restartSum = /^aov_store_wal_restart_seconds_sum ([0-9.e+-]+)$/m.exec(text);
  const restartCount = /^aov_store_wal_restart_seconds_count (\d+)$/m.exec(text);
  const restarts = restartSum && restartCount ? { sum: Number(restartSum[1]), count: Number(restartCount[1]) } : null;
  return { p99: read('nodejs_eventloop_lag_p99_seconds'), max: read('nodejs_eventloop_lag_max_seconds'), syncs, restarts, waits };
}

/** What the disk did for ours during one run: its WAL syncs, how many took over 10 ms, and the bucket of the slowest. */
interface SyncSummary {
  count: number;
  over10ms: number;
  /** Upper bound (ms) of the slowest sync's bucket ('> 1000' past the last). */
  slowest: string;
}

function syncSummary(before: Map<string, number>, after: Map<string, number>): SyncSummary | undefined {
  if (after.size === 0) return undefined;
  const delta = [...after].map(([le, n]) => ({ le, n: n - (before.get(le) ?? 0) }));
  const count = delta.find((d) => d.le === '+Inf')?.n ?? 0;
  const within10 = delta.find((d) => d.le === '0.01')?.n ?? 0;
  const first = delta.find((d) => d.n === count);
  const slowest = first === undefined || count === 0 ? 'n/a' : first.le === '+Inf' ? '> 1000' : `≤ ${ms(Number(first.le) * 1000)}`;
  return { count, over10ms: count - within10, slowest };
}

/** Mean wait (ms) for the writer's answer between two scrapes, for allowance and receipt writes; undefined without the metric (PostgreSQL). */
function meanWaits(before: Map<string, { sum: number; count: number }>, after: Map<string, { sum: number; count: number }>): RateRun['waits'] {
  const mean = (write: string): number | null => {
    const a = after.get(write);
    if (!a) return null;
    const b = before.get(write) ?? { sum: 0, count: 0 };
    return a.count > b.count ? ms(((a.sum - b.sum) * 1000) / (a.count - b.count)) : null;
  };
  const allowance = mean('allowance');
  const receipt = mean('receipt');
  return receipt === null ? undefined : { allowance, receipt };
}

/** The URL without its password, for printing. */
function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}

/** One line about what PostgreSQL spent during a set of runs. */
function describePg(u: PgUsage | null): { cores: string; msPerReq: string; commitsPerSec: string; commitsPerReq: string; syncsPerReq: string } {
  const na = { cores: 'n/a', msPerReq: 'n/a', commitsPerSec: 'n/a', commitsPerReq: 'n/a', syncsPerReq: 'n/a' };
  if (!u || u.wall <= 0) return na;
  return {
    cores: u.cpu === null ? 'n/a' : r2(u.cpu / u.wall).toFixed(2),
    msPerReq: u.cpu === null || u.requests === 0 ? 'n/a' : r2((u.cpu * 1000) / u.requests).toFixed(2),
    commitsPerSec: String(Math.round(u.commits / u.wall)),
    commitsPerReq: u.requests === 0 ? 'n/a' : r2(u.commits / u.requests).toFixed(2),
    syncsPerReq: u.walSyncs === null || u.requests === 0 ? 'n/a' : r2(u.walSyncs / u.requests).toFixed(2),
  };
}

function sumUsage(us: Array<PgUsage | null>): PgUsage | null {
  if (us.length === 0 || us.some((u) => u === null)) return null;
  const all = us as PgUsage[];
  return {
    wall: all.reduce((n, u) => n + u.wall, 0),
    cpu: all.some((u) => u.cpu === null) ? null : all.reduce((n, u) => n + (u.cpu as number), 0),
    commits: all.reduce((n, u) => n + u.commits, 0),
    walSyncs: all.some((u) => u.walSyncs === null) ? null : all.reduce((n, u) => n + (u.walSyncs as number), 0),
    requests: all.reduce((n, u) => n + u.requests, 0),
  };
}

async function main(): Promise<void> {
  const duration = Number(arg('duration', '10'));
  const connections = Number(arg('connections', '32'));
  const runs = Number(arg('runs', '3'));
  const rate = Number(arg('rate', '1000'));
  const write = !process.argv.includes('--no-write');
  const databaseUrl = arg('database-url', process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  const cli = path.join(root, 'dist/cli/index.js');
  if (!existsSync(cli)) {
    const b = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    if (b.status !== 0) throw new Error('build failed');
  }
  const invoice = readFileSync(invoicePath, 'utf8');
  const loadBefore = loadavg()[0] as number;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'aov-bench-http-'));
  const children: ChildProcess[] = [];
  const sync = process.env.SQLITE_SYNCHRONOUS ?? 'FULL';
  // V8's background thread pool, the same for every server: 1, as `npm start` runs the service (see
  // docs/operations.md, "V8's background threads"); `--v8-pool-size 4` measures with Node's own default.
  const v8Pool = Number(arg('v8-pool-size', '1'));
  const nodeFlags = [`--v8-pool-size=${v8Pool}`];

  // PostgreSQL: a fresh schema of its own, so every run starts empty; dropped at the end.
  let pg: PgClient | null = null;
  let pgSkipped: string | null = null;
  const pgSchema = `aov_bench_${process.pid}_${Date.now().toString(36)}`;
  if (process.argv.includes('--no-postgres')) pgSkipped = '--no-postgres';
  else {
    const c = await pgConnect(databaseUrl);
    if (typeof c === 'string') pgSkipped = `PostgreSQL not reachable at ${redact(databaseUrl)}: ${c}`;
    else pg = c;
  }
  if (pgSkipped) process.stdout.write(`PostgreSQL row skipped (${pgSkipped}); give --database-url or DATABASE_URL to include it\n`);
  const pgServerLocal = pg !== null && postgresCpuSeconds() !== null;
  let pgVersion = '';
  let pgSyncCommit = '';
  if (pg) {
    const settings = await pg.query<{ v: string; s: string }>("SELECT current_setting('server_version') AS v, current_setting('synchronous_commit') AS s");
    pgVersion = settings.rows[0]?.v ?? '';
    pgSyncCommit = settings.rows[0]?.s ?? '';
  }

  try {
    // Ours: the built server, production settings except logging (warn) and a huge allowance.
    const ourPort = await freePort();
    const ours = await startChild(process.execPath, [...nodeFlags, cli, 'serve', '--port', String(ourPort), '--data-dir', path.join(dataDir, 'ours'), '--free-allowance', '1000000000'], {
      LOG_LEVEL: 'warn',
      SQLITE_SYNCHRONOUS: sync,
    });
    children.push(ours);
    const ourUrl = `http://127.0.0.1:${ourPort}/verify/schema`;
    const sample = await fetchText(ourUrl, invoice);
    const templatePath = path.join(dataDir, 'response.json');
    writeFileSync(templatePath, sample);

    // The same server on PostgreSQL (its own data dir for the signing key).
    let pgPort = 0;
    let pgProc: ChildProcess | null = null;
    if (pg) {
      pgPort = await freePort();
      pgProc = await startChild(process.execPath, [...nodeFlags, cli, 'serve', '--port', String(pgPort), '--data-dir', path.join(dataDir, 'pg'), '--free-allowance', '1000000000'], {
        LOG_LEVEL: 'warn',
        DATABASE_URL: databaseUrl,
        DATABASE_SCHEMA: pgSchema,
      });
      children.push(pgProc);
    }
    const pgUrl = `http://127.0.0.1:${pgPort}/verify/schema`;
    if (pg) await fetchText(pgUrl, invoice);

    const self = fileURLToPath(import.meta.url);
    const barePort = await freePort();
    const bare = await startChild(process.execPath, [...nodeFlags, '--import', 'tsx', self, '--serve-baseline', String(barePort)], {});
    children.push(bare);
    const signedPort = await freePort();
    const signed = await startChild(process.execPath, [...nodeFlags, '--import', 'tsx', self, '--serve-signed', String(signedPort), '--template', templatePath], {});
    children.push(signed);
    const bareUrl = `http://127.0.0.1:${barePort}/validate`;
    const signedUrl = `http://127.0.0.1:${signedPort}/validate`;
    const signedSample = await fetchText(signedUrl, invoice);

    // Warm-up (JIT, schema caches, pooled connections), then interleaved runs so that a change in the machine's load hits all alike.
    for (const url of [bareUrl, signedUrl, ourUrl, ...(pg ? [pgUrl] : [])]) await load(url, invoice, { connections, duration: 2 });
    const through: { bare: Run; signed: CpuRun; ours: CpuRun; pg: CpuRun | null; pgUsage: PgUsage | null }[] = [];
    for (let i = 0; i < runs; i++) {
      const b = await load(bareUrl, invoice, { connections, duration });
      const sg = await withCpu(signed.pid, () => load(signedUrl, invoice, { connections, duration }));
      const o = await withCpu(ours.pid, () => load(ourUrl, invoice, { connections, duration }));
      const p = pg ? await measurePg(pg, () => withCpu(pgProc?.pid, () => load(pgUrl, invoice, { connections, duration }))) : null;
      through.push({ bare: b, signed: sg, ours: o, pg: p?.result ?? null, pgUsage: p?.usage ?? null });
      process.stdout.write(
        `throughput run ${i + 1}: bare ${b.reqPerSec}, signed ${sg.reqPerSec}, ours ${o.reqPerSec}` +
          (p ? `, ours on PostgreSQL ${p.result.reqPerSec} (PostgreSQL server ${describePg(p.usage).cores} cores)` : '') +
          ` req/s; CPU ms/req ours ${o.cpuMsPerReq ?? 'n/a'} (kernel share ${o.kernelShare ?? 'n/a'}), signed ${sg.cpuMsPerReq ?? 'n/a'} (kernel share ${sg.kernelShare ?? 'n/a'}); HTTP thread busy ours ${o.mainThreadBusy ?? 'n/a'} (ready for a CPU ${o.mainThreadReady ?? 'n/a'}), signed ${sg.mainThreadBusy ?? 'n/a'} (ready ${sg.mainThreadReady ?? 'n/a'}); load generator ${o.loadGeneratorCores} / ${sg.loadGeneratorCores} cores\n`,
      );
    }
    const rssLoad = peakRssMiB(ours.pid as number);
    const fixed: RateRun[] = [];
    const fixedSigned: RateRun[] = [];
    const fixedPg: Array<{ run: RateRun; usage: PgUsage | null }> = [];
    const fixedRun = async (port: number): Promise<RateRun> => {
      const base = `http://127.0.0.1:${port}`;
      const before = await scrapeRunMetrics(base); // resets the monitor: the next reading covers this run only
      const f = await openLoop(`${base}/verify/schema`, invoice, { rate, duration, connections });
      const after = await scrapeRunMetrics(base);
      f.loop = { p99: after.p99, max: after.max };
      f.syncs = syncSummary(before.syncs, after.syncs);
      if (before.restarts && after.restarts) {
        const count = after.restarts.count - before.restarts.count;
        f.restarts = { count, meanMs: count > 0 ? ms(((after.restarts.sum - before.restarts.sum) * 1000) / count) : null };
      }
      f.waits = meanWaits(before.waits, after.waits);
      return f;
    };
    const fixedLine = (label: string, i: number, f: RateRun): string =>
      `fixed-rate run ${i + 1} (${label}): ${f.achieved} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms, errors ${f.errors}` + (f.loop ? `, event-loop delay p99 ${f.loop.p99} ms max ${f.loop.max} ms` : '') +
      (f.syncs ? `, WAL syncs ${f.syncs.count} (${f.syncs.over10ms} over 10 ms, slowest ${f.syncs.slowest} ms)` : '') +
      (f.restarts ? `, WAL restarts ${f.restarts.count} (mean ${f.restarts.meanMs ?? 'n/a'} ms)` : '') +
      (f.waits ? `, mean wait for the writer: allowance ${f.waits.allowance === null ? 'none (taken with the receipt)' : `${f.waits.allowance} ms`}, receipt ${f.waits.receipt} ms` : '');
    for (let i = 0; i < runs; i++) {
      // The floor of this measurement on this machine: the same load generator against the signed baseline (no store).
      const sgf = await openLoop(signedUrl, invoice, { rate, duration, connections });
      fixedSigned.push(sgf);
      process.stdout.write(fixedLine('signed baseline', i, sgf) + '\n');
      const f = await fixedRun(ourPort);
      fixed.push(f);
      process.stdout.write(fixedLine('SQLite', i, f) + '\n');
      if (pg) {
        const m = await measurePg(pg, () => fixedRun(pgPort));
        fixedPg.push({ run: m.result, usage: m.usage });
        process.stdout.write(`${fixedLine('PostgreSQL', i, m.result)}, PostgreSQL server ${describePg(m.usage).cores} cores\n`);
      }
    }
    const rss = peakRssMiB(ours.pid as number);
    const pgRss = pgProc ? peakRssMiB(pgProc.pid as number) : null;
    const bareRss = peakRssMiB(bare.pid as number);
    const signedRss = peakRssMiB(signed.pid as number);

    const vsSigned = through.map((t) => r2(t.ours.reqPerSec / t.signed.reqPerSec));
    const vsBare = through.map((t) => r2(t.ours.reqPerSec / t.bare.reqPerSec));
    const pgVsSqlite = through.map((t) => (t.pg ? r2(t.pg.reqPerSec / t.ours.reqPerSec) : NaN));
    const medSigned = r2(median(vsSigned));
    const medBare = r2(median(vsBare));
    const medPg = pg ? r2(median(pgVsSqlite)) : NaN;
    const errorsThrough = through.reduce(
      (n, t) => n + t.ours.errors + t.ours.non2xx + t.signed.errors + t.signed.non2xx + t.bare.errors + t.bare.non2xx + (t.pg ? t.pg.errors + t.pg.non2xx : 0),
      0,
    );
    const barRatio = vsSigned.every((x) => x >= 0.7);
    const barP99 = fixed.every((f) => f.p99 < 10 && f.errors === 0 && f.achieved >= rate * 0.95);
    const barRss = rss !== null && rss <= 160;
    const barPgRatio = pg !== null && pgVsSqlite.every((x) => x >= 0.7);
    const barPgP99 = pg !== null && fixedPg.every(({ run: f }) => f.p99 < 15 && f.errors === 0 && f.achieved >= rate * 0.95);
    const pgThrough = describePg(sumUsage(through.map((t) => t.pgUsage)));
    const pgFixed = describePg(sumUsage(fixedPg.map((f) => f.usage)));
    const loadAfter = loadavg()[0] as number;
    const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
    const met = (b: boolean): string => (b ? 'met' : 'NOT met');

    const throughRows = through
      .map(
        (t, i) =>
          `| ${i + 1} | ${t.bare.reqPerSec} | ${t.signed.reqPerSec} | ${t.ours.reqPerSec} | **${vsSigned[i]}×** | ${vsBare[i]}× | ${t.ours.p99} | ${t.ours.cpuMsPerReq ?? 'n/a'} | ${t.ours.mainThreadMsPerReq ?? 'n/a'} | ${t.signed.cpuMsPerReq ?? 'n/a'} | ${t.ours.kernelShare ?? 'n/a'} | ${t.signed.kernelShare ?? 'n/a'} | ` +
          (t.pg
            ? `${t.pg.reqPerSec} | **${pgVsSqlite[i]}×** | ${t.pg.p99} | ${t.pg.cpuMsPerReq ?? 'n/a'} | ${describePg(t.pgUsage).cores} | ${describePg(t.pgUsage).msPerReq} |`
            : 'skipped | — | — | — | — | — |'),
      )
      .join('\n');
    const fixedRows = fixed
      .flatMap((f, i) => {
        const row = (store: string, r: RateRun, cores: string) =>
          `| ${i + 1} | ${store} | ${r.achieved} | ${r.p50} | **${r.p99}** | ${r.max} | ${r.errors} | ${r.loop?.p99 ?? 'n/a'} | ${r.loop?.max ?? 'n/a'} | ` +
          `${r.syncs ? `${r.syncs.over10ms} of ${r.syncs.count}` : '—'} | ${r.syncs?.slowest ?? '—'} | ${r.restarts ? `${r.restarts.count} (${r.restarts.meanMs ?? '—'})` : '—'} | ${r.waits ? `${r.waits.allowance ?? 'none'} / ${r.waits.receipt}` : '—'} | ${cores} |`;
        const p = fixedPg[i];
        return [row('signed baseline', fixedSigned[i] as RateRun, '—'), row('SQLite', f, '—'), ...(p ? [row('PostgreSQL', p.run, describePg(p.usage).cores)] : [])];
      })
      .join('\n');
    const pgSection = pg
      ? `PostgreSQL ${pgVersion} (server default \`synchronous_commit=${pgSyncCommit}\`; the store forces \`on\` for receipts) at
${redact(databaseUrl).replace(/\/\/.*@/, '//…@')}, ${pgServerLocal ? 'on this machine, sharing its cores' : 'not on this machine (its CPU is not measured)'}.
Its own use over our PostgreSQL runs (every local \`postgres\` process, utime + stime from \`/proc/<pid>/stat\`; commits and WAL
flushes from \`pg_stat_database\` / \`pg_stat_wal\`; the whole server, so other clients of it count too):

| runs | PostgreSQL CPU (cores of ${cpus().length}) | PostgreSQL CPU ms per request | commits/s | commits per request | WAL flushes per request |
|---|---|---|---|---|---|
| throughput (${connections} connections) | ${pgThrough.cores} | ${pgThrough.msPerReq} | ${pgThrough.commitsPerSec} | ${pgThrough.commitsPerReq} | ${pgThrough.syncsPerReq} |
| fixed ${rate} req/s | ${pgFixed.cores} | ${pgFixed.msPerReq} | ${pgFixed.commitsPerSec} | ${pgFixed.commitsPerReq} | ${pgFixed.syncsPerReq} |

Peak RSS of ours on PostgreSQL: ${pgRss ?? 'n/a'} MiB.
`
      : `PostgreSQL row skipped: ${pgSkipped}.
`;
    const section = `## HTTP

Command: \`npm run bench:http\` (builds, then \`npx tsx bench/http.ts\`; options \`--duration N --connections N --runs N --rate N --no-write
--database-url URL --no-postgres --v8-pool-size N\`; \`SQLITE_SYNCHRONOUS=NORMAL npm run bench:http\` runs ours with WAL syncs at checkpoints only).
Body = the [invoice example](protocol.md#worked-example) (\`test/fixtures/invoice.request.json\`, ${Buffer.byteLength(invoice)} bytes). Every server is
its own child process on 127.0.0.1, started with \`node ${nodeFlags.join(' ')}\` (V8's background threads: ${v8Pool}, as \`npm start\` runs the
service — [operations](operations.md#v8s-background-threads); Node's default is 4); the load generator runs in the driver process on the same
machine (${cpus().length} CPUs, shared).

- **ours**: \`node dist/cli/index.js serve\` — strict parse, verify, four hashes, Ed25519 signature, the allowance unit and
  durable SQLite write of the receipt (one transaction: after its first request the client is known to have units left) before answering (WAL, \`synchronous=${sync}\`, group commit on the writer thread);
  fresh data dir, \`LOG_LEVEL=warn\`, allowance 10^9. Response ${Buffer.byteLength(sample)} bytes.
- **ours on PostgreSQL**: the same server with \`DATABASE_URL\` set, in a fresh schema (\`DATABASE_SCHEMA\`, dropped afterwards):
  receipts group-committed with \`synchronous_commit=on\` before answering, each with its allowance unit in the same statement (the first request's unit on the counter's own connections).
- **signed baseline** (the fair ceiling): bare Fastify 5 + Ajv 8 (\`allErrors\`, formats, compiled-schema cache), then the RFC 8785
  form of a response shaped and sized like ours and its Ed25519 signature — no hashes of the request, no store.
  Response ${Buffer.byteLength(signedSample)} bytes.
- **bare baseline**: the same Fastify + Ajv endpoint, validate only (answers \`{"result":"pass"}\`).

Throughput: autocannon, ${connections} connections, ${duration} s per run after a 2 s warm-up of each server; the servers
run in turn within each run, so a change in the machine's load hits all of them. "PG" is ours on PostgreSQL. "CPU ms/req"
is the server process's own CPU time (all threads, from \`/proc/<pid>/stat\`) per answered request; "HTTP thread" is ours'
main thread alone (\`/proc/<pid>/task/<pid>/stat\`), the rest being the SQLite writer, its checkpointer, V8's and libuv's
helpers; the signed baseline does all its work on its main thread. "Kernel share" is the part of a server's CPU time spent in the
kernel (stime over utime + stime: system calls, thread wake-ups, the store's writes and syncs), which tells whether what ours
spends beyond the signed baseline is its own code or the kernel's. "HTTP thread busy" (progress lines, summary) is the share
of a run's wall-clock time a server's main thread was on a CPU: the signed baseline's is about 1 under this closed-loop load; below 1,
the thread either had no request of its own to work on (all waiting for its writer thread, the disk or the load generator) or was
ready while other threads had both CPUs. The last two columns are
the PostgreSQL server's CPU during that run, in cores and in ms per request — on a dedicated machine the throughput of
PostgreSQL mode is bounded by the sum of ours' and the database's CPU per request.

| run | bare req/s | signed req/s | ours req/s | ours / signed | ours / bare | ours p99 ms | ours CPU ms/req | ours HTTP thread ms/req | signed CPU ms/req | ours kernel share | signed kernel share | PG req/s | PG / ours (SQLite) | PG p99 ms | ours on PG CPU ms/req | PostgreSQL CPU (cores) | PostgreSQL CPU ms/req |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${throughRows}

Fixed rate: ours at ${rate} req/s for ${duration} s on each store in turn, open loop — requests leave evenly spaced (one or two per
~1 ms timer tick, at most ${connections} keep-alive connections, a raw TCP client that frames responses by their Content-Length) and
each latency runs from the request's intended send time, so queueing behind a stall counts. Each run starts with the signed baseline
under the same load: its latency is what this load generator, the server's HTTP stack and one signature cost on this machine with no
store at all, the floor of the measurement.

| run | store | achieved req/s | p50 ms | p99 ms | max ms | errors | event-loop delay p99 ms | event-loop delay max ms | WAL syncs over 10 ms | slowest WAL sync ms | WAL restarts (mean ms) | mean wait for the writer, allowance / receipt, ms | PostgreSQL CPU (cores) |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${fixedRows}

The event-loop delay columns are ours' own \`nodejs_eventloop_lag_p99_seconds\` / \`_max_seconds\` from \`/metrics\` over each run
(\`perf_hooks.monitorEventLoopDelay\`, sampled every 10 ms) less the 10 ms sampling interval, which the histogram includes (an idle
loop reads 10 ms): how long the thread was busy past a sample's due time. A max far above the p99 points at a synchronous stall.
The WAL sync columns are ours' \`aov_store_wal_sync_seconds\` histogram over each run (SQLite only): every receipt is answered after
a disk sync of the WAL, so a run whose syncs took tens of ms measured the disk of that moment (the slowest is given as its bucket's bound).
The WAL restarts column is ours' \`aov_store_wal_restart_seconds\` over each run (SQLite only): how many times the WAL, past its
bound, was started over, and how long each held every write back on average (the database file's sync included).
The wait column is ours' \`aov_store_write_wait_seconds\` over each run (SQLite only): how long, on average, a request waited for the
writer thread to answer its allowance unit and then its receipt (the batch in flight, the transaction, and for the receipt the sync).
A client the server knows to have units left takes its unit in the receipt's transaction, with no wait of its own ("none").

${pgSection}
Measured ${date} UTC, load average (1 min) ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after.
Peak RSS (VmHWM): ours ${rssLoad ?? 'n/a'} MiB after the throughput runs, ${rss ?? 'n/a'} MiB at the end; signed baseline ${signedRss ?? 'n/a'} MiB;
bare baseline ${bareRss ?? 'n/a'} MiB. Errors in the throughput runs: ${errorsThrough}.

- ours / signed baseline, median **${medSigned}×** (bar ≥ 0.7× in every run: ${met(barRatio)}); ours / bare baseline, median ${medBare}×.
- CPU per request under load, median: ours ${cpuMedian(through.map((t) => t.ours.cpuMsPerReq))} ms, of which its HTTP thread ${cpuMedian(through.map((t) => t.ours.mainThreadMsPerReq))} ms;
  the signed baseline ${cpuMedian(through.map((t) => t.signed.cpuMsPerReq))} ms (one thread). Kernel share of that CPU time, median: ours ${shareMedian(through.map((t) => t.ours.kernelShare))},
  the signed baseline ${shareMedian(through.map((t) => t.signed.kernelShare))}. Share of the run its HTTP thread was on a CPU, median: ours
  ${shareMedian(through.map((t) => t.ours.mainThreadBusy))}, the signed baseline ${shareMedian(through.map((t) => t.signed.mainThreadBusy))} (below 1: it waited for something else).
  Of the rest, the share it was ready but waiting for a CPU (\`/proc/<pid>/task/<pid>/schedstat\`): ours ${shareMedian(through.map((t) => t.ours.mainThreadReady))},
  the signed baseline ${shareMedian(through.map((t) => t.signed.mainThreadReady))}; the remainder it had no work. The load generator (this process) used
  ${shareMedian(through.map((t) => t.ours.loadGeneratorCores))} cores beside ours and ${shareMedian(through.map((t) => t.signed.loadGeneratorCores))} beside the signed baseline.
- p99 at ${rate} req/s: ${fixed.map((f) => f.p99).join(', ')} ms (bar < 10 ms in all ${runs} runs, at the full rate, no errors: ${met(barP99)});
  the signed baseline under the same load: ${fixedSigned.map((f) => f.p99).join(', ')} ms.
- peak RSS ${rss ?? 'n/a'} MiB (bar ≤ 160 MiB: ${met(barRss)}).
${
  pg
    ? `- PostgreSQL / SQLite throughput, median **${medPg}×** (bar ≥ 0.7× in every run: ${met(barPgRatio)}).
- PostgreSQL p99 at ${rate} req/s: ${fixedPg.map((f) => f.run.p99).join(', ')} ms (bar < 15 ms in all ${runs} runs, at the full rate, no errors: ${met(barPgP99)}).
`
    : `- PostgreSQL: skipped (${pgSkipped}).
`
}`;
    const summary = [
      '',
      'run  bare req/s  signed req/s  ours req/s  ours/signed  ours/bare     PG req/s  PG/ours  PG cores',
      ...through.map(
        (t, i) =>
          `${String(i + 1).padEnd(4)} ${String(t.bare.reqPerSec).padStart(10)} ${String(t.signed.reqPerSec).padStart(13)} ${String(t.ours.reqPerSec).padStart(11)} ${(vsSigned[i] + 'x').padStart(12)} ${(vsBare[i] + 'x').padStart(10)}` +
          (t.pg ? ` ${String(t.pg.reqPerSec).padStart(12)} ${(pgVsSqlite[i] + 'x').padStart(8)} ${describePg(t.pgUsage).cores.padStart(9)}` : '      skipped'),
      ),
      `median ours/signed ${medSigned}x (bar >= 0.7x every run: ${met(barRatio)}), ours/bare ${medBare}x`,
      pg ? `median PG/ours(SQLite) ${medPg}x (bar >= 0.7x every run: ${met(barPgRatio)})` : `PostgreSQL skipped: ${pgSkipped}`,
      '',
      `run  store       fixed ${rate} req/s: achieved  p50 ms  p99 ms  max ms  errors  loop-delay p99/max ms  PG cores`,
      ...fixed.flatMap((f, i) => {
        const line = (store: string, r: RateRun, cores: string) =>
          `${String(i + 1).padEnd(4)} ${store.padEnd(11)} ${String(r.achieved).padStart(27)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)} ${String(r.max).padStart(7)} ${String(r.errors).padStart(7)}  ${`${r.loop?.p99 ?? 'n/a'}/${r.loop?.max ?? 'n/a'}`.padEnd(21)} ${cores}`;
        const p = fixedPg[i];
        return [line('signed', fixedSigned[i] as RateRun, ''), line('SQLite', f, ''), ...(p ? [line('PostgreSQL', p.run, describePg(p.usage).cores)] : [])];
      }),
      `p99 bar < 10 ms in all runs (SQLite): ${met(barP99)}; peak RSS ours ${rss ?? 'n/a'} MiB (bar <= 160: ${met(barRss)})`,
      ...(pg
        ? [
            `p99 bar < 15 ms in all runs (PostgreSQL): ${met(barPgP99)}`,
            `PostgreSQL server, throughput runs: ${pgThrough.cores} cores, ${pgThrough.msPerReq} ms CPU/request, ${pgThrough.commitsPerSec} commits/s, ${pgThrough.commitsPerReq} commits/request, ${pgThrough.syncsPerReq} WAL flushes/request`,
            `PostgreSQL server, fixed-rate runs: ${pgFixed.cores} cores, ${pgFixed.msPerReq} ms CPU/request, ${pgFixed.commitsPerSec} commits/s, ${pgFixed.commitsPerReq} commits/request, ${pgFixed.syncsPerReq} WAL flushes/request`,
          ]
        : []),
      `load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)} (${cpus().length} CPUs)`,
      '',
    ].join('\n');
    process.stdout.write(summary);
    if (write) {
      const file = path.join(root, 'docs/BENCHMARKS.md');
      const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
      // The page is a reference: only the block between the markers is this run's, the method and how to read
      // it are written by hand around it, so a run never overwrites them.
      const begin = '<!-- bench:http latest -->';
      const end = '<!-- /bench:http latest -->';
      const results = section.slice(section.indexOf('| run | bare'));
      const from = current.indexOf(begin);
      const to = current.indexOf(end);
      if (from < 0 || to < from) throw new Error(`docs/BENCHMARKS.md has no ${begin} … ${end} block: use --no-write`);
      const next = `${current.slice(0, from + begin.length)}\n${results.trimEnd()}\n${current.slice(to)}`;
      writeFileSync(file, next);
      process.stdout.write(`written to ${path.relative(root, file)}\n`);
    } else {
      process.stdout.write(`\n${section}\n`);
    }
  } finally {
    for (const c of children) await stop(c);
    rmSync(dataDir, { recursive: true, force: true });
    if (pg) {
      await pg.query(`DROP SCHEMA IF EXISTS "${pgSchema}" CASCADE`).catch((e: Error) => process.stdout.write(`could not drop schema ${pgSchema}: ${e.message}\n`));
      await pg.end().catch(() => undefined);
    }
  }
}

if (process.argv.includes('--serve-baseline')) {
  await serveBaseline(Number(arg('serve-baseline', '0')));
} else if (process.argv.includes('--serve-signed')) {
  await serveSignedBaseline(Number(arg('serve-signed', '0')), arg('template', ''));
} else {
  await main();
}
