/**
 * @module Schema typos over every transport of the real app (SQLite store, real keys,
 * loopback): without `strict_schema` a pass with an unknown keyword asks for review
 * first and says how many warnings it carries; with it, REST (both verify routes),
 * batch, MCP (the official SDK client), A2A and the typed client get a 422 naming
 * the keyword, and the free allowance is untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createVerifierClient, VerifierError } from '../src/client/index.js';
import { expectErrorShape, postJson, startApp, tempDir, type Running } from './http-helpers.js';

const TYPO = {
  task_id: 'typo',
  agent_id: 'test-typo',
  expected_schema: { type: 'object', properties: { qty: { type: 'integer', minimun: 1 } } },
  submitted_output: { qty: 0 },
};
const STRICT = { ...TYPO, strict_schema: true };

let running: Running;
let tmp: { dir: string; cleanup(): void };

/** The client's remaining allowance, read from an answer that takes no unit (a 422). */
async function remaining(): Promise<number> {
  const res = await postJson(running.base, '/verify/schema', '{}');
  expect(res.status).toBe(422);
  return Number(res.headers.get('free-allowance-remaining'));
}

function expectNamesMinimun(body: Record<string, any>): void {
  expect(expectErrorShape(body, 'invalid_request', 422)).toBeNull();
  expect(body.charged).toBe(false);
  expect(body.fields).toHaveLength(1);
  expect(body.fields[0].field).toBe('expected_schema.properties.qty.minimun');
  expect(body.fields[0].problem).toContain('"minimun" — did you mean "minimum"?');
}

beforeAll(async () => {
  tmp = tempDir('aov-strict-schema-');
  running = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '10' });
});

afterAll(async () => {
  await running?.close();
  tmp?.cleanup();
});

describe('schema warnings and strict_schema over every transport', () => {
  it('REST without strict_schema: pass, summary.schema_warnings 1, review_schema_warnings first, one unit taken', async () => {
    const before = await remaining();
    const res = await postJson(running.base, '/verify/schema', JSON.stringify(TYPO));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body.result).toBe('pass');
    expect(body.summary).toEqual({ result: 'pass', blocking_checks: [], schema_warnings: 1 });
    expect(body.next_actions[0]).toEqual({ action: 'review_schema_warnings', count: 1 });
    expect(body.next_actions).toContainEqual({ action: 'proceed_to_payment', for: 'buyer', after: 'review_schema_warnings' });
    expect(body.flags[0]).toMatchObject({ check: 'schema:unknown_keyword', field: 'expected_schema.properties.qty.minimun', severity: 'warning' });
    expect(Number(res.headers.get('free-allowance-remaining'))).toBe(before - 1);

    const compact = (await (await postJson(running.base, '/verify/schema', JSON.stringify({ ...TYPO, detail: 'compact' }))).json()) as Record<string, any>;
    expect(compact.summary).toEqual({ result: 'pass', blocking_checks: [], warnings: 1, schema_warnings: 1 });
    expect(compact.next_actions[0]).toEqual({ action: 'review_schema_warnings', count: 1 });
  });

  it('REST with strict_schema: 422 naming minimun on both verify routes, nothing taken', async () => {
    const before = await remaining();
    for (const route of ['/verify/schema', '/verify/deliverable']) {
      const res = await postJson(running.base, route, JSON.stringify(STRICT));
      expect(res.status).toBe(422);
      expectNamesMinimun((await res.json()) as Record<string, any>);
      expect(Number(res.headers.get('free-allowance-remaining'))).toBe(before);
    }
    // Without a typo, strict_schema changes nothing (and is not hashed).
    const clean = { ...TYPO, expected_schema: { type: 'object', properties: { qty: { type: 'integer', minimum: 1 } } } };
    const [a, b] = await Promise.all([clean, { ...clean, strict_schema: true }].map(async (r) => (await postJson(running.base, '/verify/schema', JSON.stringify(r))).json() as Promise<any>));
    expect(a.result).toBe('fail');
    expect(b.request_hash).toBe(a.request_hash);
    expect(b.errors).toEqual(a.errors);
    expect(await remaining()).toBe(before - 2);
  });

  it('batch with strict_schema: one 422 for the whole batch, nothing taken', async () => {
    const before = await remaining();
    const batch = { expected_schema: TYPO.expected_schema, strict_schema: true, items: [{ task_id: 'b1', submitted_output: { qty: 0 } }, { task_id: 'b2', submitted_output: { qty: 3 } }] };
    const res = await postJson(running.base, '/verify/batch', JSON.stringify(batch));
    expect(res.status).toBe(422);
    expectNamesMinimun((await res.json()) as Record<string, any>);
    expect(await remaining()).toBe(before);
    const lax = await postJson(running.base, '/verify/batch', JSON.stringify({ ...batch, strict_schema: false }));
    expect(lax.status).toBe(200);
    const receipts = ((await lax.json()) as { receipts: Array<Record<string, any>> }).receipts;
    expect(receipts.map((r) => r.next_actions[0].action)).toEqual(['review_schema_warnings', 'review_schema_warnings']);
    expect(await remaining()).toBe(before - 2);
  });

  it('MCP verify_schema (SDK client) with strict_schema: an error result naming minimun, nothing taken; without it the same verdict as REST', async () => {
    const client = new Client({ name: 'strict-schema', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${running.base}/mcp`)));
    await client.listTools();
    try {
      const tools = await client.listTools();
      const verify = tools.tools.find((t) => t.name === 'verify_schema');
      expect((verify?.inputSchema.properties as Record<string, unknown>).strict_schema).toMatchObject({ type: ['boolean', 'null'] });
      const before = await remaining();
      const strict = (await client.callTool({ name: 'verify_schema', arguments: STRICT })) as CallToolResult;
      expect(strict.isError).toBe(true);
      expectNamesMinimun(strict.structuredContent as Record<string, any>);
      expect(await remaining()).toBe(before);
      const lax = (await client.callTool({ name: 'verify_schema', arguments: TYPO })) as CallToolResult;
      const receipt = lax.structuredContent as Record<string, any>;
      expect(receipt.result).toBe('pass');
      expect(receipt.summary.schema_warnings).toBe(1);
      expect(receipt.next_actions[0]).toEqual({ action: 'review_schema_warnings', count: 1 });
      expect(await remaining()).toBe(before - 1);
    } finally {
      await client.close();
    }
  });

  it('A2A with strict_schema: invalid params carrying the 422 naming minimun, nothing taken', async () => {
    const before = await remaining();
    const res = await postJson(
      running.base,
      '/a2a',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ data: STRICT }] } } }),
      { 'A2A-Version': '1.0' },
    );
    const out = (await res.json()) as Record<string, any>;
    expect(out.error.code).toBe(-32602);
    const detail = (out.error.data as Array<Record<string, any>>).find((d) => d['@type'] === 'urn:json-schema-verifier:error');
    expect(detail).toMatchObject({ code: 'invalid_request', status: 422, charged: false, fields: [{ field: 'expected_schema.properties.qty.minimun' }] });
    expect(await remaining()).toBe(before);
  });

  it('the typed client sends strict_schema and gets a VerifierError naming minimun', async () => {
    const before = await remaining();
    const client = createVerifierClient({ baseUrl: running.base });
    const err = (await client.verify(STRICT).catch((e: unknown) => e)) as VerifierError;
    expect(err).toBeInstanceOf(VerifierError);
    expect([err.status, err.code]).toEqual([422, 'invalid_request']);
    expect(err.body?.fields?.[0]?.field).toBe('expected_schema.properties.qty.minimun');
    expect(await remaining()).toBe(before);
  });
});
