/**
 * @module Hints that quote a schema's text are cut to a length; a cut between the two halves of a
 * surrogate pair left a lone half in the response, which has no RFC 8785 form: the receipt could not
 * be signed and a valid request got a 500. Over a real socket: the verdict, a receipt that verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../src/receipts/index.js';
import { postJson, startApp, tempDir, type Running } from './http-helpers.js';

describe('hints cut next to an astral character', () => {
  const tmp = tempDir();
  let srv: Running;
  let card: unknown;
  beforeAll(async () => {
    srv = await startApp(tmp.dir);
    card = await (await fetch(`${srv.base}/.well-known/agent-card.json`)).json();
  });
  afterAll(async () => {
    await srv.close();
    tmp.cleanup();
  });

  it('a const whose quoted text is cut at an emoji: a failing verdict with a receipt that verifies, not a 500', async () => {
    // JSON.stringify adds a quote: the emoji's high half is the 57th unit, where the hint is cut.
    const value = `${'x'.repeat(55)}😀${'y'.repeat(10)}`;
    const request = JSON.stringify({ task_id: 'const-cut', expected_schema: { type: 'object', properties: { a: { const: value } } }, submitted_output: { a: 'other' } });
    const res = await postJson(srv.base, '/verify/schema', request);
    expect(res.status).toBe(200);
    const receipt = (await res.json()) as Record<string, unknown>;
    expect(receipt.result).toBe('fail');
    expect(JSON.stringify(receipt)).toContain(`"${'x'.repeat(55)}...`);
    expect(verifyReceipt(receipt, { agentCard: card as never }, { request })).toMatchObject({ valid: true });
  });

  it('an unknown keyword whose name is cut at an emoji: the warning holds no escaped half', async () => {
    const name = `${'q'.repeat(76)}😀zzzzz`;
    const request = JSON.stringify({ task_id: 'name-cut', expected_schema: { type: 'object', [name]: 1 }, submitted_output: {} });
    const res = await postJson(srv.base, '/verify/schema', request);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain(`${'q'.repeat(76)}...`);
    expect(text).not.toMatch(/\\ud83d/i);
    expect(verifyReceipt(JSON.parse(text) as Record<string, unknown>, { agentCard: card as never }, { request })).toMatchObject({ valid: true });
  });
});
