/**
 * @module x402 end to end over the real app (createApp: SQLite, key ring, core
 * verifier) on a loopback socket: the facilitator is the built-in one served over
 * HTTP on the in-memory Base chain; the buyer pays with @x402/fetch and, over MCP,
 * with the official MCP client and `_meta["x402/payment"]`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { verifyReceipt } from '../src/receipts/index.js';
import { BASE_USDC } from '../src/payments/config.js';
import { createMemoryEvmChain } from './memory-chain.js';
import { countUnitWithReceipt, freePort, projectRoot, tempDir } from './http-helpers.js';
import { createPaymentFixture, PAY_TO_EVM, PAY_TO_SOLANA, type PaymentFixture } from './payments-helpers.js';

const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as Record<string, unknown>;

function request(taskId: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...INVOICE, task_id: taskId, agent_id: 'paying-agent', ...extra });
}

interface Running {
  base: string;
  handle: App;
  close(): Promise<void>;
}

async function start(dataDir: string, env: Record<string, string>, payments?: NonNullable<Parameters<typeof createApp>[1]>['payments']): Promise<Running> {
  const port = await freePort();
  const config = loadConfig({ DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'silent', ...env });
  const handle = await createApp(config, { logger: false, payments });
  await handle.app.listen({ host: '127.0.0.1', port });
  return { base: `http://127.0.0.1:${port}`, handle, close: () => handle.close() };
}

let f: PaymentFixture;
let app: Running;
let tmp: ReturnType<typeof tempDir>;
let paidFetch: typeof fetch;
const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  f = await createPaymentFixture();
  tmp = tempDir('aov-pay-rest-');
  app = await start(tmp.dir, {
    FREE_ALLOWANCE_PER_DAY: '2',
    X402_ENABLED: 'true',
    X402_FACILITATOR_URL: f.facilitatorUrl,
    X402_PAY_TO_EVM: PAY_TO_EVM,
    X402_PAY_TO_SOLANA: PAY_TO_SOLANA,
    X402_FREE_MAX_BODY_BYTES: '4096',
  });
  paidFetch = wrapFetchWithPayment(fetch, f.buyerClient);
});
afterAll(async () => {
  await app?.close();
  await f?.close();
  tmp?.cleanup();
});

async function exhaustAllowance(): Promise<void> {
  for (;;) {
    const r = await fetch(`${app.base}/verify/schema`, { method: 'POST', headers: json, body: request('free') });
    await r.text();
    if (r.status !== 200) return;
  }
}

describe('REST', () => {
  it('POST /verify/batch with payments on is admitted like single calls: within the free allowance it is free, no 501', async () => {
    const body = JSON.stringify({ expected_schema: {}, items: [{ task_id: 'batch-1', submitted_output: 1 }] });
    const r = await fetch(`${app.base}/verify/batch`, { method: 'POST', headers: json, body });
    expect(r.status).toBe(200);
    expect(r.headers.get('payment-response')).toBeNull();
    expect(((await r.json()) as { summary: unknown }).summary).toEqual({ total: 1, passed: 1, failed: 0 });
    // The free unit it took is given back here, so the tests below see the allowance they expect.
    await app.handle.service.refundAllowance({ clientKey: '127.0.0.1' });
  });

  it('answers the discovery probe (POST without body) with 402 while free calls remain', async () => {
    const r = await fetch(`${app.base}/verify/schema`, { method: 'POST' });
    expect(r.status).toBe(402);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(pr.x402Version).toBe(2);
    const body = (await r.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'payment_required', available: true, remaining_calls_today: 2 });
  });

  it('sends bodies over the free size limit to payment', async () => {
    const big = request('big', { submitted_output: { ...(INVOICE.submitted_output as object), note: 'x'.repeat(5000) } });
    const r = await fetch(`${app.base}/verify/schema`, { method: 'POST', headers: json, body: big });
    expect(r.status).toBe(402);
    expect(((await r.json()) as { code: string }).code).toBe('payment_required');
    // …and it goes through when paid.
    const paid = await paidFetch(`${app.base}/verify/schema`, { method: 'POST', headers: json, body: big });
    expect(paid.status).toBe(200);
  });

  it('after the allowance: 402 with PAYMENT-REQUIRED (v2, 20000, Base and Solana) and the free-trial state', async () => {
    await exhaustAllowance();
    const r = await fetch(`${app.base}/verify/schema`, { method: 'POST', headers: json, body: request('unpaid') });
    expect(r.status).toBe(402);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(pr.x402Version).toBe(2);
    expect(pr.resource.url).toBe(`${app.base}/verify/schema`);
    expect(pr.accepts.map((a) => [a.network, a.amount])).toEqual([
      ['eip155:8453', '20000'],
      ['solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', '20000'],
    ]);
    expect((pr.extensions?.bazaar as { info: { input: { method: string } } }).info.input.method).toBe('POST');
    const body = (await r.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'free_trial_exhausted', available: false, remaining_calls_today: 0, charged: false });
    expect(typeof body.resets_at).toBe('string');
    expect(r.headers.get('free-allowance-remaining')).toBe('0');
  });

  it('a buyer paying with @x402/fetch gets the signed receipt, PAYMENT-RESPONSE, and pays exactly 20000', async () => {
    await exhaustAllowance();
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const r = await paidFetch(`${app.base}/verify/schema`, { method: 'POST', headers: json, body: request('paid-1') });
    expect(r.status).toBe(200);
    const text = await r.text();
    const receipt = JSON.parse(text) as { verification_id: string; result: string };
    const card = await (await fetch(`${app.base}/.well-known/agent-card.json`)).json();
    expect(verifyReceipt(text, { agentCard: card }).valid).toBe(true);
    const settlement = decodePaymentResponseHeader(r.headers.get('payment-response')!);
    expect(settlement).toMatchObject({ success: true, network: 'eip155:8453' });
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
    expect(f.chain.balanceOf(BASE_USDC, PAY_TO_EVM)).toBeGreaterThanOrEqual(20000n);
    const stored = await fetch(`${app.base}/verifications/${receipt.verification_id}`);
    expect(await stored.text()).toBe(text);
    const events = await app.handle.store.paymentEvents({ verificationId: receipt.verification_id });
    expect(events.map((e) => [e.kind, e.detail])).toEqual([['settled', settlement.transaction]]);
  });

  it('a fail verdict is charged like a pass', async () => {
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const failing = request('paid-fail', { submitted_output: { invoice_id: 42 } });
    const r = await paidFetch(`${app.base}/verify/schema`, { method: 'POST', headers: json, body: failing });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { result: string }).result).toBe('fail');
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
  });

  it('the same PAYMENT-SIGNATURE sent 50 times concurrently buys exactly one verification', async () => {
    await exhaustAllowance();
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const unpaid = await fetch(`${app.base}/verify/schema`, { method: 'POST', headers: json, body: '' });
    const pr: PaymentRequired = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    const header = encodePaymentSignatureHeader(await f.buyerClient.createPaymentPayload(pr));
    const agent = `replay-${Date.now()}`;
    const body = request('replay', { agent_id: agent });
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => fetch(`${app.base}/verify/schema`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': header }, body })),
    );
    // One payment, one request: every copy gets the one receipt it bought (200), or is told it is under way (202).
    const texts = await Promise.all(responses.map((r) => r.text()));
    const paid = texts.filter((_, i) => responses[i]!.status === 200);
    expect(paid.length).toBeGreaterThanOrEqual(1);
    expect(new Set(paid).size).toBe(1);
    for (const [i, r] of responses.entries()) {
      if (r.status === 200) continue;
      expect(r.status).toBe(202);
      const b = JSON.parse(texts[i]!) as Record<string, unknown>;
      expect(b.code).toBe('settlement_pending');
      expect(b.result).toBeUndefined();
      expect(b.attestation).toBeUndefined();
    }
    // The same payment with another body: refused, nothing charged, no receipt.
    const other = await fetch(`${app.base}/verify/schema`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': header }, body: request('replay-other', { agent_id: agent }) });
    expect(other.status).toBe(402);
    expect(other.headers.get('payment-response')).toBeNull();
    const otherBody = (await other.json()) as Record<string, unknown>;
    expect(otherBody).toMatchObject({ code: 'payment_invalid', charged: false });
    expect(String(otherBody.message)).toMatch(/used for another request/);
    expect(otherBody.verification_id).toBeUndefined();
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
    const rep = (await (await fetch(`${app.base}/reputation/${agent}`)).json()) as { verifications: number };
    expect(rep.verifications).toBe(1); // the work ran once
  });

  it('an invalid request carrying a payment is a 422: nothing settled, balance unchanged, payment still usable', async () => {
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const transfers = f.chain.settledTransfers();
    const unpaid = await fetch(`${app.base}/verify/schema`, { method: 'POST' });
    const pr = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    const header = encodePaymentSignatureHeader(await f.buyerClient.createPaymentPayload(pr));
    const bad = JSON.stringify({ task_id: 'bad', expected_schema: {}, submitted_output: 1, unknown_field: true });
    const r = await fetch(`${app.base}/verify/schema`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': header }, body: bad });
    expect(r.status).toBe(422);
    expect(r.headers.get('payment-response')).toBeNull();
    expect(((await r.json()) as { code: string; charged: boolean })).toMatchObject({ code: 'invalid_request', charged: false });
    expect(f.chain.settledTransfers()).toBe(transfers);
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before);
    const ok = await fetch(`${app.base}/verify/schema`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': header }, body: request('after-422') });
    expect(ok.status).toBe(200);
  });

  it('a failed settlement: 402 settlement_failed, nothing charged, and the same payment works on retry', async () => {
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const unpaid = await fetch(`${app.base}/verify/schema`, { method: 'POST' });
    const header = encodePaymentSignatureHeader(await f.buyerClient.createPaymentPayload(decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!)));
    f.chain.failNextWrites(1);
    const failed = await fetch(`${app.base}/verify/schema`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': header }, body: request('settle-fail') });
    expect(failed.status).toBe(402);
    expect(((await failed.json()) as { code: string; charged: boolean })).toMatchObject({ code: 'settlement_failed', charged: false });
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before);
    const retry = await fetch(`${app.base}/verify/schema`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': header }, body: request('settle-retry') });
    expect(retry.status).toBe(200);
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
  });

  it('a garbage PAYMENT-SIGNATURE gets a 402 payment_invalid, not a crash', async () => {
    const r = await fetch(`${app.base}/verify/schema`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': 'not base64 json' }, body: request('garbage') });
    expect(r.status).toBe(402);
    expect(((await r.json()) as { code: string }).code).toBe('payment_invalid');
  });

  it('GET /score is paid: 402 with 10000, then 200 when paid', async () => {
    const r = await fetch(`${app.base}/score/paying-agent`);
    expect(r.status).toBe(402);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(pr.accepts.map((a) => a.amount)).toEqual(['10000', '10000']);
    const test = await fetch(`${app.base}/score/test-agent`);
    expect(test.status).toBe(422);
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const paid = await paidFetch(`${app.base}/score/paying-agent`);
    expect(paid.status).toBe(200);
    expect(((await paid.json()) as { agent_id: string }).agent_id).toBe('paying-agent');
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 10000n);
    // The payment is bound to that agent's score: asked again for it, the score is signed again, not charged again;
    // for another agent it is refused.
    const header = { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(await f.buyerClient.createPaymentPayload(pr)) };
    expect((await fetch(`${app.base}/score/paying-agent`, { headers: header })).status).toBe(200);
    const again = await fetch(`${app.base}/score/paying-agent`, { headers: header });
    expect(again.status).toBe(200);
    expect(again.headers.get('payment-response')).not.toBeNull();
    expect(((await again.json()) as { agent_id: string }).agent_id).toBe('paying-agent');
    const other = await fetch(`${app.base}/score/another-agent`, { headers: header });
    expect(other.status).toBe(402);
    expect(((await other.json()) as { code: string; message: string })).toMatchObject({ code: 'payment_invalid', message: expect.stringMatching(/used for another request/) });
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
    const nonce = (JSON.parse(Buffer.from(header['PAYMENT-SIGNATURE'], 'base64').toString('utf8')) as { payload: { authorization: { nonce: string } } }).payload.authorization.nonce;
    const settled = (await app.handle.store.paymentEvents()).filter((e) => e.key.nonce === nonce.toLowerCase() && e.kind === 'settled');
    expect(settled).toHaveLength(1);
  });

  it('/.well-known/x402, /llms.txt and the agent card show the live prices', async () => {
    const manifest = (await (await fetch(`${app.base}/.well-known/x402`)).json()) as { payments_enabled: boolean; routes: Array<{ resource: string; price: string }> };
    expect(manifest.payments_enabled).toBe(true);
    expect(manifest.routes).toContainEqual(expect.objectContaining({ resource: `${app.base}/verify/schema`, price: '$0.02' }));
    expect(manifest.routes).toContainEqual(expect.objectContaining({ resource: `${app.base}/score/{agent_id}`, price: '$0.01' }));
    const llms = await (await fetch(`${app.base}/llms.txt`)).text();
    expect(llms).toContain('$0.02');
    const card = (await (await fetch(`${app.base}/.well-known/agent-card.json`)).json()) as { skills: Array<{ id: string; description: string }> };
    expect(card.skills.find((s) => s.id === 'verify_schema')!.description).toContain('$0.02');
    expect(card.skills.find((s) => s.id === 'get_verification_record')!.description).toContain('$0.01');
    const openapi = (await (await fetch(`${app.base}/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    expect(openapi.paths['/verify/schema'].post.responses['402']).toBeDefined();
    expect(openapi.paths['/score/{agent_id}'].get.responses['402']).toBeDefined();
  });
});

describe('MCP', () => {
  async function mcpClient(): Promise<Client> {
    const client = new Client({ name: 'buyer', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.base}/mcp`)));
    // Listing tools makes the client validate structuredContent against each outputSchema, also on isError results.
    await client.listTools();
    return client;
  }
  const args = () => ({ ...INVOICE, task_id: 'mcp-paid', agent_id: 'paying-agent' });

  it('unpaid verify_schema after the allowance → isError with PaymentRequired and the free-trial state', async () => {
    await exhaustAllowance();
    const client = await mcpClient();
    try {
      const res = (await client.callTool({ name: 'verify_schema', arguments: args() })) as CallToolResult;
      expect(res.isError).toBe(true);
      const pr = res.structuredContent as unknown as PaymentRequired;
      expect(pr.x402Version).toBe(2);
      expect(pr.accepts[0].amount).toBe('20000');
      expect(res._meta).toMatchObject({ code: 'free_trial_exhausted', free_trial: { available: false, remaining_calls_today: 0 } });
    } finally {
      await client.close();
    }
  });

  it('paid verify_schema with _meta["x402/payment"] → verdict plus _meta["x402/payment-response"]', async () => {
    await exhaustAllowance();
    const client = await mcpClient();
    try {
      const first = (await client.callTool({ name: 'verify_schema', arguments: args() })) as CallToolResult;
      const payload = await f.buyerClient.createPaymentPayload(first.structuredContent as unknown as PaymentRequired);
      const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
      const res = (await client.callTool({ name: 'verify_schema', arguments: args(), _meta: { 'x402/payment': payload } })) as CallToolResult;
      expect(res.isError).toBeFalsy();
      const receipt = res.structuredContent as { result: string; verification_id: string };
      expect(receipt.result).toBe('pass');
      expect(res._meta?.['x402/payment-response']).toMatchObject({ success: true, network: 'eip155:8453' });
      expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
      const events = await app.handle.store.paymentEvents({ verificationId: receipt.verification_id });
      expect(events.map((e) => e.kind)).toEqual(['settled']);
      // The same payment again with the same arguments: the receipt it bought, not charged again.
      const again = (await client.callTool({ name: 'verify_schema', arguments: args(), _meta: { 'x402/payment': payload } })) as CallToolResult;
      expect(again.isError).toBeFalsy();
      expect((again.structuredContent as { verification_id: string }).verification_id).toBe(receipt.verification_id);
      expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
      // With other arguments: refused, no receipt.
      const other = (await client.callTool({ name: 'verify_schema', arguments: { ...args(), task_id: 'another-task' }, _meta: { 'x402/payment': payload } })) as CallToolResult;
      expect(other.isError).toBe(true);
      expect(other._meta).toMatchObject({ code: 'payment_invalid' });
      expect(String(other._meta?.message)).toMatch(/used for another request/);
    } finally {
      await client.close();
    }
  });

  it('get_verification_record is paid', async () => {
    const client = await mcpClient();
    try {
      const unpaid = (await client.callTool({ name: 'get_verification_record', arguments: { agent_id: 'paying-agent' } })) as CallToolResult;
      expect(unpaid.isError).toBe(true);
      const pr = unpaid.structuredContent as unknown as PaymentRequired;
      expect(pr.accepts[0].amount).toBe('10000');
      const payload = await f.buyerClient.createPaymentPayload(pr);
      const paid = (await client.callTool({ name: 'get_verification_record', arguments: { agent_id: 'paying-agent' }, _meta: { 'x402/payment': payload } })) as CallToolResult;
      expect(paid.isError).toBeFalsy();
      expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true });
    } finally {
      await client.close();
    }
  });
});

describe('built-in facilitator mode', () => {
  const token = 't'.repeat(24) + '-facilitator-token';
  const localEnv = {
    FREE_ALLOWANCE_PER_DAY: '0',
    X402_ENABLED: 'true',
    X402_FACILITATOR_URL: 'local',
    X402_LOCAL_EVM_RPC_URL: 'http://127.0.0.1:9',
    X402_LOCAL_EVM_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
    X402_NETWORKS: 'base',
    X402_PAY_TO_EVM: PAY_TO_EVM,
  };

  it('settles in process; /facilitator/* is not served unless turned on', async () => {
    const chain = createMemoryEvmChain({
      chainId: 8453,
      tokens: [{ address: BASE_USDC, name: 'USD Coin', version: '2' }],
      facilitatorAddress: '0x2222222222222222222222222222222222222222',
    });
    chain.mint(BASE_USDC, f.buyer.address, 100_000n);
    const dir = tempDir('aov-pay-local-');
    const local = await start(dir.dir, localEnv, { evmSigner: chain.signer });
    try {
      expect((await fetch(`${local.base}/facilitator/supported`)).status).toBe(404);
      // A stranger asking the app to settle a transfer between two unrelated parties: nothing moves.
      const stranger = await f.buyerClient.createPaymentPayload(await f.gate.paymentRequired('verify', { url: `${local.base}/verify/schema` }));
      const settle = await fetch(`${local.base}/facilitator/settle`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ x402Version: 2, paymentPayload: stranger, paymentRequirements: stranger.accepted }),
      });
      expect(settle.status).toBe(404);
      expect(chain.settledTransfers()).toBe(0);
      const r = await paidFetch(`${local.base}/verify/schema`, { method: 'POST', headers: json, body: request('local-1') });
      expect(r.status).toBe(200);
      expect(chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(80_000n);
    } finally {
      await local.close();
      dir.cleanup();
    }
  });

  it('turned on, /facilitator/* needs the bearer token: without it nothing is verified or settled', async () => {
    const chain = createMemoryEvmChain({
      chainId: 8453,
      tokens: [{ address: BASE_USDC, name: 'USD Coin', version: '2' }],
      facilitatorAddress: '0x2222222222222222222222222222222222222222',
    });
    chain.mint(BASE_USDC, f.buyer.address, 100_000n);
    const dir = tempDir('aov-pay-local-routes-');
    const local = await start(dir.dir, { ...localEnv, X402_FACILITATOR_ROUTES: 'true', X402_FACILITATOR_ROUTES_TOKEN: token }, { evmSigner: chain.signer });
    try {
      const payload = await f.buyerClient.createPaymentPayload(await f.gate.paymentRequired('verify', { url: `${local.base}/verify/schema` }));
      const body = JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted });
      for (const headers of [json, { ...json, authorization: 'Bearer wrong-token-wrong-token-wrong' }, { ...json, authorization: token }]) {
        const r = await fetch(`${local.base}/facilitator/settle`, { method: 'POST', headers, body });
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toBe('Bearer');
      }
      expect((await fetch(`${local.base}/facilitator/supported`)).status).toBe(401);
      expect(chain.settledTransfers()).toBe(0);
      expect(chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(100_000n);
      const auth = { ...json, authorization: `Bearer ${token}` };
      const supported = (await (await fetch(`${local.base}/facilitator/supported`, { headers: auth })).json()) as { kinds: Array<{ network: string }> };
      expect(supported.kinds.map((k) => k.network)).toContain('eip155:8453');
      const settled = await fetch(`${local.base}/facilitator/settle`, { method: 'POST', headers: auth, body });
      expect(settled.status).toBe(200);
      expect(await settled.json()).toMatchObject({ success: true });
      expect(chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(80_000n);
    } finally {
      await local.close();
      dir.cleanup();
    }
  });
});

describe('MCP free allowance with payments on', () => {
  it('verify_schema is free within the allowance, then asks for payment', async () => {
    const dir = tempDir('aov-pay-mcp-free-');
    const small = await start(dir.dir, {
      FREE_ALLOWANCE_PER_DAY: '1',
      X402_ENABLED: 'true',
      X402_FACILITATOR_URL: f.facilitatorUrl,
      X402_PAY_TO_EVM: PAY_TO_EVM,
      X402_PAY_TO_SOLANA: PAY_TO_SOLANA,
    });
    const client = new Client({ name: 'free-buyer', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${small.base}/mcp`)));
    try {
      await client.listTools();
      const args = { ...INVOICE, task_id: 'mcp-free', agent_id: 'free-agent' };
      const free = (await client.callTool({ name: 'verify_schema', arguments: args })) as CallToolResult;
      expect(free.isError).toBeFalsy();
      expect(free._meta?.['x402/payment-response']).toBeUndefined();
      expect(free._meta?.['agent-output-verifier/free-allowance']).toMatchObject({ limit: 1, remaining: 0 });
      const next = (await client.callTool({ name: 'verify_schema', arguments: args })) as CallToolResult;
      expect(next.isError).toBe(true);
      expect(next._meta).toMatchObject({ code: 'free_trial_exhausted' });
      // An invalid call is refused before any payment question.
      const invalid = (await client.callTool({ name: 'verify_schema', arguments: { task_id: 'x' } })) as CallToolResult;
      expect((invalid.structuredContent as { code: string }).code).toBe('invalid_request');
    } finally {
      await client.close();
      await small.close();
      dir.cleanup();
    }
  });
});

describe('REST free trial with payments on, for a client known to have units left', () => {
  it('takes each unit with its receipt: a stale count gets the 402 of the door with nothing stored; exact under 30 concurrent calls', async () => {
    const dir = tempDir('aov-pay-free-hint-');
    const small = await start(dir.dir, {
      FREE_ALLOWANCE_PER_DAY: '10',
      X402_ENABLED: 'true',
      X402_FACILITATOR_URL: f.facilitatorUrl,
      X402_PAY_TO_EVM: PAY_TO_EVM,
      X402_PAY_TO_SOLANA: PAY_TO_SOLANA,
    });
    try {
      const together = countUnitWithReceipt(small.handle.store);
      const client = { clientKey: '127.0.0.1' };
      const first = await fetch(`${small.base}/verify/schema`, { method: 'POST', headers: json, body: request('hint-first') });
      expect(first.status).toBe(200);
      expect(first.headers.get('free-allowance-remaining')).toBe('9');
      // Another instance takes the 9 left; this one still believes 9 are left: the next call is admitted on that belief,
      // finds no unit when its receipt is to be stored, and gets the door's 402. Nothing is stored or charged.
      expect((await small.handle.service.takeAllowance(client, 9)).allowed).toBe(true);
      const stale = await fetch(`${small.base}/verify/schema`, { method: 'POST', headers: json, body: request('hint-stale') });
      const staleBody = (await stale.json()) as Record<string, unknown>;
      expect(together()).toBe(1);
      expect(stale.status).toBe(402);
      expect(decodePaymentRequiredHeader(stale.headers.get('payment-required')!).x402Version).toBe(2);
      expect(staleBody).toMatchObject({ code: 'free_trial_exhausted', available: false, remaining_calls_today: 0, charged: false });
      expect(staleBody.verification_id).toBeUndefined();
      // The units come back; the client is now believed to have none, so the next call takes its unit first.
      await small.handle.service.refundAllowanceUnits(client, 9);
      const again = await fetch(`${small.base}/verify/schema`, { method: 'POST', headers: json, body: request('hint-again') });
      expect(again.status).toBe(200);
      expect(again.headers.get('free-allowance-remaining')).toBe('8');
      expect(together()).toBe(1);

      const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => fetch(`${small.base}/verify/schema`, { method: 'POST', headers: json, body: request(`hint-${i}`) })));
      const bodies = (await Promise.all(responses.map((r) => r.json()))) as Array<Record<string, unknown>>;
      expect(responses.filter((r) => r.status === 200)).toHaveLength(8);
      expect(together()).toBeGreaterThan(1);
      for (const [i, r] of responses.entries()) {
        if (r.status === 200) {
          expect(r.headers.get('payment-response')).toBeNull();
          expect((await fetch(`${small.base}/receipts/${String(bodies[i]!.verification_id)}`)).status).toBe(200);
          continue;
        }
        expect(r.status).toBe(402);
        expect(decodePaymentRequiredHeader(r.headers.get('payment-required')!).x402Version).toBe(2);
        expect(bodies[i]).toMatchObject({ code: 'free_trial_exhausted', available: false, remaining_calls_today: 0, charged: false });
        expect(bodies[i]!.verification_id).toBeUndefined();
      }
      expect((await small.handle.service.peekAllowance({ clientKey: '127.0.0.1' })).used).toBe(10);
    } finally {
      await small.close();
      dir.cleanup();
    }
  });
});
