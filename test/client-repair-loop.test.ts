/**
 * @module The client's repair loop against a live server on loopback: a
 * regenerated output verified and passing with every receipt returned (each
 * one checks against the service's keys), and each way the loop can end
 * without a pass (regenerate throws, answers non-JSON, never converges,
 * exceeds the body limit, takes too long, the service never answers) as a
 * RepairLoopError with the receipts so far, within its time bound.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifierClient, RepairLoopError, type RegenerateFeedback, type VerificationRequest, type VerifierClient } from '../src/client/index.js';
import { projectRoot, startApp, tempDir, type Running } from './http-helpers.js';

const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as VerificationRequest;
const GOOD = INVOICE.submitted_output as { total: number; line_items: Array<{ line_total: number }>; [key: string]: unknown };
/** Wrong total: the sum rule fails, with two possible fixes (so nothing is determined). */
const wrongTotal = (taskId: string): VerificationRequest => ({ ...INVOICE, task_id: taskId, submitted_output: { ...GOOD, total: 135 } });

async function loopError(work: Promise<unknown>): Promise<RepairLoopError> {
  try {
    await work;
  } catch (e) {
    expect(e).toBeInstanceOf(RepairLoopError);
    return e as RepairLoopError;
  }
  throw new Error('the loop resolved; a RepairLoopError was expected');
}

