/**
 * @module End-to-end MCP tests against the real app (createApp: SQLite store, real
 * key ring, the core verifier) on a loopback socket, with the official SDK Client:
 * the MCP result equals the REST result for the same request, signatures verify
 * with the agent card's key, the allowance is shared, records are counted.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { verifyReceipt } from '../src/receipts/index.js';
import { postJson, projectRoot, startApp, tempDir, type Running } from './http-helpers.js';

/** The invoice example (docs/protocol.md#worked-example), whose line items do not add up. */
const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice.request.json'), 'utf8')) as Record<string, unknown>;
const VOLATILE = ['verification_id', 'verified_at', 'verify', 'attestation'];

function withoutVolatile(r: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(r).filter(([k]) => !VOLATILE.includes(k)));
}

let running: Running;
let tmp: { dir: string; cleanup(): void };
let agentCard: unknown;

async function connect(): Promise<Client> {
  const client = new Client({ name: 'mcp-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${running.base}/mcp`)));
  await client.listTools(); // caches outputSchema validators, as real clients do
  return client;
}

const sc = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, any>;
const text = (r: unknown, i: number) => ((r as CallToolResult).content as Array<{ text: string }>)[i].text;

beforeAll(async () => {
  tmp = tempDir('aov-mcp-e2e-');
  running = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '7' });
  agentCard = await (await fetch(`${running.base}/.well-known/agent-card.json`)).json();
});

afterAll(async () => {
  await running?.close();
  tmp?.cleanup();
});

