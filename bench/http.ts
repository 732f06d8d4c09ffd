/**
 * @module HTTP benchmark: POST /verify/schema of the built server (verify +
 * sign + durable SQLite write per request) against two baselines measured in
 * the same run, each a separate child process under the same autocannon load:
 * the bare one (Fastify + Ajv, validate only) and the signed one (the same plus
 * the RFC 8785 form and an Ed25519 signature of a response as large as ours, no
 * store) — the fair ceiling for a signing service. Three interleaved throughput
 * runs, then three open-loop runs of ours at a fixed 1,000 req/s with evenly
 * spaced arrivals, latency counted from each request's intended send time.
 * Prints a summary table and writes the "HTTP" section of docs/BENCHMARKS.md.
 *
 *   npm run bench:http            (builds, then runs this)
 *   npx tsx bench/http.ts [--duration 10] [--connections 32] [--runs 3] [--rate 1000] [--no-write]
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Agent, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const invoicePath = path.join(root, 'test/fixtures/invoice.request.json');

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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function startChild(cmd: string, args: string[], env: Record<string, string>): Promise<ChildProcess> {
  const proc = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!out.includes('listening on')) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`server did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return proc;
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
  achieved: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
}

const pct = (sorted: number[], q: number): number => (sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number));
const ms = (x: number): number => Math.round(x * 100) / 100;

/**
 * Open-loop load at a fixed rate: request i is due at start + i / rate and is sent on
 * the first timer tick at or after that moment (ticks are ~1 ms apart, so at 1,000 req/s
 * one or two requests leave per tick instead of a burst of every connection). Latency
 * runs from the intended send time, so time spent waiting for a free connection or
 * behind a stalled server is counted rather than hidden.
 */
async function openLoop(url: string, body: string, options: { rate: number; duration: number; connections: number }): Promise<RateRun> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const payload = Buffer.from(body);
  const latencies: number[] = [];
  let errors = 0;
  let inFlight = 0;
  const total = Math.round(options.rate * options.duration);
  const interval = 1000 / options.rate;
  const send = (intended: number): void => {
    inFlight++;
    const req = httpRequest(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': payload.length },
      },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => {
          inFlight--;
          if (res.statusCode !== 200) errors++;
          latencies.push(performance.now() - intended);
        });
      },
    );
    req.on('error', () => {
      inFlight--;
    });
    req.end(payload);
  };
  const start = performance.now() + 5;
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      while (next < total && start + next * interval <= now) {
        send(start + next * interval);
        next++;
      }
      if (next < total) setTimeout(tick, 1);
      else resolve();
    };
    setTimeout(tick, 5);
  });
  const sentAt = performance.now();
  while (inFlight > 0 && performance.now() - sentAt < 30_000) await new Promise((r) => setTimeout(r, 5));
  agent.destroy();
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    intended: options.rate,
    achieved: Math.round(latencies.length / elapsed),
    p50: ms(pct(latencies, 0.5)),
    p99: ms(pct(latencies, 0.99)),
    max: ms(latencies[latencies.length - 1] ?? NaN),
    // Non-200 answers plus requests that never got one (connection errors, or still pending after 30 s).
    errors: errors + (total - latencies.length),
  };
}

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

/** Event-loop delay of ours since the previous scrape (each scrape resets the monitor), in ms. */
async function loopDelay(base: string): Promise<{ p99: number; max: number }> {
  const res = await fetch(`${base}/metrics`, { headers: process.env.METRICS_TOKEN ? { authorization: `Bearer ${process.env.METRICS_TOKEN}` } : {} });
  const text = await res.text();
  const read = (name: string): number => {
    const m = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
    return m ? ms(Number(m[1]) * 1000) : NaN;
  };
  return { p99: read('nodejs_eventloop_lag_p99_seconds'), max: read('nodejs_eventloop_lag_max_seconds') };
}

