/**
 * @module The pool's fast path on the HTTP thread answers exactly what the pool answers:
 * the same request and stamp give byte-identical receipt text on either path (and with the
 * inline runner); an attempt over the step budget is discarded and the pool's answer (a
 * verdict, or too_complex under the real limit) is what the caller gets; schemas that are
 * expensive to compile or to evaluate (a large counted repetition, an exponential $ref
 * tower) are never compiled on the HTTP thread.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_WORK_LIMITS, type WorkLimits } from '../src/core/schema/index.js';
import { computeHashes } from '../src/receipts/hashes.js';
import { createAttestor, createStaticKeyRing, privateKeyPemFromSeed } from '../src/receipts/index.js';
import { parseVerificationRequest } from '../src/core/request.js';
import { createFastPath, fingerprint, type FastPath } from '../src/service/fast-path.js';
import { createInlineRunner } from '../src/service/inline-runner.js';
import { createConfiguredVerifier, type VerifierConfig } from '../src/service/issuer.js';
import { createPoolRunner, type PoolRunner } from '../src/service/pool-runner.js';
import { isFailed, outcomeError } from '../src/service/pipeline.js';
import { postJson, projectRoot, startApp, tempDir, tower } from './http-helpers.js';

const BASE_URL = 'https://verifier.example.com';
const SERVICE = 'agent-output-verifier';
const keyRing = createStaticKeyRing(privateKeyPemFromSeed(new Uint8Array(32).fill(9)), { keyVersion: 'fast-key-1', notBefore: '2020-01-01T00:00:00Z' });
const attestor = createAttestor({ keyRing, serviceName: SERVICE, baseUrl: BASE_URL });
const STAMP = { verificationId: '0b7e6a52-7d0f-4c43-9d3e-2a4f8f1c9e01', verifiedAt: new Date('2026-01-02T03:04:05Z') };
const INVOICE = readFileSync(path.join(projectRoot, 'test/fixtures/invoice.request.json'), 'utf8');

function verifierConfig(limits: Partial<WorkLimits> = {}): VerifierConfig {
  return { schemaCacheSize: 500, schemaCacheBytes: 64 * 1024 * 1024, listCap: 100, workLimits: { ...DEFAULT_WORK_LIMITS, ...limits } };
}

const runners: PoolRunner[] = [];
afterAll(async () => {
  await Promise.all(runners.map((r) => r.close()));
});

function pool(verifier: VerifierConfig, fastPath?: FastPath): PoolRunner {
  const r = createPoolRunner({
    threads: 1,
    deadlineMs: 10_000,
    heapMb: 128,
    attestor,
    worker: { verifier, maxDepth: 64, serviceName: SERVICE, baseUrl: BASE_URL, verifierVersion: 'test' },
    fastPath,
  });
  runners.push(r);
  return r;
}

function fastPath(verifier: VerifierConfig, over: { maxSteps?: number; maxCompiledSize?: number } = {}): FastPath {
  return createFastPath({
    verifier,
    maxDepth: 64,
    presigner: attestor,
    verifierVersion: 'test',
    maxBytes: 16 * 1024,
    maxSteps: over.maxSteps ?? 25_000,
    maxCompiledSize: over.maxCompiledSize ?? 4_000,
    cacheBytes: 4 * 1024 * 1024,
  });
}

/** The signed text, or the error as the client would see it. */
async function answer(runner: PoolRunner | ReturnType<typeof createInlineRunner>, source: string): Promise<string> {
  const prepared = await runner.prepare(source, STAMP);
  if (isFailed(prepared)) {
    const e = outcomeError(prepared);
    return JSON.stringify({ code: e.code, status: e.status, message: e.message, fields: e.fields });
  }
  return (await runner.run(prepared)).text;
}

const schemaKey = (source: string) => computeHashes(parseVerificationRequest(source)).schema_hash;


const request = (schema: unknown, output: unknown) => JSON.stringify({ task_id: 'fast', agent_id: 'seller-fast', expected_schema: schema, submitted_output: output });

