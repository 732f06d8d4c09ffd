/**
 * @module Shared helpers of the HTTP tests: temporary data directories, free
 * loopback ports, an in-process app on a real socket, and a real server child
 * process (`aov serve` through tsx) for crash and shutdown tests.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from '../src/app.js';
import type { App } from '../src/app.js';
import { loadConfig } from '../src/config.js';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function tempDir(prefix = 'aov-http-'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface Running {
  base: string;
  handle: App;
  close(): Promise<void>;
}

/** createApp on a real loopback socket. */
export async function startApp(dataDir: string, env: Record<string, string> = {}): Promise<Running> {
  const port = await freePort();
  const config = loadConfig({ DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'silent', ...env });
  const handle = await createApp(config, { logger: false });
  await handle.app.listen({ host: '127.0.0.1', port });
  return { base: `http://127.0.0.1:${port}`, handle, close: () => handle.close() };
}

export interface Child {
  proc: ChildProcess;
  base: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Run `aov serve` as a real process (node + tsx loader, one process so signals reach the server). */
export async function spawnServer(dataDir: string, env: Record<string, string> = {}): Promise<Child> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'src/cli/index.ts'), 'serve', '--port', String(port), '--data-dir', dataDir], {
    cwd: projectRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const base = `http://127.0.0.1:${port}`;
  const child: Child = { proc, base, stdout: () => out, stderr: () => err, exited };
  try {
    await waitForOutput(child, 'listening on', 30_000);
  } catch (e) {
    proc.kill('SIGKILL');
    throw new Error(`server did not start: ${(e as Error).message}: ${err}`);
  }
  return child;
}

/**
 * Resolve once the child's stdout contains `text` (counting output already
 * received), on the output event itself rather than by polling; reject when the
 * process exits first or `timeoutMs` passes.
 */
export function waitForOutput(child: Child, text: string, timeoutMs = 30_000): Promise<void> {
  if (child.stdout().includes(text)) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (!child.stdout().includes(text)) return;
      done();
      resolve();
    };
    const onExit = () => {
      done();
      reject(new Error(`process exited before printing ${JSON.stringify(text)}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no ${JSON.stringify(text)} on stdout within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      child.proc.stdout?.off('data', onData);
      child.proc.off('exit', onExit);
    };
    // Registered after spawnServer's own listener, so the accumulated output already holds this chunk.
    child.proc.stdout?.on('data', onData);
    child.proc.once('exit', onExit);
  });
}

/**
 * Counts, from now on, the store's writes that take an allowance unit together with its receipt
 * (the path of a client the server knows to have units left: src/service/allowance-hints.ts).
 */
export function countUnitWithReceipt(store: App['store']): () => number {
  let count = 0;
  const withUnit = store.consumeAllowanceAndSaveReceipt.bind(store);
  store.consumeAllowanceAndSaveReceipt = (...args) => {
    count++;
    return withUnit(...args);
  };
  // The same write for a receipt the store signs as it stores it.
  const signed = store.consumeAllowanceAndSignAndSaveReceipt.bind(store);
  store.consumeAllowanceAndSignAndSaveReceipt = (...args) => {
    count++;
    return signed(...args);
  };
  return () => count;
}

export function postJson(base: string, route: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

/** The error shape of docs/protocol.md#errors, checked strictly (and no stack trace anywhere). */
export function expectErrorShape(body: Record<string, unknown>, code: string, status: number): string | null {
  const keys = Object.keys(body).sort();
  const expected = ['charged', 'code', 'fields', 'message', 'next_actions', 'retryable', 'status'];
  if (body.retryable === true) expected.push('retry_after');
  const problems: string[] = [];
  if (JSON.stringify(keys) !== JSON.stringify(expected.sort())) problems.push(`keys ${keys.join(',')}`);
  if (body.code !== code) problems.push(`code ${String(body.code)}`);
  if (body.status !== status) problems.push(`status ${String(body.status)}`);
  if (body.charged !== false) problems.push('charged');
  if (!Array.isArray(body.fields) || !Array.isArray(body.next_actions)) problems.push('arrays');
  if (typeof body.message !== 'string') problems.push('message');
  if (/\bat .*\(.*:\d+:\d+\)|node_modules|\.ts:\d+/.test(JSON.stringify(body))) problems.push('stack trace');
  return problems.length ? problems.join('; ') : null;
}

/** The first truthy value `probe` gives, polled every 50 ms; throws naming `what` after `ms`. */
export async function until<T>(what: string, ms: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A schema whose evaluation doubles at each level (every level refers to the next twice): slow by
 * construction, for tests of the deadline and of the workers beside a slow task.
 */
export function tower(depth: number): unknown {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  defs[`d${depth}`] = { type: 'integer' };
  return { $defs: defs, $ref: '#/$defs/d0' };
}