describe('MCP against the real app', () => {
  // Allowance N = 7 for this file's single client (127.0.0.1), spent in this order:
  // REST 1 + MCP 2 (the §8 comparison), MCP 3 (compact), MCP 4 (score), REST 5 + MCP 6
  // (duplicate keys), REST 7, then MCP 8 is refused.
  it('verify_schema returns the same verdict, counts and hashes as REST, signed with the published key', async () => {
    const rest = await postJson(running.base, '/verify/schema', JSON.stringify(INVOICE));
    expect(rest.status).toBe(200);
    const restBody = (await rest.json()) as Record<string, any>;

    const client = await connect();
    const result = await client.callTool({ name: 'verify_schema', arguments: INVOICE });
    expect(result.isError).toBeFalsy();
    const receipt = sc(result);

    expect(receipt.result).toBe('fail');
    expect(receipt.summary.blocking_checks).toEqual(['consistency:sum_equals']);
    expect(receipt.schema_compliance).toEqual({ ratio: 1, passed: 22, total: 22 });
    for (const h of ['output_hash', 'schema_hash', 'rules_hash', 'request_hash']) expect(receipt[h]).toBe(restBody[h]);
    expect(withoutVolatile(receipt)).toEqual(withoutVolatile(restBody));
    expect(Object.keys(receipt)).toEqual(Object.keys(restBody));
    expect(receipt.verification_id).not.toBe(restBody.verification_id);

    expect(verifyReceipt(receipt, { agentCard }, { request: INVOICE })).toMatchObject({ valid: true });
    // The second text item is the exact stored receipt text.
    const stored = await (await fetch(`${running.base}/verifications/${receipt.verification_id}`)).text();
    expect(text(result, 1)).toBe(stored);
    expect(text(result, 0)).toContain('result: fail');
    expect(text(result, 0)).toContain('blocking checks: consistency:sum_equals');
    expect(text(result, 0)).toContain('schema 22/22 (1)');

    // The compact form also satisfies the declared outputSchema (the client validates it).
    const compact = await client.callTool({ name: 'verify_schema', arguments: { ...INVOICE, detail: 'compact' } });
    expect(compact.isError).toBeFalsy();
    expect(sc(compact).request_hash).toBeUndefined();
    expect(sc(compact).output_hash).toBe(restBody.output_hash);
    expect(text(compact, 0)).toMatch(/^result: fail; blocking checks: consistency:sum_equals; verification_id: /);
    expect(verifyReceipt(sc(compact), { agentCard })).toMatchObject({ valid: true });
    await client.close();
  });

  it('an invalid rule type is an isError result with the coded 422 body and fields[].fix', async () => {
    const client = await connect();
    const bad = { ...INVOICE, rules: [{ type: 'sums_equal', field: 'line_items[].line_total', equals_field: 'total' }] };
    const result = await client.callTool({ name: 'verify_schema', arguments: bad });
    expect(result.isError).toBe(true);
    const body = sc(result);
    expect(body).toMatchObject({ code: 'invalid_request', status: 422, charged: false });
    expect(body.fields.length).toBeGreaterThan(0);
    expect(body.fields[0].field).toContain('rules[0]');
    expect(typeof body.fields[0].fix).toBe('string');
    expect(JSON.parse(text(result, 0))).toEqual(body);

    // Same validator as REST: the same fields.
    const rest = await postJson(running.base, '/verify/schema', JSON.stringify(bad));
    expect(rest.status).toBe(422);
    expect(((await rest.json()) as { fields: unknown }).fields).toEqual(body.fields);
    await client.close();
  });

  it('get_verification_record returns a signed score that counts the MCP verification', async () => {
    const client = await connect();
    const before = sc(await client.callTool({ name: 'get_verification_record', arguments: { agent_id: 'seller-mcp-e2e' } }));
    await client.callTool({ name: 'verify_schema', arguments: { ...INVOICE, agent_id: 'seller-mcp-e2e' } });
    const after = await client.callTool({ name: 'get_verification_record', arguments: { agent_id: 'seller-mcp-e2e' } });
    expect(after.isError).toBeFalsy();
    const score = sc(after);
    expect(score.agent_id).toBe('seller-mcp-e2e');
    expect(JSON.stringify(score.inputs)).not.toBe(JSON.stringify(before.inputs));
    expect(verifyReceipt(score, { agentCard })).toMatchObject({ valid: true });
    const rest = (await (await fetch(`${running.base}/score/seller-mcp-e2e`)).json()) as Record<string, unknown>;
    expect(rest.score).toBe(score.score);
    const rep = (await (await fetch(`${running.base}/reputation/seller-mcp-e2e`)).json()) as { verifications: number };
    expect(rep.verifications).toBe(1);
    await client.close();
  });

  it('judges a duplicate key inside submitted_output like REST does (integrity:unique_keys)', async () => {
    const requestText =
      '{"task_id":"dup-1","expected_schema":{"type":"object"},"submitted_output":{"total":135,"total":129.5,"__proto__":{"x":1}}}';
    const rest = (await (await postJson(running.base, '/verify/schema', requestText)).json()) as Record<string, any>;
    const rpc = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"verify_schema","arguments":${requestText}}}`;
    const res = await fetch(`${running.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: rpc,
    });
    expect(res.status).toBe(200);
    const receipt = ((await res.json()) as { result: CallToolResult }).result.structuredContent as Record<string, any>;
    expect(rest.result).toBe('fail');
    expect(rest.summary.blocking_checks).toContain('integrity:unique_keys');
    expect(withoutVolatile(receipt)).toEqual(withoutVolatile(rest));
    expect(verifyReceipt(receipt, { agentCard }, { request: requestText })).toMatchObject({ valid: true });
  });

  it('shares the free allowance with REST: the call after the limit is refused with free_allowance_exhausted', async () => {
    // Used so far: 6 of 7.
    const rest = await postJson(running.base, '/verify/schema', JSON.stringify(INVOICE));
    expect(rest.status).toBe(200);
    expect(rest.headers.get('free-allowance-remaining')).toBe('0');
    const client = await connect();
    const refused = await client.callTool({ name: 'verify_schema', arguments: INVOICE });
    expect(refused.isError).toBe(true);
    expect(sc(refused)).toMatchObject({ code: 'free_allowance_exhausted', status: 429, retryable: true, charged: false });
    expect(sc(refused).retry_after).toBeGreaterThan(0);
    // REST sees the same exhausted bucket.
    expect((await postJson(running.base, '/verify/schema', JSON.stringify(INVOICE))).status).toBe(429);
    // The score tool is not part of the verification allowance.
    const score = await client.callTool({ name: 'get_verification_record', arguments: { agent_id: 'seller-mcp-e2e' } });
    expect(score.isError).toBeFalsy();
    await client.close();
  });

  it('refuses a foreign Host, answers GET/DELETE with 405, and serves both server cards', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${running.base}/mcp`, {
        method: 'POST',
        headers: { host: 'rebind.attacker.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    });
    expect(status).toBe(403);
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${running.base}/mcp`, { method });
      expect(res.status).toBe(405);
      expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
    }
    const wellKnown = (await (await fetch(`${running.base}/.well-known/mcp/server-card.json`)).json()) as Record<string, any>;
    const local = (await (await fetch(`${running.base}/mcp/server-card`)).json()) as Record<string, any>;
    expect(local).toEqual(wellKnown);
    expect(wellKnown.transport.url).toBe(`${running.base}/mcp`);
  });
});

describe('MCP allowance under concurrency (real store)', () => {
  it('with N = 3, exactly 3 of 8 concurrent verify_schema calls succeed; the refused ones are coded', async () => {
    const t = tempDir('aov-mcp-conc-');
    const r = await startApp(t.dir, { FREE_ALLOWANCE_PER_DAY: '3' });
    try {
      const clients = await Promise.all(
        Array.from({ length: 8 }, async () => {
          const c = new Client({ name: 'conc', version: '1' });
          await c.connect(new StreamableHTTPClientTransport(new URL(`${r.base}/mcp`)));
          return c;
        }),
      );
      const results = await Promise.all(clients.map((c) => c.callTool({ name: 'verify_schema', arguments: INVOICE })));
      const ok = results.filter((x) => !x.isError);
      expect(ok).toHaveLength(3);
      expect(results.filter((x) => x.isError).map((x) => sc(x).code)).toEqual(Array(5).fill('free_allowance_exhausted'));
      const remaining = ok.map((x) => (x._meta?.['agent-output-verifier/free-allowance'] as { remaining: number }).remaining).sort();
      expect(remaining).toEqual([0, 1, 2]);
      await Promise.all(clients.map((c) => c.close()));
    } finally {
      await r.close();
      t.cleanup();
    }
  });
});
