/**
 * @module The verification pool's second worker: it starts for a task waiting behind a slow one, not for a
 * burst of fast tasks that the first worker drains on its own; and tasks past the queue's bound are refused.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_WORK_LIMITS } from '../src/core/schema/index.js';
import { createAttestor, createStaticKeyRing, privateKeyPemFromSeed } from '../src/receipts/index.js';
import { isFailed } from '../src/service/pipeline.js';
import { createPoolRunner, type PoolRunner, type PoolRunnerOptions } from '../src/service/pool-runner.js';
import { projectRoot, tower } from './http-helpers.js';

const BASE_URL = 'https://verifier.example.com';
const SERVICE = 'agent-output-verifier';
const keyRing = createStaticKeyRing(privateKeyPemFromSeed(new Uint8Array(32).fill(5)), { keyVersion: 'pool-key-1', notBefore: '2020-01-01T00:00:00Z' });
const attestor = createAttestor({ keyRing, serviceName: SERVICE, baseUrl: BASE_URL });
const INVOICE = readFileSync(path.join(projectRoot, 'test/fixtures/invoice.request.json'), 'utf8');
/** Work limits as high as they go: only the pool stands in the way of the slow schema. */
const NO_LIMITS = { ...DEFAULT_WORK_LIMITS, maxExpandedSchemaSize: 1e9, maxCompiledSize: 1e9, maxEvaluationSteps: 1e12 };

const runners: PoolRunner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.close()));
});

function pool(options: Partial<PoolRunnerOptions>): PoolRunner {
  const r = createPoolRunner({
    threads: 2,
    deadlineMs: 20_000,
    heapMb: 128,
    attestor,
    worker: {
      verifier: { schemaCacheSize: 500, schemaCacheBytes: 64 * 1024 * 1024, listCap: 100, workLimits: NO_LIMITS },
      maxDepth: 64,
      serviceName: SERVICE,
      baseUrl: BASE_URL,
      verifierVersion: 'test',
    },
    ...options,
  });
  runners.push(r);
  return r;
}

let n = 0;
const stamp = () => ({ verificationId: `0b7e6a52-7d0f-4c43-9d3e-2a4f8f1c${String(++n).padStart(4, '0')}`, verifiedAt: new Date('2026-01-02T03:04:05Z') });
const request = (task: string, schema: unknown, output: unknown) => JSON.stringify({ task_id: task, expected_schema: schema, submitted_output: output });

/** The verdict, or the error code the client would see. */
async function verdict(runner: PoolRunner, source: string): Promise<string> {
  const prepared = await runner.prepare(source, stamp());
  if (isFailed(prepared)) return prepared.code;
  const signed = await runner.run(prepared);
  return (JSON.parse(signed.text) as { result: string }).result;
}

describe('verification pool: when a second worker starts', () => {
  it('drains a burst of fast tasks through the first worker without starting another', async () => {
    const runner = pool({ overflowAfterMs: 10_000 });
    expect(await verdict(runner, INVOICE)).toBe('fail');
    // 24 tasks at once, each with a schema the worker has not compiled yet.
    const burst = Array.from({ length: 24 }, (_, i) => verdict(runner, request(`burst-${i}`, { type: 'object', required: [`f${i}`] }, { [`f${i}`]: i })));
    expect(await Promise.all(burst)).toEqual(Array.from({ length: 24 }, () => 'pass'));
    expect(runner.runs()).toMatchObject({ pool: 25, workers: 1 });
  });

  it('starts a second worker for a task waiting behind a slow one, which it answers first', async () => {
    const runner = pool({ overflowAfterMs: 50 });
    expect(await verdict(runner, INVOICE)).toBe('fail');
    expect(runner.runs().workers).toBe(1);
    const order: string[] = [];
    // Deep enough to take seconds; the 20 s deadline may stop it on a slow machine, which changes nothing here.
    const slow = verdict(runner, request('tower', tower(24), 1)).then((v) => (order.push('slow'), v));
    await new Promise((r) => setTimeout(r, 200));
    expect(await verdict(runner, request('beside', { type: 'integer' }, 3))).toBe('pass');
    order.push('beside');
    expect(runner.runs().workers).toBe(2);
    expect(['pass', 'verification_aborted']).toContain(await slow);
    expect(order).toEqual(['beside', 'slow']);
  }, 30_000);

  it('refuses a task past the queue bound with unavailable, and answers the ones it took', async () => {
    const runner = pool({ threads: 1, maxQueue: 2, deadlineMs: 1_000 });
    const slow = verdict(runner, request('tower', tower(26), 1));
    await new Promise((r) => setTimeout(r, 100));
    const queued = [verdict(runner, request('q1', { type: 'integer' }, 1)), verdict(runner, request('q2', { type: 'integer' }, 'x'))];
    expect(await verdict(runner, request('q3', { type: 'integer' }, 1))).toBe('unavailable');
    expect(await slow).toBe('verification_aborted');
    expect(await Promise.all(queued)).toEqual(['pass', 'fail']);
  }, 30_000);
});
