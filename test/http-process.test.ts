/**
 * @module The real server process: receipts survive kill -9 during load (every
 * receipt a client received is retrievable after restart), and SIGTERM lets an
 * in-flight request finish before the process exits 0.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson, spawnServer, tempDir } from './http-helpers.js';
import type { Child } from './http-helpers.js';

const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 0 } } };
const body = (i: number) => JSON.stringify({ task_id: `load-${i}`, agent_id: 'crash-agent', expected_schema: schema, submitted_output: { n: i } });

describe('HTTP: the server process', () => {
  const children: Child[] = [];
  const dirs: Array<() => void> = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    for (const d of dirs.splice(0)) d();
  });

  it('kill -9 under load loses no receipt a client received', async () => {
    const tmp = tempDir();
    dirs.push(tmp.cleanup);
    const first = await spawnServer(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '100000' });
    children.push(first);

    const received: Array<{ id: string; text: string }> = [];
    let failures = 0;
    let stop = false;
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await postJson(first.base, '/verify/schema', body(w * 100000 + i));
          const text = await res.text();
          if (res.status === 200) received.push({ id: JSON.parse(text).verification_id, text });
        } catch {
          failures++;
          return; // connection refused/reset once the process is gone
        }
      }
    };
    const workers = Array.from({ length: 16 }, (_, w) => worker(w));
    while (received.length < 60) await new Promise((r) => setTimeout(r, 10));
    first.proc.kill('SIGKILL');
    stop = true;
    await Promise.all(workers);
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(failures).toBeGreaterThan(0); // the kill really happened mid-load

    const second = await spawnServer(tmp.dir);
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
    const child = await spawnServer(tmp.dir);
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
    await new Promise((r) => setTimeout(r, 200));

    child.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // The server is shutting down: new connections are refused.
    await expect(fetch(`${child.base}/health`)).rejects.toThrow();
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
