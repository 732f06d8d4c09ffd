/**
 * @module The inline runner's answers when the machine, not the schema, gives out: a refused
 * allocation is `verification_aborted`, never a 422 blaming the schema; a stack overflow is not
 * mapped (the engine reports it as the schema's own 422, "nested too deeply").
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { isApiError } from '../errors.js';
import { isAllocationFailure, isStackOverflow } from '../core/schema/exhaustion.js';
import { createIssuer } from './issuer.js';
import { abortedByMemory, createInlineRunner } from './inline-runner.js';
import { isFailed } from './pipeline.js';

const dir = mkdtempSync(path.join(tmpdir(), 'aov-inline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const config = loadConfig({ DATA_DIR: dir });
const { verifier, attestor } = createIssuer(config);
const invoice = readFileSync(new URL('../../test/fixtures/invoice.request.json', import.meta.url), 'utf8');
const stamp = { verificationId: '00000000-0000-4000-8000-000000000001', verifiedAt: new Date('2026-12-01T00:00:00Z') };

function overflow(): never {
  const down = (n: number): number => down(n + 1) + 1;
  down(0);
  throw new Error('unreachable');
}

describe('exhaustion', () => {
  it('tells a stack overflow from a refused allocation', () => {
    let stack: unknown;
    try {
      overflow();
    } catch (e) {
      stack = e;
    }
    let alloc: unknown;
    try {
      new Array(-1);
    } catch (e) {
      alloc = e;
    }
    expect(isStackOverflow(stack)).toBe(true);
    expect(isAllocationFailure(stack)).toBe(false);
    expect(isAllocationFailure(alloc)).toBe(true);
    expect(isAllocationFailure(new SyntaxError('x'))).toBe(false);
    expect(abortedByMemory(stack)).toBe(stack);
    const mapped = abortedByMemory(alloc);
    expect(isApiError(mapped) && mapped.code).toBe('verification_aborted');
  });
});

describe('inline runner', () => {
  it('answers verification_aborted when an allocation is refused during the evaluation', async () => {
    const runner = createInlineRunner({
      verifier: {
        evaluate() {
          throw new RangeError('Array buffer allocation failed');
        },
      },
      attestor,
      verifierVersion: 'test',
      maxDepth: 64,
    });
    // A coded failure, as a value: the pipeline answers it without reserving anything.
    const prepared = await runner.prepare(invoice, stamp);
    expect(isFailed(prepared) && prepared.code).toBe('verification_aborted');
  });

  it('signs a normal request', async () => {
    const runner = createInlineRunner({ verifier, attestor, verifierVersion: 'test', maxDepth: 64 });
    const prepared = await runner.prepare(invoice, stamp);
    if (isFailed(prepared)) throw new Error(`prepare failed: ${prepared.code}`);
    const receipt = await runner.run(prepared);
    expect(receipt.verificationId).toBe(stamp.verificationId);
    expect(JSON.parse(receipt.text).verification_id).toBe(stamp.verificationId);
  });
});
