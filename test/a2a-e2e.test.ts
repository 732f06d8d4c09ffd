/**
 * @module The A2A endpoint against the real app (createApp: SQLite store, real
 * key ring) over loopback HTTP, driven by the official @a2a-js/sdk client found
 * through the agent card: the invoice request sent as a data part comes back as a
 * signed receipt that verifies with the card's key and equals the REST verdict;
 * errors are A2A errors carrying the service's error object; the allowance is the
 * one REST uses; /metrics counts A2A verifications; duplicate keys inside the
 * output fail exactly as over REST.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { Role, type Message } from '@a2a-js/sdk';
import { verifyReceipt } from '../src/receipts/index.js';
import { postJson, projectRoot, startApp, tempDir, type Running } from './http-helpers.js';

const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice.request.json'), 'utf8')) as Record<string, unknown>;
const VOLATILE = ['verification_id', 'verified_at', 'verify', 'attestation'];
const withoutVolatile = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([k]) => !VOLATILE.includes(k)));

let running: Running;
let tmp: { dir: string; cleanup(): void };
let card: Record<string, any>;
let client: Client;

function dataMessage(data: unknown): Message {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType: 'application/json' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The data of the answer's one part. */
function answerData(result: unknown): Record<string, any> {
  const message = result as Message;
  expect(message.parts).toHaveLength(1);
  const content = message.parts[0].content;
  if (content?.$case !== 'data') throw new Error(`expected a data part, got ${JSON.stringify(content)}`);
  return content.value as Record<string, any>;
}

