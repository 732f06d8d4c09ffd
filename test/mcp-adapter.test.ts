/**
 * @module MCP adapter tests with the official SDK Client over real loopback HTTP,
 * against a Fastify app holding only the MCP routes, a REST verify route sharing
 * the allowance, and an in-memory service (the end-to-end suite uses the real app).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isApiError } from '../src/errors.js';
import { verifyReceipt } from '../src/receipts/index.js';
import { mcpServerCard, mcpToolDescriptors, mcpRoutes, type McpRoutesOptions } from '../src/mcp/index.js';
import { createPaymentEncoding } from '../src/payments/transport.js';
import type { AdmissionPolicy } from '../src/service/pipeline.js';
import type { PaymentRequired } from '@x402/core/types';
import { freePort } from './http-helpers.js';
import { createFakeService, type FakeService } from './mcp-fake-service.js';

const LIMIT = 3;
let app: FastifyInstance;
let base: string;
let service: FakeService;
let clientKeyOverride: string | null = null;

const INVOICE = {
  task_id: 'inv-42',
  agent_id: 'seller-7',
  expected_schema: { type: 'object', required: ['total'], properties: { total: { type: 'number' } } },
  submitted_output: { total: 129.5 },
  rules: [{ type: 'sum_equals', field: 'line_items[].line_total', equals_field: 'total' }],
  enforce_rules: true,
};

async function connect(): Promise<Client> {
  const client = new Client({ name: 'mcp-adapter-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  return client;
}

function structured(result: unknown): Record<string, unknown> {
  return (result as CallToolResult).structuredContent as Record<string, unknown>;
}

function texts(result: unknown): string[] {
  return ((result as CallToolResult).content as Array<{ type: string; text: string }>).map((c) => c.text);
}

async function startMcpApp(extra: Partial<McpRoutesOptions> = {}, policy?: AdmissionPolicy) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const instance = Fastify({ bodyLimit: 64 * 1024 });
  instance.addHook('onRequest', async (_request, reply) => {
    reply.header('X-Request-Id', 'req-1');
  });
  const svc = createFakeService({ limit: LIMIT, baseUrl: url });
  const pipeline = svc.pipeline(policy);
  const clientKey = (request: { ip: string }) => clientKeyOverride ?? request.ip;
  // A REST verify route that goes through the same pipeline (and allowance), like the real one.
  instance.post('/verify/schema', async (request, reply) => {
    try {
      const source = { operation: 'verify', source: JSON.stringify(request.body) } as const;
      const done = await pipeline.handle(source, { transport: 'rest', client: { clientKey: clientKey(request) }, resource: { url } });
      if (!done.admitted) return reply.code(429).send({ code: 'free_allowance_exhausted' });
      if (done.operation !== 'verify') throw new Error('not a receipt');
      return reply.type('application/json').send(done.text);
    } catch (err) {
      if (isApiError(err)) return reply.code(err.status).send(err.toBody());
      throw err;
    }
  });
  await instance.register(mcpRoutes, {
    pipeline,
    baseUrl: url,
    serviceName: 'agent-output-verifier',
    allowedHosts: ['verifier.example.com'],
    clientKey,
    ...extra,
  });
  await instance.listen({ host: '127.0.0.1', port });
  return { app: instance, base: url, service: svc };
}

beforeAll(async () => {
  ({ app, base, service } = await startMcpApp());
});

afterAll(async () => {
  await app.close();
});

beforeEach(() => {
  // Each test gets its own allowance bucket.
  clientKeyOverride = `client-${Math.random()}`;
});

describe('tools/list', () => {
  it('lists both tools with input and output schemas and honest annotations', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['get_verification_record', 'verify_schema']);
    const verify = tools.find((t) => t.name === 'verify_schema')!;
    expect(verify.inputSchema.required).toEqual(['task_id', 'expected_schema', 'submitted_output']);
    expect(Object.keys(verify.inputSchema.properties ?? {})).toEqual([
      'task_id', 'agent_id', 'expected_schema', 'submitted_output', 'strict_content_check', 'bounds', 'rules', 'enforce_rules', 'detail', 'strict_schema',
    ]);
    expect(verify.outputSchema?.anyOf).toHaveLength(3);
    expect(verify.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
    expect(verify.description).toContain('sum_equals');
    const record = tools.find((t) => t.name === 'get_verification_record')!;
    expect(record.inputSchema.required).toEqual(['agent_id']);
    expect(record.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
    const info = client.getServerVersion();
    expect(info?.name).toBe('agent-output-verifier');
    await client.close();
  });
});

describe('verify_schema', () => {
  it('returns the signed receipt as structuredContent and as exact JSON text', async () => {
    const client = await connect();
    await client.listTools(); // makes the SDK client validate results against outputSchema
    const result = await client.callTool({ name: 'verify_schema', arguments: INVOICE });
    expect(result.isError).toBeFalsy();
    const receipt = structured(result);
    expect(receipt.task_id).toBe('inv-42');
    const [summary, json] = texts(result);
    expect(summary).toContain('result: pass');
    expect(summary).toContain(`verification_id: ${String(receipt.verification_id)}`);
    expect(summary).toContain('blocking checks: none');
    expect(JSON.parse(json)).toEqual(receipt);
    expect(verifyReceipt(receipt, { publicKey: service.publicKey }, { request: INVOICE })).toEqual({ valid: true, keyVersion: 'test-key-1' });
    expect(verifyReceipt(JSON.parse(json), { publicKey: service.publicKey })).toMatchObject({ valid: true });
    await client.close();
  });

  it('turns a service validation error into an isError result that survives client outputSchema validation (#1943)', async () => {
    const client = await connect();
    await client.listTools();
    const bad = { ...INVOICE, rules: [{ type: 'sum_equal', field: 'total', equals: 1 }] };
    const result = await client.callTool({ name: 'verify_schema', arguments: bad });
    expect(result.isError).toBe(true);
    const body = structured(result);
    expect(body).toMatchObject({ code: 'invalid_request', status: 422, charged: false, retryable: false });
    expect(body.fields).toEqual([expect.objectContaining({ field: 'rules[0].type', fix: expect.stringContaining('sum_equals') })]);
    expect(JSON.parse(texts(result)[0])).toEqual(body);
    // Nothing was spent on an invalid request.
    expect((await service.peekAllowance({ clientKey: clientKeyOverride! })).used).toBe(0);
    await client.close();
  });

  it('rejects unknown top-level fields instead of stripping them', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'verify_schema', arguments: { ...INVOICE, colour: 'blue' } });
    expect(result.isError).toBe(true);
    expect(structured(result)).toMatchObject({ code: 'invalid_request', fields: [expect.objectContaining({ field: 'colour' })] });
    await client.close();
  });

  it('reports an internal fault as internal_error without leaking it, and refunds the allowance', async () => {
    const client = await connect();
    await client.listTools();
    const refundsBefore = service.refunds;
    service.failNextVerify = true;
    const result = await client.callTool({ name: 'verify_schema', arguments: INVOICE });
    expect(result.isError).toBe(true);
    expect(structured(result)).toMatchObject({ code: 'internal_error', status: 500, retryable: true, charged: false });
    expect(JSON.stringify(result)).not.toContain('/var/secret');
    expect(service.refunds).toBe(refundsBefore + 1);
    expect((await service.peekAllowance({ clientKey: clientKeyOverride! })).used).toBe(0);
    await client.close();
  });

  it('shares the free allowance with REST: two REST calls, then the second MCP call is refused', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${base}/verify/schema`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(INVOICE) });
      expect(res.status).toBe(200);
    }
    const client = await connect();
    await client.listTools();
    const third = await client.callTool({ name: 'verify_schema', arguments: INVOICE });
    expect(third.isError).toBeFalsy();
    expect(third._meta?.['agent-output-verifier/free-allowance']).toEqual({ limit: 3, remaining: 0, resets_at: '2099-01-01T00:00:00Z' });
    const fourth = await client.callTool({ name: 'verify_schema', arguments: INVOICE });
    expect(fourth.isError).toBe(true);
    expect(structured(fourth)).toMatchObject({ code: 'free_allowance_exhausted', status: 429, retryable: true, retry_after: 60 });
    expect(String(structured(fourth).message)).toContain('2099-01-01T00:00:00Z');
    await client.close();
  });
});

describe('get_verification_record', () => {
  it('returns a signed score reflecting MCP verifications, without spending allowance', async () => {
    const client = await connect();
    await client.listTools();
    const agent = `seller-${Math.random()}`;
    await client.callTool({ name: 'verify_schema', arguments: { ...INVOICE, agent_id: agent } });
    const result = await client.callTool({ name: 'get_verification_record', arguments: { agent_id: agent } });
    expect(result.isError).toBeFalsy();
    const score = structured(result);
    expect(score).toMatchObject({ agent_id: agent, score: 10, inputs: { verifications: 1 } });
    expect(verifyReceipt(score, { publicKey: service.publicKey })).toMatchObject({ valid: true });
    expect(texts(result)[0]).toContain('trust score 10');
    expect((await service.peekAllowance({ clientKey: clientKeyOverride! })).used).toBe(1);
    await client.close();
  });

  it('refuses missing or extra arguments with coded errors', async () => {
    const client = await connect();
    await client.listTools();
    const missing = await client.callTool({ name: 'get_verification_record', arguments: {} });
    expect(structured(missing)).toMatchObject({ code: 'invalid_request', fields: [expect.objectContaining({ field: 'agent_id' })] });
    const extra = await client.callTool({ name: 'get_verification_record', arguments: { agent_id: 'a', limit: 3 } });
    expect(structured(extra)).toMatchObject({ code: 'invalid_request', fields: [expect.objectContaining({ field: 'limit' })] });
    const unknownTool = await client.callTool({ name: 'delete_everything', arguments: {} });
    expect(unknownTool.isError).toBe(true);
    expect(structured(unknownTool)).toMatchObject({ code: 'not_found' });
    await client.close();
  });
});

describe('HTTP surface', () => {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

  it('answers GET and DELETE with 405 and a JSON-RPC error', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${base}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST, OPTIONS');
      expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
    }
  });

  it('serves initialize statelessly as plain JSON', async () => {
    const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('x-request-id')).toBe('req-1'); // headers set by app hooks survive the hijack
    const body = (await res.json()) as { result: { serverInfo: { name: string }; capabilities: Record<string, unknown> } };
    expect(body.result.serverInfo.name).toBe('agent-output-verifier');
    expect(body.result.capabilities).toEqual({ tools: {} });
  });

  it('refuses a foreign Host and a foreign Origin with 403 (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const send = (hostHeader: string, origin?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          `${base}/mcp`,
          { method: 'POST', headers: { ...headers, host: hostHeader, ...(origin ? { origin } : {}) } },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(init));
      });
    const evil = await send('evil.example:80');
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    expect((await send('127.0.0.1:1', 'http://evil.example')).status).toBe(403);
    expect((await send('127.0.0.1', 'null')).status).toBe(403);
    // Allowed names pass whatever the port: configured, loopback, IPv6 loopback.
    expect((await send('VERIFIER.example.com:443')).status).toBe(200);
    expect((await send('localhost:9', 'http://localhost:6274')).status).toBe(200);
    expect((await send('[::1]:8080')).status).toBe(200);
  });

  it('answers a CORS preflight and exposes the MCP headers', async () => {
    const origin = 'http://localhost:6274';
    const pre = await fetch(`${base}/mcp`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,mcp-protocol-version' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(origin);
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
    const allowHeaders = pre.headers.get('access-control-allow-headers')!.toLowerCase();
    for (const h of ['content-type', 'mcp-protocol-version', 'mcp-session-id', 'authorization', 'payment-signature']) expect(allowHeaders).toContain(h);
    expect(pre.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
    const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, origin }, body: JSON.stringify(init) });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    expect(res.headers.get('access-control-expose-headers')).toContain('Mcp-Protocol-Version');
  });

  it('answers invalid JSON, a wrong media type and an oversized body with JSON-RPC errors', async () => {
    const bad = await fetch(`${base}/mcp`, { method: 'POST', headers, body: '{"jsonrpc":' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: -32700 } });
    const text = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: 'hi' });
    expect(text.status).toBe(415);
    const big = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify({ ...init, pad: 'x'.repeat(70 * 1024) }) });
    expect(big.status).toBe(413);
    const bigBody = (await big.json()) as { error: { message: string; data: { code: string } } };
    expect(bigBody.error.message).toContain('65536 bytes');
    expect(bigBody.error.data.code).toBe('payload_too_large');
  });

  it('hands duplicate keys inside submitted_output to the service as integrity findings', async () => {
    const args = JSON.stringify({ task_id: 'dup', expected_schema: true }).slice(0, -1) + ',"submitted_output":{"total":1,"total":2}}';
    const body = `{"jsonrpc":"2.0","id":"d1","method":"tools/call","params":{"name":"verify_schema","arguments":${args}}}`;
    const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': '2025-06-18' }, body });
    expect(res.status).toBe(200);
    expect(service.lastParsed?.request.task_id).toBe('dup');
    expect(service.lastParsed?.request.submitted_output).toEqual({ total: 2 });
    expect(service.lastParsed?.integrity.duplicateKeys).toEqual([{ path: '$', key: 'total' }]);
    // Outside the output a duplicate is a request error, as over REST.
    const bad = body.replace('"task_id":"dup"', '"task_id":"dup","task_id":"dup2"');
    const rpc = (await (await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': '2025-06-18' }, body: bad })).json()) as {
      result: CallToolResult;
    };
    expect(rpc.result.isError).toBe(true);
    expect(rpc.result.structuredContent).toMatchObject({ code: 'invalid_request', fields: [{ field: 'task_id' }] });
  });

  it('keeps __proto__ an ordinary key of the arguments', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'verify_schema', arguments: { ...INVOICE, submitted_output: JSON.parse('{"__proto__":{"polluted":1},"total":1}') } },
    });
    const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': '2025-06-18' }, body });
    expect(res.status).toBe(200);
    const rpc = (await res.json()) as { result: CallToolResult };
    expect(rpc.result.isError).toBeFalsy();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // As a top-level argument it is an unknown field, as over REST, not silently dropped.
    const top = body.replace('"arguments":{', '"arguments":{"__proto__":{"x":1},');
    const res2 = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': '2025-06-18' }, body: top });
    const rpc2 = (await res2.json()) as { result: CallToolResult };
    expect(rpc2.result.structuredContent).toMatchObject({ code: 'invalid_request', fields: [{ field: '__proto__' }] });
  });
});

describe('discovery', () => {
  it('serves the server card at /mcp/server-card(.json) and exports it', async () => {
    for (const path of ['/mcp/server-card', '/mcp/server-card.json']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      const card = (await res.json()) as Record<string, any>;
      expect(card.transport).toEqual({ type: 'streamable-http', url: `${base}/mcp`, endpoint: '/mcp' });
      expect(card.tools.map((t: { name: string }) => t.name)).toEqual(['verify_schema', 'get_verification_record']);
      expect(card.tools[0].inputSchema.properties.rules.items.properties.type.enum).toContain('sum_equals');
    }
    const card = mcpServerCard({ baseUrl: 'https://v.example.com/', serviceName: 'svc', version: '9.9.9' });
    expect(card).toMatchObject({ name: 'svc', version: '9.9.9', remotes: [{ type: 'streamable-http', url: 'https://v.example.com/mcp' }] });
    // The card names the versions the SDK's server negotiates, without loading the SDK to serve it.
    expect(card.protocolVersions).toEqual([...SUPPORTED_PROTOCOL_VERSIONS]);
  });

  it('describes the tools for the agent card skills', () => {
    const d = mcpToolDescriptors();
    expect(d.map((t) => [t.name, typeof t.title, typeof t.description, t.inputSchema.type])).toEqual([
      ['verify_schema', 'string', 'string', 'object'],
      ['get_verification_record', 'string', 'string', 'object'],
    ]);
    d[0].inputSchema.required = [];
    expect(mcpToolDescriptors()[0].inputSchema.required).toHaveLength(3); // copies, not shared state
  });
});

describe('admission seam (as the x402 adapter uses it)', () => {
  const PAYMENT_REQUIRED: PaymentRequired = {
    x402Version: 2,
    error: 'payment required',
    resource: { url: 'x', description: 'MCP tool', mimeType: 'application/json' },
    accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '20000', asset: '0xusdc', payTo: '0xpay', maxTimeoutSeconds: 60, extra: {} }],
  };
  const calls: string[] = [];
  const allowance = { allowed: false, limit: 3, used: 3, remaining: 0, resetsAt: '2099-01-01T00:00:00Z', retryAfter: 60 };
  const refused = { admitted: false, kind: 'refused', code: 'payment_required', message: 'pay', allowance, paymentRequired: PAYMENT_REQUIRED } as const;
  const policy: AdmissionPolicy = {
    probe: async () => null,
    admitBatch: async () => refused,
    async admit(prepared, ctx) {
      calls.push(`admit:${prepared.operation}:${ctx.client.clientKey.length > 0}`);
      const payment = ctx.payment?.present ? (ctx.payment.payload as { nonce?: string }) : undefined;
      if (!payment) return refused;
      return {
        admitted: true,
        paid: true,
        async record(p, signer) {
          const result = await signer.sign(p);
          calls.push('record');
          return result;
        },
        async complete(result) {
          if (payment.nonce === 'settle-fails') {
            calls.push('void');
            return { admitted: false, kind: 'refused', code: 'settlement_failed', message: 'settlement failed', allowance, paymentRequired: PAYMENT_REQUIRED, settlement: null };
          }
          calls.push('complete');
          const id = result.operation === 'verify' ? result.receipt.verificationId : null;
          return { settlement: { success: true, transaction: '0xabc', network: 'eip155:8453', payer: id ?? '' } };
        },
        async release() {
          calls.push('release');
        },
      };
    },
  };
  let paid: Awaited<ReturnType<typeof startMcpApp>>;

  beforeAll(async () => {
    paid = await startMcpApp({ payments: createPaymentEncoding() }, policy);
  });
  afterAll(async () => {
    await paid.app.close();
  });

  async function paidClient(): Promise<Client> {
    const client = new Client({ name: 'payer', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${paid.base}/mcp`)));
    await client.listTools();
    return client;
  }

  it('a refusal reaches a validating client intact (PaymentRequired in structuredContent, _meta kept)', async () => {
    const client = await paidClient();
    const result = await client.callTool({ name: 'verify_schema', arguments: INVOICE });
    expect(result.isError).toBe(true);
    expect(structured(result)).toEqual(PAYMENT_REQUIRED);
    expect(JSON.parse(texts(result)[0])).toEqual(PAYMENT_REQUIRED);
    expect(result._meta).toMatchObject({ code: 'payment_required', charged: false, free_trial: { available: false, remaining_calls_today: 0 } });
    const score = await client.callTool({ name: 'get_verification_record', arguments: { agent_id: 'a' } });
    expect(structured(score)).toEqual(PAYMENT_REQUIRED);
    await client.close();
  });

  it('a paid call runs, completes with the verification id and returns the settlement in result._meta', async () => {
    const client = await paidClient();
    calls.length = 0;
    const result = await client.callTool({ name: 'verify_schema', arguments: INVOICE, _meta: { 'x402/payment': { nonce: 'n1' } } });
    expect(result.isError).toBeFalsy();
    const receipt = structured(result);
    expect(result._meta?.['x402/payment-response']).toEqual({ success: true, transaction: '0xabc', network: 'eip155:8453', payer: receipt.verification_id });
    expect(calls).toEqual(['admit:verify:true', 'record', 'complete']);
    await client.close();
  });

  it('validation comes before admission; failed work is released; a failed settlement asks for payment again', async () => {
    const client = await paidClient();
    calls.length = 0;
    const invalid = await client.callTool({ name: 'verify_schema', arguments: { task_id: 1 }, _meta: { 'x402/payment': { nonce: 'n2' } } });
    expect(structured(invalid)).toMatchObject({ code: 'invalid_request' });
    expect(calls).toEqual([]);
    paid.service.failNextVerify = true;
    const failed = await client.callTool({ name: 'verify_schema', arguments: INVOICE, _meta: { 'x402/payment': { nonce: 'n3' } } });
    expect(structured(failed)).toMatchObject({ code: 'internal_error', charged: false });
    expect(calls).toEqual(['admit:verify:true', 'release']);
    const unsettled = await client.callTool({ name: 'verify_schema', arguments: INVOICE, _meta: { 'x402/payment': { nonce: 'settle-fails' } } });
    expect(unsettled.isError).toBe(true);
    expect(structured(unsettled)).toEqual(PAYMENT_REQUIRED);
    expect(unsettled._meta).toMatchObject({ code: 'settlement_failed', charged: false });
    await client.close();
  });
});
