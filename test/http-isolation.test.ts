/**
 * @module Isolation, the second line of defence behind the work limits: with the
 * limits turned off, a schema that would run for seconds (an exponential $ref tower)
 * or allocate without bound (hundreds of huge counted repetitions) runs in a
 * verification worker. The worker is stopped at its deadline or heap cap and
 * replaced; the request gets 503 verification_aborted, is never charged, and /health
 * and ordinary verifications keep being answered meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorShape, postJson, startApp, tempDir, tower } from './http-helpers.js';
import type { Running } from './http-helpers.js';


/** Work limits as high as the settings allow: only the isolation stands in the way. */
const NO_LIMITS = {
  SCHEMA_MAX_EXPANDED_SIZE: '1000000000',
  SCHEMA_MAX_PATTERN_SIZE: '1000000000',
  SCHEMA_MAX_COMPILED_SIZE: '1000000000',
  SCHEMA_MAX_EVALUATION_STEPS: '1000000000000',
};

const INVOICE_SCHEMA = { type: 'object', properties: { total: { type: 'number', minimum: 0 } }, required: ['total'] };

describe('HTTP: verification workers isolate what the work limits miss', () => {
  const tmp = tempDir();
  let srv: Running;
  beforeAll(async () => {
    srv = await startApp(tmp.dir, { ...NO_LIMITS, FREE_ALLOWANCE_PER_DAY: '5', VERIFY_WORKERS: '2', VERIFY_DEADLINE_MS: '300', VERIFY_WORKER_HEAP_MB: '96' });
  });
  afterAll(async () => {
    await srv?.close();
    tmp.cleanup();
  });

  const post = (task: string, schema: unknown, output: unknown) =>
    postJson(srv.base, '/verify/schema', JSON.stringify({ task_id: task, expected_schema: schema, submitted_output: output }));

  it('stops a request past its deadline, keeps /health answering, and charges nothing', async () => {
    const hostile = [0, 1, 2].map((i) => post(`tower-${i}`, tower(26), 1));
    let done = false;
    const settled = Promise.all(hostile).finally(() => {
      done = true;
    });
    const health: number[] = [];
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(`${srv.base}/health`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      health.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 10));
    }
    const answers = await settled;
    for (const res of answers) {
      expect(res.status).toBe(503);
      const body = (await res.json()) as Record<string, unknown>;
      expect(expectErrorShape(body, 'verification_aborted', 503)).toBeNull();
      expect(body.charged).toBe(false);
      expect(String(body.message)).toMatch(/300 ms/);
    }
    // /health was asked again and again while three workers' worth of work was being stopped.
    expect(health.length).toBeGreaterThan(3);
    // Loose on purpose (a shared 2-core machine); on a quiet one every answer takes a few ms.
    expect(Math.max(...health)).toBeLessThan(1000);

    // The workers were replaced, and none of the stopped requests took a unit of the allowance.
    const ok = await post('after', INVOICE_SCHEMA, { total: 3 });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { result: string }).result).toBe('pass');
    expect(ok.headers.get('free-allowance-remaining')).toBe('4');
    // /metrics counts the running workers: the stopped ones were replaced (one at least, the one kept warm; a
    // second starts again when a task finds the first busy).
    const workers = Number(/^aov_verify_workers (\d+)$/m.exec(await (await fetch(`${srv.base}/metrics`)).text())?.[1]);
    expect(workers).toBeGreaterThanOrEqual(1);
    expect(workers).toBeLessThanOrEqual(2);
  });

  it('a schema that exhausts a worker heap gets an error, never a verdict or a crash, and the service keeps serving', async () => {
    // Each of these patterns compiles to tens of MB without the pattern-size limit.
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < 60; i++) properties[`p${i}`] = { type: 'string', pattern: `(?:a{0,1000}){100}x${i}` };
    const res = await post('heap', { type: 'object', properties }, { p0: 'a' });
    const body = (await res.json()) as Record<string, unknown>;
    // Which stop comes first depends on the machine: the worker's heap cap or its deadline (503
    // verification_aborted; a RangeError from a refused allocation is mapped to it too, never to a schema
    // error), or the compiled-size limit, which the settings cannot raise past 10^9 units (422 too_complex).
    // Never a verdict, never another error, never a charge.
    if (res.status === 503) expect(expectErrorShape(body, 'verification_aborted', 503)).toBeNull();
    else {
      expect(res.status).toBe(422);
      expect(body.code).toBe('too_complex');
      expect(body.charged).toBe(false);
    }
    const ok = await post('after-heap', INVOICE_SCHEMA, { total: -1 });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { result: string }).result).toBe('fail');
  });
});

describe('HTTP: a second verification worker starts when a task finds the first busy', () => {
  const tmp = tempDir();
  let srv: Running;
  beforeAll(async () => {
    srv = await startApp(tmp.dir, { ...NO_LIMITS, FREE_ALLOWANCE_PER_DAY: '5', VERIFY_WORKERS: '2', VERIFY_DEADLINE_MS: '8000' });
  });
  afterAll(async () => {
    await srv?.close();
    tmp.cleanup();
  });

  const post = (task: string, schema: unknown, output: unknown) =>
    postJson(srv.base, '/verify/schema', JSON.stringify({ task_id: task, expected_schema: schema, submitted_output: output }));
  const workers = async (): Promise<number> => Number(/^aov_verify_workers (\d+)$/m.exec(await (await fetch(`${srv.base}/metrics`)).text())?.[1]);

  it('answers a request beside a slow one before the slow one ends', async () => {
    expect(await workers()).toBe(1);
    const order: string[] = [];
    const slow = post('tower', tower(26), 1).then((r) => (order.push('slow'), r));
    // Let the slow task reach the only worker first.
    await new Promise((r) => setTimeout(r, 300));
    const ok = await post('beside', INVOICE_SCHEMA, { total: 3 }).then((r) => (order.push('beside'), r));
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { result: string }).result).toBe('pass');
    // Answered by a second worker, started for it, not by the first one once the slow task was stopped.
    expect(await workers()).toBe(2);
    const stopped = await slow;
    expect(order).toEqual(['beside', 'slow']);
    // The tower takes seconds: past the 8 s deadline it is stopped and charges nothing; a fast machine
    // may finish it inside the deadline. Either way it ended after the request beside it was answered.
    if (stopped.status === 503) expect(((await stopped.json()) as { charged: boolean }).charged).toBe(false);
    else expect(stopped.status).toBe(200);
  });
});