async function main(): Promise<void> {
  const duration = Number(arg('duration', '10'));
  const connections = Number(arg('connections', '32'));
  const runs = Number(arg('runs', '3'));
  const rate = Number(arg('rate', '1000'));
  const write = !process.argv.includes('--no-write');
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

  try {
    // Ours: the built server, production settings except logging (warn) and a huge allowance.
    const ourPort = await freePort();
    const ours = await startChild(process.execPath, [cli, 'serve', '--port', String(ourPort), '--data-dir', path.join(dataDir, 'ours'), '--free-allowance', '1000000000'], {
      LOG_LEVEL: 'warn',
      SQLITE_SYNCHRONOUS: sync,
    });
    children.push(ours);
    const ourUrl = `http://127.0.0.1:${ourPort}/verify/schema`;
    const sample = await fetchText(ourUrl, invoice);
    const templatePath = path.join(dataDir, 'response.json');
    writeFileSync(templatePath, sample);

    const self = fileURLToPath(import.meta.url);
    const barePort = await freePort();
    const bare = await startChild(process.execPath, ['--import', 'tsx', self, '--serve-baseline', String(barePort)], {});
    children.push(bare);
    const signedPort = await freePort();
    const signed = await startChild(process.execPath, ['--import', 'tsx', self, '--serve-signed', String(signedPort), '--template', templatePath], {});
    children.push(signed);
    const bareUrl = `http://127.0.0.1:${barePort}/validate`;
    const signedUrl = `http://127.0.0.1:${signedPort}/validate`;
    const signedSample = await fetchText(signedUrl, invoice);

    // Warm-up (JIT, schema caches), then interleaved runs so that a change in the machine's load hits all three alike.
    for (const url of [bareUrl, signedUrl, ourUrl]) await load(url, invoice, { connections, duration: 2 });
    const through: { bare: Run; signed: Run; ours: Run }[] = [];
    for (let i = 0; i < runs; i++) {
      const b = await load(bareUrl, invoice, { connections, duration });
      const sg = await load(signedUrl, invoice, { connections, duration });
      const o = await load(ourUrl, invoice, { connections, duration });
      through.push({ bare: b, signed: sg, ours: o });
      process.stdout.write(`throughput run ${i + 1}: bare ${b.reqPerSec}, signed ${sg.reqPerSec}, ours ${o.reqPerSec} req/s\n`);
    }
    const rssLoad = peakRssMiB(ours.pid as number);
    const fixed: RateRun[] = [];
    for (let i = 0; i < runs; i++) {
      const ourBase = `http://127.0.0.1:${ourPort}`;
      await loopDelay(ourBase); // resets the monitor: the next reading covers this run only
      const f = await openLoop(ourUrl, invoice, { rate, duration, connections });
      f.loop = await loopDelay(ourBase);
      fixed.push(f);
      process.stdout.write(
        `fixed-rate run ${i + 1}: ${f.achieved} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms, errors ${f.errors}, event-loop delay p99 ${f.loop.p99} ms max ${f.loop.max} ms\n`,
      );
    }
    const rss = peakRssMiB(ours.pid as number);
    const bareRss = peakRssMiB(bare.pid as number);
    const signedRss = peakRssMiB(signed.pid as number);

    const vsSigned = through.map((t) => r2(t.ours.reqPerSec / t.signed.reqPerSec));
    const vsBare = through.map((t) => r2(t.ours.reqPerSec / t.bare.reqPerSec));
    const medSigned = r2(median(vsSigned));
    const medBare = r2(median(vsBare));
    const errorsThrough = through.reduce((n, t) => n + t.ours.errors + t.ours.non2xx + t.signed.errors + t.signed.non2xx + t.bare.errors + t.bare.non2xx, 0);
    const barRatio = vsSigned.every((x) => x >= 0.7);
    const barP99 = fixed.every((f) => f.p99 < 10 && f.errors === 0 && f.achieved >= rate * 0.95);
    const barRss = rss !== null && rss <= 160;
    const loadAfter = loadavg()[0] as number;
    const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
    const met = (b: boolean): string => (b ? 'met' : 'NOT met');

    const throughRows = through
      .map((t, i) => `| ${i + 1} | ${t.bare.reqPerSec} | ${t.signed.reqPerSec} | ${t.ours.reqPerSec} | **${vsSigned[i]}×** | ${vsBare[i]}× | ${t.ours.p99} |`)
      .join('\n');
    const fixedRows = fixed.map((f, i) => `| ${i + 1} | ${f.achieved} | ${f.p50} | **${f.p99}** | ${f.max} | ${f.errors} | ${f.loop?.p99 ?? 'n/a'} | ${f.loop?.max ?? 'n/a'} |`).join('\n');
    const section = `## HTTP

Command: \`npm run bench:http\` (builds, then \`npx tsx bench/http.ts\`; options \`--duration N --connections N --runs N --rate N --no-write\`;
\`SQLITE_SYNCHRONOUS=NORMAL npm run bench:http\` runs ours with WAL syncs at checkpoints only).
Body = the [invoice example](protocol.md#worked-example) (\`test/fixtures/invoice.request.json\`, ${Buffer.byteLength(invoice)} bytes). Every server is
its own child process on 127.0.0.1; the load generator runs in the driver process on the same machine (${cpus().length} CPUs, shared).

- **ours**: \`node dist/cli/index.js serve\` — strict parse, verify, four hashes, Ed25519 signature, allowance counter and
  durable SQLite write of the receipt before answering (WAL, \`synchronous=${sync}\`, group commit on the writer thread);
  fresh data dir, \`LOG_LEVEL=warn\`, allowance 10^9. Response ${Buffer.byteLength(sample)} bytes.
- **signed baseline** (the fair ceiling): bare Fastify 5 + Ajv 8 (\`allErrors\`, formats, compiled-schema cache), then the RFC 8785
  form of a response shaped and sized like ours and its Ed25519 signature — no hashes of the request, no store.
  Response ${Buffer.byteLength(signedSample)} bytes.
- **bare baseline**: the same Fastify + Ajv endpoint, validate only (answers \`{"result":"pass"}\`).

Throughput: autocannon, ${connections} connections, ${duration} s per run after a 2 s warm-up of each server; the three servers
run in turn within each run, so a change in the machine's load hits all of them.

| run | bare req/s | signed req/s | ours req/s | ours / signed | ours / bare | ours p99 ms |
|---|---|---|---|---|---|---|
${throughRows}

Fixed rate: ours at ${rate} req/s for ${duration} s, open loop — requests leave evenly spaced (one or two per ~1 ms timer tick,
at most ${connections} connections) and each latency runs from the request's intended send time, so queueing behind a stall counts.

| run | achieved req/s | p50 ms | p99 ms | max ms | errors | event-loop delay p99 ms | event-loop delay max ms |
|---|---|---|---|---|---|---|---|
${fixedRows}

The event-loop delay columns are ours' own \`nodejs_eventloop_lag_p99_seconds\` / \`_max_seconds\` from \`/metrics\` over each run
(\`perf_hooks.monitorEventLoopDelay\`, 10 ms resolution): a max far above the p99 points at a synchronous stall in ours.

Measured ${date} UTC, load average (1 min) ${loadBefore.toFixed(2)} before and ${loadAfter.toFixed(2)} after.
Peak RSS (VmHWM): ours ${rssLoad ?? 'n/a'} MiB after the throughput runs, ${rss ?? 'n/a'} MiB at the end; signed baseline ${signedRss ?? 'n/a'} MiB;
bare baseline ${bareRss ?? 'n/a'} MiB. Errors in the throughput runs: ${errorsThrough}.

- ours / signed baseline, median **${medSigned}×** (bar ≥ 0.7× in every run: ${met(barRatio)}); ours / bare baseline, median ${medBare}×.
- p99 at ${rate} req/s: ${fixed.map((f) => f.p99).join(', ')} ms (bar < 10 ms in all ${runs} runs, at the full rate, no errors: ${met(barP99)}).
- peak RSS ${rss ?? 'n/a'} MiB (bar ≤ 160 MiB: ${met(barRss)}).
`;
    const summary = [
      '',
      'run  bare req/s  signed req/s  ours req/s  ours/signed  ours/bare',
      ...through.map((t, i) => `${String(i + 1).padEnd(4)} ${String(t.bare.reqPerSec).padStart(10)} ${String(t.signed.reqPerSec).padStart(13)} ${String(t.ours.reqPerSec).padStart(11)} ${(vsSigned[i] + 'x').padStart(12)} ${(vsBare[i] + 'x').padStart(10)}`),
      `median ours/signed ${medSigned}x (bar >= 0.7x every run: ${met(barRatio)}), ours/bare ${medBare}x`,
      '',
      `run  fixed ${rate} req/s: achieved  p50 ms  p99 ms  max ms  errors  loop-delay p99/max ms`,
      ...fixed.map(
        (f, i) =>
          `${String(i + 1).padEnd(4)} ${String(f.achieved).padStart(27)} ${String(f.p50).padStart(7)} ${String(f.p99).padStart(7)} ${String(f.max).padStart(7)} ${String(f.errors).padStart(7)}  ${f.loop?.p99 ?? 'n/a'}/${f.loop?.max ?? 'n/a'}`,
      ),
      `p99 bar < 10 ms in all runs: ${met(barP99)}; peak RSS ours ${rss ?? 'n/a'} MiB (bar <= 160: ${met(barRss)})`,
      `load average ${loadBefore.toFixed(2)} -> ${loadAfter.toFixed(2)} (${cpus().length} CPUs)`,
      '',
    ].join('\n');
    process.stdout.write(summary);
    if (write) {
      const file = path.join(root, 'docs/BENCHMARKS.md');
      const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
      // Replace only this section: other sections belong to other benchmarks.
      const re = /## HTTP\n[\s\S]*?(?=\n## |$)/;
      const next = re.test(current) ? current.replace(re, section.trimEnd() + '\n') : `${current.trimEnd()}\n\n${section}`;
      writeFileSync(file, next);
      process.stdout.write(`written to ${path.relative(root, file)}\n`);
    } else {
      process.stdout.write(`\n${section}\n`);
    }
  } finally {
    for (const c of children) await stop(c);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--serve-baseline')) {
  await serveBaseline(Number(arg('serve-baseline', '0')));
} else if (process.argv.includes('--serve-signed')) {
  await serveSignedBaseline(Number(arg('serve-signed', '0')), arg('template', ''));
} else {
  await main();
}