describe('verifyAndRepair against a live server', () => {
  let srv: Running;
  let tmp: ReturnType<typeof tempDir>;
  let client: VerifierClient;
  beforeAll(async () => {
    tmp = tempDir('aov-loop-');
    srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '1000' });
    client = createVerifierClient({ baseUrl: srv.base });
  });
  afterAll(async () => {
    await srv?.close();
    tmp?.cleanup();
  });

  it('a passing request is one attempt and one receipt', async () => {
    const out = await client.verifyAndRepair({ request: { ...INVOICE, task_id: 'loop-pass' } });
    expect(out.result).toBe('pass');
    expect(out.attempts.map((a) => a.kind)).toEqual(['initial']);
    expect(out.receipts).toHaveLength(1);
    expect(out.output).toEqual(GOOD);
  });

  it('regenerate gets the remaining hints as text and JSON; its answer is verified; every receipt is returned, the pass last, and each checks against the service keys', async () => {
    const seen: RegenerateFeedback[] = [];
    const request = wrongTotal('loop-regen');
    const out = await client.verifyAndRepair({
      request,
      maxAttempts: 3,
      regenerate: (feedback) => {
        seen.push(feedback);
        // A scripted fixer: the total becomes the sum of the lines, answered as fenced JSON text as models do.
        const output = feedback.output as typeof GOOD;
        const fixed = { ...output, total: output.line_items.reduce((s, l) => s + l.line_total, 0) };
        return `\`\`\`json\n${JSON.stringify(fixed)}\n\`\`\``;
      },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0].attempt).toBe(1);
    expect(seen[0].blockingChecks).toEqual(['consistency:sum_equals']);
    expect(seen[0].text).toMatch(/^The output failed verification \(blocking: consistency:sum_equals\)/);
    expect(seen[0].text).toContain('consistency:sum_equals at');
    expect(seen[0].hints.some((h) => h.check === 'consistency:sum_equals')).toBe(true);
    expect(out.attempts.map((a) => [a.kind, a.receipt.result])).toEqual([
      ['initial', 'fail'],
      ['regenerate', 'pass'],
    ]);
    expect(out.receipts.map((r) => r.result)).toEqual(['fail', 'pass']);
    expect(out.output).toEqual(GOOD);
    expect(out.request.task_id).toBe('loop-regen');
    // Each receipt is the service's signed answer for exactly the request of its attempt.
    for (const a of out.attempts) expect(await client.checkReceipt(a.text, { request: a.request })).toMatchObject({ valid: true });
    expect(out.receipts[0].output_hash).not.toBe(out.receipts[1].output_hash);
  });

  it('determined repairs are applied and verified again: initial fail, repair pass, no model needed', async () => {
    const line0 = (GOOD.line_items as unknown as Array<Record<string, unknown>>)[0];
    const request: VerificationRequest = {
      ...INVOICE,
      task_id: 'loop-determined',
      submitted_output: { ...GOOD, currency: 'usd', line_items: [{ ...line0, qty: '3' }, GOOD.line_items[1]] } as unknown as VerificationRequest['submitted_output'],
    };
    const out = await client.verifyAndRepair({ request });
    expect(out.attempts.map((a) => [a.kind, a.receipt.result])).toEqual([
      ['initial', 'fail'],
      ['repair', 'pass'],
    ]);
    expect(out.attempts[0].receipt.next_actions[0]).toEqual({ action: 'apply_repairs', count: 2 });
    expect(out.attempts[1].applied?.map((r) => r.check).sort()).toEqual(['schema:enum', 'schema:type']);
    expect(out.output).toEqual(GOOD);
    // The patched output was sent and signed: its receipt checks against the patched request.
    expect(await client.checkReceipt(out.attempts[1].text, { request: out.request })).toMatchObject({ valid: true });
  });

  it('repairs first, then regenerate for what is left; candidates: true takes the first option instead', async () => {
    const line0 = (GOOD.line_items as unknown as Array<Record<string, unknown>>)[0];
    const faulty = { ...GOOD, currency: 'usd', line_items: [{ ...line0, qty: '3' }, GOOD.line_items[1]], total: 140 } as unknown as VerificationRequest['submitted_output'];
    const seen: unknown[] = [];
    const out = await client.verifyAndRepair({
      request: { ...INVOICE, task_id: 'loop-mixed', submitted_output: faulty },
      regenerate: (f) => {
        seen.push(f.output);
        return { ...(f.output as object), total: 129.5 };
      },
    });
    expect(out.attempts.map((a) => [a.kind, a.receipt.result])).toEqual([
      ['initial', 'fail'],
      ['repair', 'fail'],
      ['regenerate', 'pass'],
    ]);
    // regenerate saw the output with the determined repairs in place.
    expect(seen).toEqual([{ ...GOOD, total: 140 }]);

    const opted = await client.verifyAndRepair({ request: { ...INVOICE, task_id: 'loop-candidates', submitted_output: faulty }, candidates: true });
    expect(opted.attempts.map((a) => [a.kind, a.receipt.result])).toEqual([
      ['initial', 'fail'],
      ['repair', 'pass'],
    ]);
    expect(opted.output).toEqual(GOOD);
  });

  it('a summed line sent as a string hides the sum candidate until it is a number: with candidates the loop takes a second repair round', async () => {
    const line0 = (GOOD.line_items as unknown as Array<Record<string, unknown>>)[0];
    const faulty = { ...GOOD, line_items: [{ ...line0, line_total: '87' }, GOOD.line_items[1]], total: 140 } as unknown as VerificationRequest['submitted_output'];
    const out = await client.verifyAndRepair({ request: { ...INVOICE, task_id: 'loop-rounds', submitted_output: faulty }, candidates: true });
    expect(out.attempts.map((a) => [a.kind, a.receipt.result])).toEqual([
      ['initial', 'fail'],
      ['repair', 'fail'],
      ['repair', 'pass'],
    ]);
    expect(out.attempts[1].applied?.map((r) => r.certainty)).toEqual(['determined']);
    expect(out.attempts[2].applied?.map((r) => r.certainty)).toEqual(['candidate']);
    expect(out.output).toEqual(GOOD);
  });

  it('a determined repair that would exceed the body limit is not sent: body_limit with the first receipt', async () => {
    const schema = structuredClone(INVOICE.expected_schema) as { properties: Record<string, unknown>; required: string[] };
    schema.properties.memo = { type: 'string', default: 'm'.repeat(3000) };
    schema.required = [...schema.required, 'memo'];
    const request = { ...INVOICE, task_id: 'loop-big-repair', expected_schema: schema } as VerificationRequest;
    const err = await loopError(client.verifyAndRepair({ request, maxBodyBytes: JSON.stringify(request).length + 1000 }));
    expect(err.code).toBe('body_limit');
    expect(err.message).toContain('schema:required');
    expect(err.receipts.map((r) => r.result)).toEqual(['fail']);
  });

  it('a compact request still gets hints to work with (the loop asks for the full form)', async () => {
    let text = '';
    await loopError(
      client.verifyAndRepair({
        request: { ...wrongTotal('loop-compact'), detail: 'compact' },
        maxAttempts: 2,
        regenerate: (f) => {
          text = f.text;
          throw new Error('model down');
        },
      }),
    );
    expect(text).toContain('consistency:sum_equals at');
  });

  it('regenerate that throws: regenerate_failed with the receipt so far and the cause', async () => {
    const err = await loopError(
      client.verifyAndRepair({
        request: wrongTotal('loop-throw'),
        regenerate: () => Promise.reject(new Error('rate limited')),
      }),
    );
    expect(err.code).toBe('regenerate_failed');
    expect(err.message).toContain('rate limited');
    expect((err.cause as Error).message).toBe('rate limited');
    expect(err.receipts.map((r) => r.result)).toEqual(['fail']);
  });

  it('regenerate answering non-JSON (text, undefined, NaN inside): regenerate_invalid, nothing more sent', async () => {
    for (const answer of ['Sure! Here is the invoice: {total: 129.5}', undefined, { ...GOOD, total: Number.NaN }]) {
      const err = await loopError(client.verifyAndRepair({ request: wrongTotal('loop-nonjson'), regenerate: () => answer }));
      expect(err.code).toBe('regenerate_invalid');
      expect(err.receipts).toHaveLength(1);
    }
  });

  it('a loop that never converges ends at maxAttempts with every receipt', async () => {
    let n = 0;
    const err = await loopError(
      client.verifyAndRepair({
        request: wrongTotal('loop-diverge'),
        maxAttempts: 3,
        regenerate: () => ({ ...GOOD, total: 200 + ++n }),
      }),
    );
    expect(err.code).toBe('not_converged');
    expect(err.message).toContain('maxAttempts 3');
    expect(err.receipts.map((r) => r.result)).toEqual(['fail', 'fail', 'fail']);
    expect(n).toBe(2);
  });

  it('regenerate returning an output that already failed ends the loop at once', async () => {
    const request = wrongTotal('loop-same');
    const err = await loopError(client.verifyAndRepair({ request, maxAttempts: 5, regenerate: (f) => f.output }));
    expect(err.code).toBe('not_converged');
    expect(err.message).toContain('already verified and failing');
    expect(err.receipts).toHaveLength(1);
  });

  it('without regenerate a fail with no applicable repair ends as not_converged after one receipt', async () => {
    const err = await loopError(client.verifyAndRepair({ request: wrongTotal('loop-noregen') }));
    expect(err.code).toBe('not_converged');
    expect(err.receipts).toHaveLength(1);
  });

  it('a regenerated output over the body limit is not sent: body_limit', async () => {
    const err = await loopError(
      client.verifyAndRepair({
        request: wrongTotal('loop-big'),
        maxBodyBytes: 4096,
        regenerate: () => ({ ...GOOD, notes: 'x'.repeat(5000) }),
      }),
    );
    expect(err.code).toBe('body_limit');
    expect(err.message).toMatch(/regenerated request is \d+ bytes, over the body limit of 4096/);
    expect(err.receipts).toHaveLength(1);
  });

  it('a regenerate that never answers ends with timeout within the time budget, the abort signal fired', async () => {
    let signal: AbortSignal | undefined;
    const started = Date.now();
    const err = await loopError(
      client.verifyAndRepair({
        request: wrongTotal('loop-slow'),
        timeoutMs: 800,
        regenerate: (f) => {
          signal = f.signal;
          return new Promise(() => undefined);
        },
      }),
    );
    expect(err.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(signal?.aborted).toBe(true);
    expect(err.receipts).toHaveLength(1);
  });
});

describe('verifyAndRepair against a service that never answers', () => {
  let hanging: Server;
  let base: string;
  beforeAll(async () => {
    hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    hanging.closeAllConnections();
    await new Promise((resolve) => hanging.close(resolve));
  });

  it('ends with timeout and no receipts; the request is aborted', async () => {
    const started = Date.now();
    const err = await loopError(createVerifierClient({ baseUrl: base }).verifyAndRepair({ request: wrongTotal('loop-hang'), timeoutMs: 500 }));
    expect(err.code).toBe('timeout');
    expect(err.receipts).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
