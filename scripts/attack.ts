/**
 * @module Hostile requests against a real server (the built `aov serve`, default settings):
 * each family of the work-limits threat model, sent one after the other and then all at
 * once, while /health is polled every 10 ms. Prints each answer's status, code and time,
 * the slowest /health answer during the attack, and the server's peak RSS.
 *
 *   npm run attack            (builds, then runs this; -- --workers 0 for no pool)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { workers: { type: 'string', default: '2' }, port: { type: 'string', default: '9471' } } });
const root = path.resolve(import.meta.dirname, '..');
const base = `http://127.0.0.1:${values.port}`;

function tower(depth: number, keyword: string, ref = '$ref'): unknown {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) defs[`d${i}`] = { [keyword]: [{ [ref]: `#/$defs/d${i + 1}` }, { [ref]: `#/$defs/d${i + 1}` }] };
  defs[`d${depth}`] = { type: 'integer' };
  return { $defs: defs, $ref: '#/$defs/d0' };
}
const many: Record<string, unknown> = {};
for (let i = 0; i < 200; i++) many[`p${i}`] = { type: 'string', pattern: `(?:a{0,1000}){100}x${i}` };

const attacks: Array<[string, unknown, unknown]> = [
  ['allOf $ref tower (depth 32)', tower(32, 'allOf'), 1],
  ['anyOf $ref tower', tower(32, 'anyOf'), 'x'],
  ['oneOf $ref tower', tower(32, 'oneOf'), 'x'],
  ['$dynamicRef tower', tower(32, 'allOf', '$dynamicRef'), 1],
  ['counted repetition (0.9 kB pattern)', { pattern: '(?:a{0,1000}){100}' }, 'a'.repeat(3000)],
  ['200 counted repetitions (190 kB schema)', { type: 'object', properties: many }, { p0: 'a' }],
  ['\\P{L}{1000}$ on 100 kB', { pattern: '(?:\\P{L}){1000}$' }, '1'.repeat(100_000)],
  ['lookaround automaton on 100 kB', { pattern: '(?<=a)(?:a|b){1,1000}c' }, 'a'.repeat(100_000)],
  ['backreference paths on 100 kB', { pattern: '(a|a)'.repeat(13) + '\\1x' }, 'a'.repeat(100_000)],
  ['multipleOf 1e308 on 0.7', { multipleOf: 1e308 }, 0.7],
  ['{"type": []}', { type: [] }, 1],
];

async function post(schema: unknown, output: unknown): Promise<{ status: number; code: string; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${base}/verify/schema`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ task_id: 'attack', expected_schema: schema, submitted_output: output }),
  });
  const body = (await res.json()) as { code?: string; result?: string };
  return { status: res.status, code: body.code ?? body.result ?? '?', ms: performance.now() - t0 };
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'aov-attack-'));
const server = spawn(process.execPath, [path.join(root, 'dist/cli/index.js'), 'serve'], {
  env: { ...process.env, PORT: values.port, DATA_DIR: dataDir, LOG_LEVEL: 'silent', FREE_ALLOWANCE_PER_DAY: '100000', VERIFY_WORKERS: values.workers },
  stdio: 'ignore',
});
const rss = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/health`).then((r) => r.status, () => 0)) === 200) break;
    if (i > 100) throw new Error('the server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  let attacking = true;
  let worstHealth = 0;
  let healthCalls = 0;
  const poller = (async () => {
    while (attacking) {
      const t0 = performance.now();
      const status = await fetch(`${base}/health`).then((r) => r.status, () => 0);
      if (status !== 200) throw new Error(`/health answered ${status}`);
      worstHealth = Math.max(worstHealth, performance.now() - t0);
      healthCalls++;
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  console.log(`VERIFY_WORKERS=${values.workers}`);
  let slowest = 0;
  for (const [name, schema, output] of attacks) {
    const r = await post(schema, output);
    slowest = Math.max(slowest, r.ms);
    console.log(`${name.padEnd(42)} ${r.status} ${r.code.padEnd(16)} ${r.ms.toFixed(0).padStart(6)} ms`);
  }
  const t0 = performance.now();
  const all = await Promise.all(attacks.map(([, s, o]) => post(s, o)));
  const together = performance.now() - t0;
  attacking = false;
  await poller;
  console.log(`all ${attacks.length} at once: ${all.map((r) => r.status).join(' ')} in ${together.toFixed(0)} ms`);
  console.log(`slowest single answer ${slowest.toFixed(0)} ms; /health asked ${healthCalls} times, slowest ${worstHealth.toFixed(1)} ms; server peak RSS ${rss().toFixed(0)} MiB`);
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
