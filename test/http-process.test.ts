/**
 * @module The real server process: receipts survive kill -9 during 16-way load
 * (every receipt a client received is retrievable after restart), on the embedded
 * SQLite store and on PostgreSQL (a throwaway schema; skipped when PostgreSQL is not
 * reachable), and SIGTERM lets an in-flight request finish before the process exits 0.
 */
import { connect } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { postJson, spawnServer, tempDir, waitForOutput } from './http-helpers.js';
import type { Child } from './http-helpers.js';
import { postgresTestTarget } from './postgres-helpers.js';

const pg = await postgresTestTarget('http-process (kill -9 on PostgreSQL)', 'aov_crash');
const backends = [
  { name: 'SQLite', env: {} as Record<string, string>, available: true },
  { name: 'PostgreSQL', env: { DATABASE_URL: pg.url, DATABASE_SCHEMA: pg.schema }, available: pg.available },
];

const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 0 } } };
const body = (i: number) => JSON.stringify({ task_id: `load-${i}`, agent_id: 'crash-agent', expected_schema: schema, submitted_output: { n: i } });

describe('HTTP: the server process', () => {
  const children: Child[] = [];
  const dirs: Array<() => void> = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    for (const d of dirs.splice(0)) d();
  });
  afterAll(async () => {
    if (pg.available) await pg.dropSchema();
  });

  for (const { name, env, available } of backends) it.skipIf(!available)(`kill -9 under load loses no receipt a client received (${name})`, async () => {
    const tmp = tempDir();
    dirs.push(tmp.cleanup);
    const first = await spawnServer(tmp.dir, { ...env, FREE_ALLOWANCE_PER_DAY: '100000' });
    children.push(first);

    const received: Array<{ id: string; text: string }> = [];
    let inFlight = 0;
    let failures = 0;
    let enough!: () => void;
    const loaded = new Promise<void>((r) => (enough = r));
    // Each worker keeps one request in flight until the server is gone: its last request fails however
    // quickly the kill lands, so the kill is observed by every worker rather than by chance.
    const worker = async (w: number) => {
      for (let i = 0; ; i++) {
        inFlight++;
        try {
          const res = await postJson(first.base, '/verify/schema', body(w * 100000 + i));
          const text = await res.text();
          if (res.status === 200) received.push({ id: JSON.parse(text).verification_id, text });
          if (received.length >= 60) enough();
        } catch {
          failures++;
          return; // connection reset (in flight at the kill) or refused (after it)
        } finally {
          inFlight--;
        }
      }
    };
    const workers = Array.from({ length: 16 }, (_, w) => worker(w));
    await loaded;
    const inFlightAtKill = inFlight;
    first.proc.kill('SIGKILL');
    await Promise.all(workers);
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(inFlightAtKill).toBe(16); // the kill landed under load: every worker had a request open
    expect(failures).toBe(16);

    const second = await spawnServer(tmp.dir, env);
    children.push(second);
    for (const r of received) {
      const res = await fetch(`${second.base}/verifications/${r.id}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(r.text);
    }
    const rep = (await (await fetch(`${second.base}/reputation/crash-agent?limit=1`)).json()) as any;
    expect(rep.verifications).toBeGreaterThanOrEqual(received.length);
    second.proc.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });

  it('SIGTERM with a request in flight: the request completes, exit code 0', async () => {
    const tmp = tempDir();
    dirs.push(tmp.cleanup);
    // At info level the server logs each request as it starts and its own shutdown: the events waited on below.
    const child = await spawnServer(tmp.dir, { LOG_LEVEL: 'debug' });
    children.push(child);
    const url = new URL(child.base);
    const payload = Buffer.from(body(1), 'utf8');
    const half = Math.floor(payload.length / 2);

    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((r) => socket.once('connect', () => r()));
    let response = '';
    socket.on('data', (d: Buffer) => (response += d.toString()));
    const ended = new Promise<void>((r) => socket.once('close', () => r()));
    socket.write(
      `POST /verify/schema HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\nConnection: close\r\n\r\n`,
    );
    socket.write(payload.subarray(0, half));
    // The server has parsed the headers and started the request; its body is still half sent.
    await waitForOutput(child, '"incoming request"');

    child.proc.kill('SIGTERM');
    await waitForOutput(child, 'shutting down');
    // The server is shutting down: new requests are refused (503 until the listener is closed, then no connection).
    await refusesNewConnections(child.base);
    expect(child.proc.exitCode).toBeNull();

    socket.write(payload.subarray(half));
    await ended;
    expect(response).toMatch(/^HTTP\/1\.1 200 /);
    const receipt = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
    expect(receipt.result).toBe('pass');
    const exit = await child.exited;
    expect(exit).toEqual({ code: 0, signal: null });
  });
});

/** Resolves once a new connection to `base` is refused; any answer before that must be a 503. */
async function refusesNewConnections(base: string): Promise<void> {
  for (;;) {
    let res: Response;
    try {
      res = await fetch(`${base}/health`, { headers: { connection: 'close' } });
    } catch {
      return;
    }
    expect(res.status).toBe(503);
    await res.arrayBuffer();
  }
}
