/**
 * @module REST and MCP go through one admission pipeline, so they can never
 * disagree: every request of a corpus (the fixtures plus generated duplicate
 * keys, unsafe integers, lone surrogates and deep nesting, inside and outside
 * the output, and inside and outside the MCP arguments) gets the same signed
 * response (or the same coded error) over both, apart from verification_id,
 * verified_at and the attestation. Also: an uncompilable schema is refused
 * before the allowance is touched, and one id rule holds on every route.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, projectRoot, startApp, tempDir, type Running } from './http-helpers.js';

let app: Running;
let tmp: { dir: string; cleanup(): void };

beforeAll(async () => {
  tmp = tempDir('aov-parity-');
  app = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '100000' });
});
afterAll(async () => {
  await app.close();
  tmp.cleanup();
});

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

async function rest(body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await postJson(app.base, '/verify/schema', body);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** A tools/call with the arguments written exactly as given, and `extra` members in the envelope. */
async function mcp(args: string, extra = ''): Promise<{ isError: boolean; body: Record<string, unknown> }> {
  const envelope = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"verify_schema"${extra},"arguments":${args}}}`;
  const r = await postJson(app.base, '/mcp', envelope, MCP_HEADERS);
  expect(r.status).toBe(200);
  const rpc = (await r.json()) as { result: { isError?: boolean; structuredContent: Record<string, unknown> } };
  return { isError: rpc.result.isError === true, body: rpc.result.structuredContent };
}

/** What must be identical: everything but the receipt's identity, time and signature. */
function comparable(body: Record<string, unknown>): Record<string, unknown> {
  const { verification_id: _id, verified_at: _at, attestation: _sig, ...rest } = body;
  return rest;
}

const SCHEMA = '{"type":"object","properties":{"approved":{"type":"boolean"},"amount":{"type":"integer"}}}';
const req = (output: string, more = '') => `{"task_id":"parity","agent_id":"seller-parity","expected_schema":${SCHEMA},"submitted_output":${output}${more}}`;
const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

const CORPUS: Array<[string, string]> = [
  ['invoice fixture', readFileSync(path.join(projectRoot, 'test/fixtures/invoice.request.json'), 'utf8')],
  ['passing invoice fixture', readFileSync(path.join(projectRoot, 'test/fixtures/invoice-pass.request.json'), 'utf8')],
  ['the bypass body', req('{"approved": false, "amount": 5, "approved": true}')],
  ['duplicate keys deep in the output', req('{"approved":true,"amount":1,"x":[{"k":1,"k":2}]}')],
  ['duplicate key outside the output', req('{"approved":true}', ',"detail":"full","detail":"compact"')],
  ['unsafe integer in the output', req('{"approved":true,"amount":9007199254740993}')],
  ['unsafe integer by value in the output', req('{"approved":true,"amount":1e16}')],
  ['unsafe integer outside the output', req('{"approved":true}', ',"rules":[{"type":"gte","field":"amount","value":9007199254740993}]')],
  ['lone surrogate in the output', req('{"approved":true,"note":"\\ud800"}')],
  ['lone surrogate outside the output', req('{"approved":true}').replace('"parity"', '"pa\\udc00rity"')],
  ['huge number in the output', req('{"amount":1e400}')],
  ['nesting over the limit in the output', req(`{"deep":${deep(70)}}`)],
  ['nesting within the limit', req(`{"deep":${deep(40)}}`)],
  ['compact detail', req('{"approved":false,"approved":true}', ',"detail":"compact"')],
  ['unknown field', req('{"approved":true}', ',"extra":1')],
  ['__proto__ in the output', req('{"__proto__":{"polluted":true},"approved":true}')],
  [
    'determined repairs: a numeric string, a date variant, an enum by case, an extra field, a default',
    '{"task_id":"parity","expected_schema":{"type":"object","required":["unit"],"properties":{"qty":{"type":"integer"},"on":{"format":"date"},"cur":{"enum":["USD","EUR"]},"unit":{"type":"string","default":"pcs"}},"additionalProperties":false},"submitted_output":{"qty":"12","on":"2024/01/02","cur":"usd","extra":1}}',
  ],
  ['candidate repairs: bounds and a sum', req('{"amount":250,"lines":[0.1,0.2]}', ',"bounds":{"amount":{"max":100}},"rules":[{"type":"sum_equals","field":"lines[]","equals_field":"amount"}],"enforce_rules":true')],
  ['a schema typo', '{"task_id":"parity","expected_schema":{"properties":{"qty":{"type":"integer","minimun":1}}},"submitted_output":{"qty":0}}'],
];

describe('REST and MCP give the same answer', () => {
  it.each(CORPUS)('%s', async (_name, body) => {
    const r = await rest(body);
    const m = await mcp(body);
    expect(m.isError).toBe(r.status !== 200);
    expect(comparable(m.body)).toEqual(comparable(r.body));
  });

  it('repairs are the same over REST and MCP, also once the HTTP thread holds the schema (fast path)', async () => {
    const body = CORPUS.find(([name]) => name.startsWith('determined repairs'))![1];
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(comparable((await rest(body)).body), comparable((await mcp(body)).body));
    const first = answers[0] as { hints: Array<{ repair?: { certainty: string } }>; next_actions: unknown[] };
    expect(first.hints.map((h) => h.repair?.certainty)).toEqual(['determined', 'determined', 'determined', 'determined', 'determined']);
    expect(first.next_actions[0]).toEqual({ action: 'apply_repairs', count: 5 });
    for (const a of answers) expect(a).toEqual(first);
  });

  it('the bypass body fails integrity:unique_keys over MCP whatever the envelope holds outside the arguments', async () => {
    const body = req('{"approved": false, "amount": 5, "approved": true}');
    const r = await rest(body);
    expect(r.body.result).toBe('fail');
    expect((r.body.summary as { blocking_checks: string[] }).blocking_checks).toContain('integrity:unique_keys');
    for (const extra of [',"x":"\\ud800"', ',"x":1e400', `,"x":${deep(600)}`, ',"x":{"a":1,"a":2}']) {
      const m = await mcp(body, extra);
      expect(m.isError).toBe(false);
      expect(m.body.result).toBe('fail');
      expect(m.body.output_hash).toBe(r.body.output_hash);
      expect(comparable(m.body)).toEqual(comparable(r.body));
    }
  });
});

describe('refused before anything is reserved', () => {
  it('an unresolvable $ref is a 422 and Free-Allowance-Remaining is unchanged', async () => {
    const ok = await postJson(app.base, '/verify/schema', req('{"approved":true}'));
    const before = Number(ok.headers.get('free-allowance-remaining'));
    const bad = await postJson(app.base, '/verify/schema', `{"task_id":"t","expected_schema":{"$ref":"https://example.com/nowhere.json"},"submitted_output":1}`);
    expect(bad.status).toBe(422);
    expect(Number(bad.headers.get('free-allowance-remaining'))).toBe(before);
    const m = await mcp(`{"task_id":"t","expected_schema":{"$ref":"#/$defs/missing"},"submitted_output":1}`);
    expect(m.isError).toBe(true);
    expect(m.body.code).toBe('invalid_request');
    const after = await postJson(app.base, '/verify/schema', req('{"approved":true}'));
    expect(Number(after.headers.get('free-allowance-remaining'))).toBe(before - 1);
  });
});

describe('one id rule on every route', () => {
  it('an agent_id of 150 emoji is accepted by verify, /reputation and /score alike', async () => {
    const agent = '😀'.repeat(150);
    const v = await postJson(app.base, '/verify/schema', JSON.stringify({ task_id: 'emoji', agent_id: agent, expected_schema: true, submitted_output: 1 }));
    expect(v.status, await v.clone().text()).toBe(200);
    const rep = await fetch(`${app.base}/reputation/${encodeURIComponent(agent)}`);
    expect(rep.status, await rep.clone().text()).toBe(200);
    expect(((await rep.json()) as { verifications: number }).verifications).toBe(1);
    expect((await fetch(`${app.base}/score/${encodeURIComponent(agent)}`)).status).toBe(200);
  });

  it('201 code points are refused by all three with the same field', async () => {
    const agent = '😀'.repeat(201);
    const v = await postJson(app.base, '/verify/schema', JSON.stringify({ task_id: 'emoji', agent_id: agent, expected_schema: true, submitted_output: 1 }));
    expect(v.status).toBe(422);
    for (const route of ['reputation', 'score']) expect((await fetch(`${app.base}/${route}/${encodeURIComponent(agent)}`)).status).toBe(422);
  });

  it('control characters in task_id or agent_id are a 422 naming the field', async () => {
    for (const [field, value] of [['task_id', 'a\nb'], ['agent_id', 'x\u0000y'], ['agent_id', 'del\u007f']] as const) {
      const body = { task_id: 'ok', agent_id: 'ok', expected_schema: true, submitted_output: 1, [field]: value };
      const r = await rest(JSON.stringify(body));
      expect(r.status).toBe(422);
      expect(r.body.fields).toEqual([expect.objectContaining({ field, problem: expect.stringContaining('control character') })]);
    }
    const rep = await fetch(`${app.base}/reputation/${encodeURIComponent('a\u0001b')}`);
    expect(rep.status).toBe(422);
    expect(((await rep.json()) as { fields: Array<{ field: string }> }).fields[0].field).toBe('agent_id');
  });
});