describe('the fast path answers what the pool answers', () => {
  it('gives byte-identical receipt text on the fast path, in the pool and inline', async () => {
    const config = verifierConfig();
    const fast = fastPath(config);
    const withFast = pool(config, fast);
    const poolOnly = pool(config);
    const inline = createInlineRunner({ verifier: createConfiguredVerifier(config), attestor, verifierVersion: 'test', maxDepth: 64 });

    const expected = await answer(poolOnly, INVOICE);
    expect(await answer(inline, INVOICE)).toBe(expected);
    // The first two go to the pool (the second one makes the schema held), then the fast path answers.
    for (let i = 0; i < 4; i++) expect(await answer(withFast, INVOICE)).toBe(expected);
    expect(fast.holds(schemaKey(INVOICE))).toBe(true);
    expect(withFast.runs()).toMatchObject({ pool: 2, fastPath: { fast: 2, compiled: 1 } });

    // Other outputs under the held schema: passing, failing, warnings, strict content, compact.
    const schema = JSON.parse(INVOICE).expected_schema;
    const variants = [
      request(schema, { invoice_id: 'INV-0001', currency: 'USD', line_items: [{ sku: 'A', qty: 1, line_total: 1 }], total: 1 }),
      request(schema, { invoice_id: 'nope', currency: 'GBP', line_items: [], total: 'x', extra: { a: [1, 2] } }),
      JSON.stringify({ ...JSON.parse(INVOICE), strict_content_check: true, detail: 'compact' }),
    ];
    for (const v of variants) {
      const want = await answer(poolOnly, v);
      expect(await answer(withFast, v)).toBe(want);
      expect(await answer(inline, v)).toBe(want);
    }
    expect(withFast.runs().fastPath!.fast).toBeGreaterThanOrEqual(2 + variants.length - 1);
  });

  it('discards an attempt over the step budget: the pool answers, never a too_complex of the budget', async () => {
    // The invoice takes about 200 steps: over a budget of 50, within the engine's limit.
    const config = verifierConfig();
    const fast = fastPath(config, { maxSteps: 50 });
    const withFast = pool(config, fast);
    const expected = await answer(pool(config), INVOICE);
    expect(expected).toMatch(/^\{"summary"/);
    for (let i = 0; i < 3; i++) expect(await answer(withFast, INVOICE)).toBe(expected);
    // Never learned: the pool's steps were over the budget.
    expect(fast.holds(schemaKey(INVOICE))).toBe(false);

    // Held anyway (learned from a small output), then a large output under the same schema goes over the budget.
    const schema = { type: 'array', items: { type: 'object', properties: { n: { type: 'integer', minimum: 0 } } } };
    const small = request(schema, [{ n: 1 }]);
    const large = request(schema, Array.from({ length: 400 }, (_, n) => ({ n })));
    const budgeted = fastPath(config, { maxSteps: 500 });
    const runner = pool(config, budgeted);
    await answer(runner, small);
    await answer(runner, small);
    expect(budgeted.holds(schemaKey(small))).toBe(true);
    expect(await answer(runner, large)).toBe(await answer(pool(config), large));
    expect(budgeted.stats().fallbacks.budget).toBe(1);
  });

  it('keeps a too_complex of the real limit as it is (its limit, not the budget)', async () => {
    // Engine limit 150 steps, budget 100: a request needing more than 150 is refused by the pool, naming 150.
    const config = verifierConfig({ maxEvaluationSteps: 150 });
    const schema = { type: 'array', items: { type: 'integer' } };
    const small = request(schema, [1, 2]);
    const large = request(schema, Array.from({ length: 200 }, (_, i) => i));
    const fast = fastPath(config, { maxSteps: 100 });
    const runner = pool(config, fast);
    await answer(runner, small);
    await answer(runner, small);
    expect(fast.holds(schemaKey(small))).toBe(true);
    const got = await answer(runner, large);
    expect(got).toBe(await answer(pool(config), large));
    expect(JSON.parse(got)).toMatchObject({ code: 'too_complex' });
    expect(got).toContain('150');
    expect(got).not.toContain('more than 100 steps');
  });

  it('never compiles an expensive schema on the HTTP thread', async () => {
    const config = verifierConfig();
    const fast = fastPath(config);
    const runner = pool(config, fast);
    const hostile = [
      // exponential $ref tower: compiles small (memoized), evaluates in ~131k steps
      request(tower(12), 1),
      // counted repetition: compiled size ~9k units
      request({ type: 'string', pattern: '^(?:a{10}){10}$' }, 'a'.repeat(100)),
      // a Unicode property class: its first use builds a table for about a second
      request({ type: 'string', pattern: '^\\p{L}+$' }, 'abc'),
    ];
    for (const body of hostile) {
      const want = await answer(pool(config), body);
      for (let i = 0; i < 3; i++) expect(await answer(runner, body)).toBe(want);
      expect(fast.holds(schemaKey(body))).toBe(false);
    }
    expect(fast.stats()).toMatchObject({ fast: 0, compiled: 0, held: 0 });
  });

  it('leaves errors to the pool: a malformed request gets the pool\'s error', async () => {
    const config = verifierConfig();
    const fast = fastPath(config);
    const runner = pool(config, fast);
    await answer(runner, INVOICE);
    await answer(runner, INVOICE);
    const broken = INVOICE.replace('"task_id"', '"task_id": 1, "task_id"');
    const want = await answer(pool(config), broken);
    expect(JSON.parse(want)).toMatchObject({ code: 'invalid_request' });
    expect(await answer(runner, broken)).toBe(want);
    expect(fast.stats().fallbacks.other).toBe(1);
  });
});

describe('the fingerprint of a schema text', () => {
  const schema = '{"type":"object","properties":{"a":{"type":"string","pattern":"^[}{\\"]+$"}}}';
  const body = (output: string, before = '') => `{${before}"task_id":"t","expected_schema": ${schema} ,"submitted_output":${output}}`;

  it('is the same whatever the output, and differs with the schema text', () => {
    const a = fingerprint(body('{"a":"x"}'));
    expect(a).not.toBeNull();
    expect(fingerprint(Buffer.from(body('[1,2,{"expected_schema":{}}]')))).toBe(a);
    expect(fingerprint(body('1', '"agent_id":"x",'))).toBe(a);
    expect(fingerprint(body('1').replace('"a":{', '"b":{'))).not.toBe(a);
    expect(fingerprint('{"expected_schema":true,"submitted_output":1}')).not.toBeNull();
  });

  it('is null or harmless for texts it cannot follow', () => {
    expect(fingerprint('{"task_id":"t"}')).toBeNull();
    expect(fingerprint('{"task_id":"x\\"expected_schema","submitted_output":1}')).toBeNull();
    expect(fingerprint('{"expected_schema":{"a":"\\')).toBeNull();
  });

  it('spares the HTTP thread the parse of a request whose schema is not held', async () => {
    const config = verifierConfig();
    const fast = fastPath(config);
    const runner = pool(config, fast);
    await answer(runner, INVOICE);
    await answer(runner, INVOICE);
    expect(fast.holds(schemaKey(INVOICE))).toBe(true);
    // The same schema written another way goes to the pool once, then its text is known too.
    const compact = JSON.stringify(JSON.parse(INVOICE));
    const want = await answer(pool(config), compact);
    for (let i = 0; i < 3; i++) expect(await answer(runner, compact)).toBe(want);
    expect(runner.runs()).toMatchObject({ pool: 3, fastPath: { fast: 2 } });
  });
});

describe('the service with the fast path on (the default) and off', () => {
  const metric = (text: string, where: string) => Number(new RegExp(`aov_verify_runs_total\\{where="${where}"\\} (\\d+)`).exec(text)?.[1] ?? NaN);

  it.each([
    ['on', {}, true],
    ['off', { VERIFY_FAST_PATH_BYTES: '0' }, false],
  ] as const)('%s: the same answers, and /metrics says where they ran', async (_name, env, fastOn) => {
    const tmp = tempDir('aov-fast-');
    const app = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '1000', ...env });
    try {
      const bodies: Record<string, unknown>[] = [];
      for (let i = 0; i < 4; i++) {
        const r = await postJson(app.base, '/verify/schema', INVOICE);
        expect(r.status).toBe(200);
        const { verification_id: _id, verified_at: _at, attestation: _sig, ...rest } = (await r.json()) as Record<string, unknown>;
        bodies.push(rest);
      }
      for (const b of bodies) expect(b).toEqual(bodies[0]);
      const text = await (await fetch(`${app.base}/metrics`)).text();
      expect(metric(text, 'pool') + metric(text, 'fast_path')).toBe(4);
      expect(metric(text, 'fast_path')).toBe(fastOn ? 2 : 0);
      // One worker runs from the start; a second (VERIFY_WORKERS defaults to 2) only when a task finds it busy.
      expect(Number(/^aov_verify_workers (\d+)$/m.exec(text)?.[1])).toBe(1);
    } finally {
      await app.close();
      tmp.cleanup();
    }
  });
});
