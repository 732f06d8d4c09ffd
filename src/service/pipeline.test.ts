/**
 * @module The request lifecycle ends every expected failure as a value: an invalid request, a schema
 * over a work limit and a spent allowance each resolve (never reject) with the code of src/errors.ts
 * a transport renders, and nothing is reserved, stored or charged for them. Only a fault of the code
 * itself rejects, after the admission is released.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { finishReceipt, type UnsignedReceipt } from '../receipts/issue-receipt.js';
import { createInlineRunner } from './inline-runner.js';
import { createIssuer } from './issuer.js';
import { createAllowancePolicy, createPipeline, type AdmitContext, type Pipeline } from './pipeline.js';
import type { AllowanceInfo, VerifierService } from './types.js';

const dir = mkdtempSync(path.join(tmpdir(), 'aov-pipeline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// A low step limit, so that a 200-item array is over it (too_complex) while `valid` is not.
const config = loadConfig({ DATA_DIR: dir, SCHEMA_MAX_EVALUATION_STEPS: '150' });
const { verifier, attestor } = createIssuer(config);
const valid = JSON.stringify({ task_id: 'small', expected_schema: { type: 'integer' }, submitted_output: 3 });
const context: AdmitContext = { transport: 'rest', client: { clientKey: '192.0.2.1' }, resource: { url: 'http://localhost/verify/schema' } };

/** A service that records every call that could reserve, store or charge anything. */
function recordingService(options: { remaining: number; save?: () => Promise<void> }) {
  const calls: string[] = [];
  let used = 0;
  const limit = options.remaining;
  const info = (allowed: boolean): AllowanceInfo => ({
    allowed,
    limit,
    used,
    remaining: limit - used,
    resetsAt: '2099-01-01T00:00:00Z',
    retryAfter: 3600,
  });
  const service: VerifierService = {
    async consumeAllowance() {
      calls.push('consumeAllowance');
      if (used >= limit) return info(false);
      used++;
      return info(true);
    },
    peekAllowance: async () => info(used < limit),
    async refundAllowance() {
      calls.push('refundAllowance');
      used--;
    },
    async takeAllowance(_client, units) {
      calls.push(`takeAllowance:${units}`);
      if (used + units > limit) return info(false);
      used += units;
      return info(true);
    },
    async refundAllowanceUnits(_client, units) {
      calls.push(`refundAllowanceUnits:${units}`);
      used -= units;
    },
    async saveReceipt(unsigned: UnsignedReceipt) {
      calls.push('saveReceipt');
      await options.save?.();
      return finishReceipt(unsigned.draft, unsigned.signer);
    },
    async consumeAllowanceAndSave() {
      calls.push('consumeAllowanceAndSave');
      throw new Error('not reached: no client is known here to have units left');
    },
    async saveReceipts() {
      calls.push('saveReceipts');
    },
    unscorable: () => null,
    score: async () => {
      throw new Error('not used');
    },
    reputation: async () => {
      throw new Error('not used');
    },
    getReceipt: async () => null,
  };
  return { service, calls };
}

function pipelineOver(service: VerifierService): Pipeline {
  return createPipeline({
    service,
    policy: createAllowancePolicy(service),
    runner: createInlineRunner({ verifier, attestor, verifierVersion: 'test', maxDepth: 64 }),
    clock: () => new Date('2026-12-01T00:00:00Z'),
    newId: () => '00000000-0000-4000-8000-000000000001',
  });
}

describe('pipeline.handle', () => {
  it('resolves with invalid_request for a request that is not valid, taking nothing', async () => {
    const { service, calls } = recordingService({ remaining: 5 });
    const outcome = await pipelineOver(service).handle({ operation: 'verify', source: '{"task_id": 1}' }, context);
    expect(outcome).toMatchObject({ admitted: false, kind: 'failed', code: 'invalid_request' });
    expect(outcome.kind === 'failed' && outcome.fields.map((f) => f.field)).toContain('task_id');
    expect(calls).toEqual([]);
  });

  it('resolves with too_complex for a request over a work limit, taking nothing', async () => {
    const { service, calls } = recordingService({ remaining: 5 });
    const source = JSON.stringify({ task_id: 'big', expected_schema: { type: 'array', items: { type: 'integer' } }, submitted_output: Array.from({ length: 200 }, (_, i) => i) });
    const outcome = await pipelineOver(service).handle({ operation: 'verify', source }, context);
    expect(outcome).toMatchObject({ admitted: false, kind: 'failed', code: 'too_complex' });
    expect(calls).toEqual([]);
  });

  it('resolves with the first invalid item of a batch, named in the batch, taking nothing', async () => {
    const { service, calls } = recordingService({ remaining: 5 });
    const outcome = await pipelineOver(service).handle(
      { operation: 'batch', items: [valid, '{"task_id": 1}'], itemField: (i, field) => `items[${i}].${field}` },
      context,
    );
    expect(outcome).toMatchObject({ kind: 'failed', code: 'invalid_request', message: expect.stringMatching(/^Item 1 of the batch is not valid: /) });
    expect(outcome.kind === 'failed' && outcome.fields.map((f) => f.field)).toContain('items[1].task_id');
    expect(calls).toEqual([]);
  });

  it('resolves with free_allowance_exhausted once the allowance is spent, storing and charging nothing', async () => {
    const { service, calls } = recordingService({ remaining: 0 });
    const outcome = await pipelineOver(service).handle({ operation: 'verify', source: valid }, context);
    expect(outcome).toMatchObject({ admitted: false, kind: 'refused', code: 'free_allowance_exhausted', allowance: { allowed: false, remaining: 0 } });
    // The unit was asked for and refused: no receipt stored, nothing to refund.
    expect(calls).toEqual(['consumeAllowance']);
  });

  it('answers a valid request with its receipt, stored once', async () => {
    const { service, calls } = recordingService({ remaining: 1 });
    const outcome = await pipelineOver(service).handle({ operation: 'verify', source: valid }, context);
    expect(outcome.kind).toBe('answer');
    expect(outcome.kind === 'answer' && JSON.parse(outcome.text).verification_id).toBe('00000000-0000-4000-8000-000000000001');
    expect(calls).toEqual(['consumeAllowance', 'saveReceipt']);
  });

  it('resolves with unavailable when the store is, and gives the unit back', async () => {
    const save = async () => {
      throw new ApiError('unavailable', { message: 'The database is not reachable.', retryAfter: 2 });
    };
    const { service, calls } = recordingService({ remaining: 1, save });
    const outcome = await pipelineOver(service).handle({ operation: 'verify', source: valid }, context);
    expect(outcome).toMatchObject({ kind: 'failed', code: 'unavailable', retryAfter: 2 });
    expect(calls).toEqual(['consumeAllowance', 'saveReceipt', 'refundAllowance']);
  });

  it('rejects on a fault of the code itself, after giving the unit back', async () => {
    const save = async () => {
      throw new TypeError('a bug');
    };
    const { service, calls } = recordingService({ remaining: 1, save });
    await expect(pipelineOver(service).handle({ operation: 'verify', source: valid }, context)).rejects.toThrow('a bug');
    expect(calls).toEqual(['consumeAllowance', 'saveReceipt', 'refundAllowance']);
  });
});
