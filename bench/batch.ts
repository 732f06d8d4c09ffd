/**
 * @module Batch benchmark: one POST /verify/batch of N invoice outputs against N single
 * POST /verify/schema calls of the same requests, on the built server (a child process on
 * 127.0.0.1 with its own data directory). Rounds alternate batch and singles so both see the
 * same machine load; the ratio is the median of the rounds. Singles are sent two ways: one
 * after another (what a simple script does) and with `--concurrency` requests in flight.
 *
 *   npm run bench:batch [-- --items 100 --rounds 5 --concurrency 8]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

async function startServer(dataDir: string): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [path.join(root, 'dist/cli/index.js'), 'serve', '--port', '0'], {
    env: { ...process.env, DATA_DIR: dataDir, FREE_ALLOWANCE_PER_DAY: '100000000', LOG_LEVEL: 'warn', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

async function post(url: string, body: string): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main(): Promise<void> {
  const items = Number(arg('items', '100'));
  const rounds = Number(arg('rounds', '5'));
  const concurrency = Number(arg('concurrency', '8'));
  const invoice = JSON.parse(readFileSync(path.join(root, 'test/fixtures/invoice.request.json'), 'utf8')) as Record<string, unknown>;
  const { task_id: _t, agent_id: agentId, submitted_output: output, ...shared } = invoice;
  // Half the outputs fail the sum rule, so the batch carries failure lists like real traffic.
  const outputs = Array.from({ length: items }, (_, i) => {
    const o = structuredClone(output) as { total: number };
    if (i % 2 === 0) o.total = 129.5;
    return o;
  });
  const singles = outputs.map((o, i) => JSON.stringify({ ...shared, task_id: `bench-${i}`, agent_id: agentId, submitted_output: o }));
  const batch = JSON.stringify({ ...shared, items: outputs.map((o, i) => ({ task_id: `bench-${i}`, agent_id: agentId, submitted_output: o })) });

  const dataDir = mkdtempSync(path.join(tmpdir(), 'aov-bench-batch-'));
  const server = await startServer(dataDir);
  try {
    const single = `${server.url}/verify/schema`;
    const many = `${server.url}/verify/batch`;
    const time = async (f: () => Promise<void>) => {
      const t = performance.now();
      await f();
      return performance.now() - t;
    };
    const runBatch = () => post(many, batch);
    const runSequential = async () => {
      for (const b of singles) await post(single, b);
    };
    const runConcurrent = async () => {
      let next = 0;
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < singles.length) await post(single, singles[next++]);
      }));
    };
    // Warm-up: schema compiled, connections and JIT warm.
    await runBatch();
    await runSequential();
    const b: number[] = [];
    const s: number[] = [];
    const c: number[] = [];
    for (let r = 0; r < rounds; r++) {
      b.push(await time(runBatch));
      s.push(await time(runSequential));
      c.push(await time(runConcurrent));
      process.stdout.write(`round ${r + 1}: batch ${b[r].toFixed(1)} ms, ${items} sequential singles ${s[r].toFixed(1)} ms, ${items} singles at concurrency ${concurrency} ${c[r].toFixed(1)} ms\n`);
    }
    const mb = median(b);
    const ms = median(s);
    const mc = median(c);
    process.stdout.write(
      `\nmedian over ${rounds} rounds, ${items} outputs: batch ${mb.toFixed(1)} ms; sequential singles ${ms.toFixed(1)} ms (batch ${(ms / mb).toFixed(2)}x faster); ` +
        `concurrent singles ${mc.toFixed(1)} ms (batch ${(mc / mb).toFixed(2)}x faster)\n`,
    );
  } finally {
    server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
