/**
 * @module What the disaster drills on both stores share: the request they send, 16 writers keeping one request each
 * in flight, the CLI run in-process, and reading (or waiting for) the size of the service's published log.
 */
import { readFileSync } from 'node:fs';
import { main } from '../src/cli/index.js';
import { postJson } from './http-helpers.js';

const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 0 } } };

/** One verification request; every fifth fails its schema, so the log holds both results. */
export const drillBody = (i: number) =>
  JSON.stringify({ task_id: `drill-${i}`, agent_id: 'drill-agent', expected_schema: schema, submitted_output: { n: i % 5 === 0 ? -1 : i } });

/** `aov …` run in-process; the configuration comes from the arguments and process.env. */
export async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), readFile: (p) => readFileSync(p, 'utf8') });
  return { code, out, err };
}

/** A receipt the service acknowledged: its id, the exact bytes it sent, and when they arrived (performance.now()). */
export type Acked = { id: string; text: string; at: number };

/** 16 clients, each with one request in flight, until stopped; every 200 is recorded with when it arrived. */
export function createWriteLoad(base: string) {
  const acked: Acked[] = [];
  let stop = false;
  let n = 0;
  const worker = async () => {
    while (!stop) {
      try {
        const res = await postJson(base, '/verify/schema', drillBody(n++));
        const text = await res.text();
        if (res.status === 200) acked.push({ id: (JSON.parse(text) as { verification_id: string }).verification_id, text, at: performance.now() });
      } catch {
        return; // the server is gone
      }
    }
  };
  const workers = Array.from({ length: 16 }, worker);
  return {
    acked,
    async until(count: number) {
      while (acked.length < count) await new Promise((r) => setTimeout(r, 5));
    },
    async stop() {
      stop = true;
      await Promise.all(workers);
    },
  };
}

/** The tree size of the service's newest published checkpoint. */
export async function logSize(base: string): Promise<number> {
  return Number((await (await fetch(`${base}/log/checkpoint`)).text()).split('\n')[1]);
}

/** Wait (up to `timeoutMs`) until the published log holds `size` entries; the caller asserts what it then reads. */
export async function waitForLogSize(base: string, size: number, timeoutMs = 5000): Promise<void> {
  const t0 = Date.now();
  while ((await logSize(base)) < size && Date.now() - t0 < timeoutMs) await new Promise((r) => setTimeout(r, 50));
}

/** Sends `count` drill requests one after another and waits for the log to publish them; their verification ids. */
export async function verifyAndLog(base: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await postJson(base, '/verify/schema', drillBody(i));
    ids.push(((await res.json()) as { verification_id: string }).verification_id);
  }
  await waitForLogSize(base, ids.length);
  return ids;
}