async function rpc(body: string, headers: Record<string, string> = {}): Promise<Record<string, any>> {
  const res = await fetch(`${running.base}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

beforeAll(async () => {
  tmp = tempDir('aov-a2a-');
  running = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '6' });
  card = (await (await fetch(`${running.base}/.well-known/agent-card.json`)).json()) as Record<string, any>;
  client = await new ClientFactory().createFromUrl(running.base);
});

afterAll(async () => {
  await running?.close();
  tmp?.cleanup();
});

describe('A2A against the real app', () => {
  // Allowance N = 6 for this file's one client: A2A 1 (invoice), REST 2, A2A 3 (duplicate keys),
  // REST 4, A2A 5 (0.3 message/send), A2A 6 (score is free; then the 6th unit), then refused.
  it('the agent card is one A2A version (1.0) and declares the JSON-RPC endpoint it serves', () => {
    expect(card.supportedInterfaces).toEqual([
      { url: `${running.base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${running.base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ]);
    for (const v03 of ['protocolVersion', 'url', 'preferredTransport', 'additionalInterfaces']) expect(card).not.toHaveProperty(v03);
    expect(client.protocolVersion).toBe('1.0');
  });

  it('the SDK client sends the invoice request and gets a receipt that verifies with the agent card key and equals REST', async () => {
    const result = await client.sendMessage({ tenant: '', message: dataMessage(INVOICE), configuration: undefined, metadata: undefined });
    const receipt = answerData(result);
    expect(receipt.result).toBe('fail');
    expect(receipt.summary.blocking_checks).toEqual(['consistency:sum_equals']);
    expect(receipt.schema_compliance).toEqual({ ratio: 1, passed: 22, total: 22 });
    const check = verifyReceipt(JSON.stringify(receipt), { agentCard: card }, { request: JSON.stringify(INVOICE) });
    expect(check).toMatchObject({ valid: true });

    const rest = (await (await postJson(running.base, '/verify/schema', JSON.stringify(INVOICE))).json()) as Record<string, unknown>;
    expect(withoutVolatile(receipt)).toEqual(withoutVolatile(rest));
    // The receipt is stored like any other, byte for byte.
    const stored = await fetch(`${running.base}/verifications/${receipt.verification_id}`);
    expect(stored.status).toBe(200);
    expect(JSON.parse(await stored.text())).toEqual(receipt);
  });

  it('a key written twice inside the output fails integrity:unique_keys, as over REST', async () => {
    const body = `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m-dup","role":"ROLE_USER","parts":[{"data":{"task_id":"dup","expected_schema":{"type":"object"},"submitted_output":{"approved":false,"amount":5,"approved":true}},"mediaType":"application/json"}]}}}`;
    const a2a = await rpc(body, { 'A2A-Version': '1.0' });
    const receipt = a2a.result.message.parts[0].data as Record<string, any>;
    expect(receipt.result).toBe('fail');
    expect(receipt.summary.blocking_checks).toContain('integrity:unique_keys');
    const rest = (await (await postJson(running.base, '/verify/schema', '{"task_id":"dup","expected_schema":{"type":"object"},"submitted_output":{"approved":false,"amount":5,"approved":true}}')).json()) as Record<string, any>;
    expect(receipt.output_hash).toBe(rest.output_hash);
    expect(withoutVolatile(receipt)).toEqual(withoutVolatile(rest));
  });

  it('an invalid request is an A2A invalid-params error carrying the service error object, and uses no allowance', async () => {
    const before = await fetch(`${running.base}/verify/schema`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const remaining = before.headers.get('free-allowance-remaining');
    const bad = { task_id: 't', expected_schema: { type: 'object' }, submitted_output: {}, rules: [{ type: 'nope', field: 'x' }] };
    const out = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ data: bad }] } } }), { 'A2A-Version': '1.0' });
    expect(out.error.code).toBe(-32602);
    const detail = (out.error.data as Array<Record<string, any>>).find((d) => d['@type'] === 'urn:json-schema-verifier:error');
    expect(detail).toMatchObject({ code: 'invalid_request', status: 422, charged: false, fields: [{ field: 'rules[0].type' }] });
    // With the SDK client: the call rejects.
    await expect(client.sendMessage({ tenant: '', message: dataMessage(bad), configuration: undefined, metadata: undefined })).rejects.toThrow();
    const after = await fetch(`${running.base}/verify/schema`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(after.headers.get('free-allowance-remaining')).toBe(remaining);
  });

  it('a message without exactly one data part is refused with a fix', async () => {
    const out = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { message: { messageId: 'm2', role: 'ROLE_USER', parts: [{ text: 'verify please' }] } } }), { 'A2A-Version': '1.0' });
    expect(out.error.code).toBe(-32602);
    expect(JSON.stringify(out.error.data)).toContain('must hold exactly one data part');
  });

  it('A2A 0.3 clients: message/send with a kind:data part gets the receipt', async () => {
    const out = await rpc(
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'message/send', params: { message: { kind: 'message', messageId: 'm3', role: 'user', parts: [{ kind: 'data', data: INVOICE }] } } }),
    );
    expect(out.error).toBeUndefined();
    const part = out.result.parts[0];
    expect(part.kind).toBe('data');
    expect(verifyReceipt(JSON.stringify(part.data), { agentCard: card })).toMatchObject({ valid: true });
  });

  it('a data part {"agent_id"} gets the signed trust score', async () => {
    const result = await client.sendMessage({ tenant: '', message: dataMessage({ agent_id: 'seller-a2a' }), configuration: undefined, metadata: undefined });
    const score = answerData(result);
    expect(score.agent_id).toBe('seller-a2a');
    expect(verifyReceipt(JSON.stringify(score), { agentCard: card })).toMatchObject({ valid: true });
  });

  it('shares the free allowance with REST: once it is spent, A2A gets the coded 429 error object', async () => {
    // Spend what is left over REST, then A2A is refused.
    for (;;) {
      const r = await postJson(running.base, '/verify/schema', JSON.stringify(INVOICE));
      if (r.status === 429) break;
      expect(r.status).toBe(200);
    }
    const out = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'SendMessage', params: { message: { messageId: 'm4', role: 'ROLE_USER', parts: [{ data: INVOICE }] } } }), { 'A2A-Version': '1.0' });
    const detail = (out.error.data as Array<Record<string, any>>).find((d) => d['@type'] === 'urn:json-schema-verifier:error');
    expect(detail).toMatchObject({ code: 'free_allowance_exhausted', status: 429, retryable: true, charged: false });
  });

  it('/metrics counts A2A verifications', async () => {
    const metrics = await (await fetch(`${running.base}/metrics`)).text();
    const a2a = metrics
      .split('\n')
      .filter((l) => /^aov_verifications_total\{.*transport="a2a".*\} \d+$/.test(l))
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    // The invoice, the duplicate-key output and the 0.3 message/send call (the score is not a verification).
    expect(a2a).toBe(3);
  });
});
