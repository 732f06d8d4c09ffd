/**
 * @module The framework adapters against a live server on loopback, each with
 * its framework's own offline mock model: the AI SDK v5's MockLanguageModelV2
 * and LangChain's FakeListChatModel, whose first answer fails (wrong total)
 * and whose second, after the re-ask with the hints, passes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MockLanguageModelV2 } from 'ai/test';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifierClient, RepairLoopError, type VerificationRequest, type VerifierClient } from '../src/client/index.js';
import { generateVerifiedObject } from '../src/integrations/ai-sdk.js';
import { createVerifiedChain } from '../src/integrations/langchain.js';
import { projectRoot, startApp, tempDir, type Running } from './http-helpers.js';

const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as VerificationRequest;
const GOOD = INVOICE.submitted_output as Record<string, unknown>;
const { submitted_output: _output, ...SPEC } = INVOICE;
const WRONG_TOTAL = JSON.stringify({ ...GOOD, total: 135 });
const RIGHT = JSON.stringify(GOOD);

const answer = (text: string) => ({
  content: [{ type: 'text' as const, text }],
  finishReason: 'stop' as const,
  usage: { inputTokens: 10, outputTokens: 20, totalTokens: 30 },
  warnings: [],
});

let srv: Running;
let tmp: ReturnType<typeof tempDir>;
let client: VerifierClient;
beforeAll(async () => {
  tmp = tempDir('aov-adapters-');
  srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '1000' });
  client = createVerifierClient({ baseUrl: srv.base });
});
afterAll(async () => {
  await srv?.close();
  tmp?.cleanup();
});

describe('agent-output-verifier/ai-sdk (ai@5, MockLanguageModelV2)', () => {
  it('a wrong total is re-asked with the hints; the second answer passes; both receipts are returned and check against the service keys', async () => {
    const model = new MockLanguageModelV2({ doGenerate: [answer(WRONG_TOTAL), answer(RIGHT)] });
    const out = await generateVerifiedObject({ client, model, prompt: 'Write invoice INV-0042.', verification: { ...SPEC, task_id: 'ai-sdk-1' } });
    expect(out.object).toEqual(GOOD);
    expect(out.receipts.map((r) => r.result)).toEqual(['fail', 'pass']);
    expect(out.receipt).toBe(out.receipts[1]);
    expect(out.attempts.map((a) => a.kind)).toEqual(['initial', 'regenerate']);
    expect(await client.checkReceipt(out.receipt, { request: out.request })).toMatchObject({ valid: true });

    expect(model.doGenerateCalls).toHaveLength(2);
    const first = model.doGenerateCalls[0].prompt;
    expect(first[0]).toMatchObject({ role: 'system' });
    expect(JSON.stringify(first[0])).toContain('JSON Schema');
    // The re-ask: the original prompt, the model's failing answer, then the hints.
    const second = model.doGenerateCalls[1].prompt;
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    const reask = JSON.stringify(second[3]);
    expect(reask).toContain('consistency:sum_equals');
    expect(reask).toContain('found sum 129.5');
  });

  it('a model that keeps failing ends with not_converged and every receipt', async () => {
    const model = new MockLanguageModelV2({ doGenerate: [answer(WRONG_TOTAL), answer(JSON.stringify({ ...GOOD, total: 140 }))] });
    const err = await generateVerifiedObject({ client, model, prompt: 'Write it.', verification: { ...SPEC, task_id: 'ai-sdk-2' }, maxAttempts: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RepairLoopError);
    expect((err as RepairLoopError).code).toBe('not_converged');
    expect((err as RepairLoopError).receipts.map((r) => r.result)).toEqual(['fail', 'fail']);
  });

  it('prose instead of JSON is regenerate_invalid with no receipt', async () => {
    const model = new MockLanguageModelV2({ doGenerate: [answer('Here you go: the invoice totals 129.5')] });
    const err = await generateVerifiedObject({ client, model, prompt: 'Write it.', verification: { ...SPEC, task_id: 'ai-sdk-3' } }).catch((e: unknown) => e);
    expect((err as RepairLoopError).code).toBe('regenerate_invalid');
    expect((err as RepairLoopError).receipts).toEqual([]);
  });
});

describe('agent-output-verifier/langchain (@langchain/core 1.x, FakeListChatModel)', () => {
  it('the chain re-asks the fake chat model with the hints and returns the passing object with both receipts', async () => {
    const model = new FakeListChatModel({ responses: [WRONG_TOTAL, `\`\`\`json\n${RIGHT}\n\`\`\``] });
    const chain = await createVerifiedChain({ client, model, verification: { ...SPEC, task_id: 'lc-1' } });
    const out = await chain.invoke('Write invoice INV-0042.');
    expect(out.object).toEqual(GOOD);
    expect(out.receipts.map((r) => r.result)).toEqual(['fail', 'pass']);
    expect(await client.checkReceipt(out.receipt, { request: out.request })).toMatchObject({ valid: true });
  });

  it('a model that throws ends with regenerate_failed and the receipt so far', async () => {
    let calls = 0;
    const model = new FakeListChatModel({ responses: [WRONG_TOTAL, RIGHT] });
    const original = model.invoke.bind(model);
    model.invoke = (async (...args: Parameters<typeof model.invoke>) => {
      calls += 1;
      if (calls === 2) throw new Error('quota exceeded');
      return original(...args);
    }) as typeof model.invoke;
    const chain = await createVerifiedChain({ client, model, verification: { ...SPEC, task_id: 'lc-2' } });
    const err = await chain.invoke('Write it.').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RepairLoopError);
    expect((err as RepairLoopError).code).toBe('regenerate_failed');
    expect((err as Error).message).toContain('quota exceeded');
    expect((err as RepairLoopError).receipts.map((r) => r.result)).toEqual(['fail']);
  });
});
