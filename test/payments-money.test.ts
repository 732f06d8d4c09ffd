/**
 * @module Money safety of the paid path, end to end over the real app with the
 * built-in facilitator on the in-memory Base chain: no receipt without a settled
 * payment (failed and edge-of-validity settlements leave none anywhere), a
 * settlement whose outcome is unknown stays pending (202, never "not charged")
 * and its buyer gets the receipt once it is mined, every honest payment settles
 * under concurrency, malformed payments are refused as payment_invalid and
 * logged, and a failed work releases the reservation. REST and MCP.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { BASE_USDC } from '../src/payments/config.js';
import { createMemoryEvmChain, type MemoryEvmChain } from './memory-chain.js';
import { freePort, projectRoot, tempDir } from './http-helpers.js';
import { PAY_TO_EVM } from './payments-helpers.js';

const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as Record<string, unknown>;
const json = { 'content-type': 'application/json' };
const PRICE = 20_000n;

interface Running {
  base: string;
  app: App;
  close(): Promise<void>;
}

let chain: MemoryEvmChain;
/** Seconds the chain's clock runs ahead of the service's (edge-of-validity tests). */
let chainSkewMs = 0;
let dir: ReturnType<typeof tempDir>;
let svc: Running;

async function start(dataDir: string): Promise<Running> {
  const port = await freePort();
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'silent',
    FREE_ALLOWANCE_PER_DAY: '0',
    X402_ENABLED: 'true',
    X402_FACILITATOR_URL: 'local',
    X402_LOCAL_EVM_RPC_URL: 'http://127.0.0.1:9',
    X402_LOCAL_EVM_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
    X402_NETWORKS: 'base',
    X402_PAY_TO_EVM: PAY_TO_EVM,
  });
  const app = await createApp(config, { logger: false, payments: { evmSigner: chain.signer }, reconcileIntervalMs: 3_600_000 });
  await app.app.listen({ host: '127.0.0.1', port });
  return { base: `http://127.0.0.1:${port}`, app, close: () => app.close() };
}

beforeAll(async () => {
  chain = createMemoryEvmChain({
    chainId: 8453,
    tokens: [{ address: BASE_USDC, name: 'USD Coin', version: '2' }],
    facilitatorAddress: '0x2222222222222222222222222222222222222222',
    now: () => Date.now() + chainSkewMs,
  });
  dir = tempDir('aov-pay-money-');
  svc = await start(dir.dir);
});
afterAll(async () => {
  await svc?.close();
  dir?.cleanup();
});

function buyer(funds: bigint): { account: PrivateKeyAccount; client: x402Client } {
  const account = privateKeyToAccount(generatePrivateKey());
  chain.mint(BASE_USDC, account.address, funds);
  return { account, client: new x402Client().register('eip155:8453', new ExactEvmClientScheme(account)) };
}

async function paymentRequired(base = svc.base): Promise<PaymentRequired> {
  const r = await fetch(`${base}/verify/schema`, { method: 'POST' });
  return decodePaymentRequiredHeader(r.headers.get('payment-required')!);
}

function body(taskId: string, agentId: string): string {
  return JSON.stringify({ ...INVOICE, task_id: taskId, agent_id: agentId });
}

function post(base: string, payment: PaymentPayload | string, requestBody: string): Promise<Response> {
  const header = typeof payment === 'string' ? payment : encodePaymentSignatureHeader(payment);
  return fetch(`${base}/verify/schema`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': header }, body: requestBody });
}

async function reputation(agentId: string, base = svc.base): Promise<{ verifications: number; history: Array<{ verification_id: string }> }> {
  return (await (await fetch(`${base}/reputation/${agentId}`)).json()) as { verifications: number; history: Array<{ verification_id: string }> };
}

const agent = (name: string) => `${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

describe('no receipt without a settled payment', () => {
  it('ten concurrent authorizations from a buyer who can afford one: one 200, exactly one receipt anywhere, the paid one', async () => {
    const b = buyer(PRICE);
    const who = agent('poor');
    const pr = await paymentRequired();
    const payloads = await Promise.all(Array.from({ length: 10 }, () => b.client.createPaymentPayload(pr)));
    const payToBefore = chain.balanceOf(BASE_USDC, PAY_TO_EVM);
    const responses = await Promise.all(payloads.map((p, i) => post(svc.base, p, body(`poor-${i}`, who))));
    const ok = responses.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    const paid = JSON.parse(await ok[0].text()) as { verification_id: string };
    for (const r of responses.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(402);
      const b402 = (await r.json()) as { code: string; result?: unknown };
      expect(['settlement_failed', 'payment_invalid']).toContain(b402.code);
      expect(b402.result).toBeUndefined();
    }
    const rep = await reputation(who);
    expect(rep.verifications).toBe(1);
    expect(rep.history.map((h) => h.verification_id)).toEqual([paid.verification_id]);
    expect((await fetch(`${svc.base}/verifications/${paid.verification_id}`)).status).toBe(200);
    expect(await svc.app.store.pendingSettlements()).toEqual([]);
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(0n);
    expect(chain.balanceOf(BASE_USDC, PAY_TO_EVM)).toBe(payToBefore + PRICE);
    // One settlement in the ledger; the receipts of the others (voided when their settlement failed) cannot be fetched.
    const mine = (await svc.app.store.paymentEvents()).filter((e) => e.key.payer === b.account.address.toLowerCase());
    expect(mine.filter((e) => e.kind === 'settled').map((e) => e.verificationId)).toEqual([paid.verification_id]);
    for (const v of mine.filter((e) => e.kind === 'voided')) expect((await fetch(`${svc.base}/verifications/${v.verificationId}`)).status).toBe(404);
  });

  it('an authorization that passes verification but is expired on chain at settlement leaves no receipt', async () => {
    const b = buyer(PRICE * 3n);
    const who = agent('edge');
    const pr = await paymentRequired();
    // Verified while valid; during the work the chain's clock passes validBefore (now + 300 s).
    const runner = svc.app.runner;
    const original = runner.run.bind(runner);
    runner.run = async (prepared) => {
      runner.run = original;
      chainSkewMs = 400_000;
      return original(prepared);
    };
    try {
      const r = await post(svc.base, await b.client.createPaymentPayload(pr), body('edge', who));
      expect(r.status).toBe(402);
      expect(((await r.json()) as { code: string }).code).toBe('settlement_failed');
    } finally {
      runner.run = original;
      chainSkewMs = 0;
    }
    expect((await reputation(who)).verifications).toBe(0);
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(PRICE * 3n);
    const voided = (await svc.app.store.paymentEvents()).filter((e) => e.kind === 'voided' && e.key.payer === b.account.address.toLowerCase());
    expect(voided).toHaveLength(1);
    expect((await fetch(`${svc.base}/verifications/${voided[0].verificationId}`)).status).toBe(404);
    expect(await svc.app.store.pendingSettlementFor(voided[0].verificationId!)).toBeNull();
  });

  it('an authorization too close to its expiry is refused before any work (validity margin), and logged', async () => {
    const b = buyer(PRICE);
    const who = agent('short');
    const pr = await paymentRequired();
    const short: PaymentRequired = { ...pr, accepts: [{ ...pr.accepts[0], maxTimeoutSeconds: 30 }] };
    const payload = await b.client.createPaymentPayload(short);
    payload.accepted = pr.accepts[0];
    const r = await post(svc.base, payload, body('short', who));
    expect(r.status).toBe(402);
    const b402 = (await r.json()) as { code: string; error: string };
    expect(b402.code).toBe('payment_invalid');
    expect(b402.error).toMatch(/at least 60 more seconds/);
    expect((await reputation(who)).verifications).toBe(0);
    const refused = (await svc.app.store.paymentEvents()).filter((e) => e.kind === 'refused' && e.key.payer === b.account.address.toLowerCase());
    expect(refused).toHaveLength(1);
    expect(refused[0].detail).toMatch(/^authorization_expires_too_soon/);
  });
});

describe('every honest payment settles', () => {
  it('50 concurrent valid authorizations from one buyer: 50 × 200, balances exact', async () => {
    const b = buyer(PRICE * 50n);
    const who = agent('rich');
    const pr = await paymentRequired();
    const payToBefore = chain.balanceOf(BASE_USDC, PAY_TO_EVM);
    const payloads = await Promise.all(Array.from({ length: 50 }, () => b.client.createPaymentPayload(pr)));
    const responses = await Promise.all(payloads.map((p, i) => post(svc.base, p, body(`rich-${i}`, who))));
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 50 }, () => 200));
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(0n);
    expect(chain.balanceOf(BASE_USDC, PAY_TO_EVM)).toBe(payToBefore + PRICE * 50n);
    expect((await reputation(who)).verifications).toBe(50);
  });
});

describe('pending is pending', () => {
  it('not mined in time: 202 settlement_pending (never "not charged"), invisible; once mined the retry gets the receipt', async () => {
    const b = buyer(PRICE);
    const who = agent('slow');
    const payload = await b.client.createPaymentPayload(await paymentRequired());
    chain.setAutomine(false);
    let pendingId: string;
    try {
      const r = await post(svc.base, payload, body('slow', who));
      expect(r.status).toBe(202);
      expect(r.headers.get('retry-after')).toBe('5');
      const text = await r.text();
      expect(text).not.toMatch(/nothing was charged|"charged":\s*false/i);
      const pending = JSON.parse(text) as { code: string; verification_id: string; transaction: string; retryable: boolean };
      expect(pending).toMatchObject({ code: 'settlement_pending', retryable: true });
      expect(pending.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      pendingId = pending.verification_id;
      // Invisible while pending; a retry before mining is still pending (and charges nothing twice).
      expect((await fetch(`${svc.base}/verifications/${pendingId}`)).status).toBe(404);
      expect((await reputation(who)).verifications).toBe(0);
      expect((await post(svc.base, payload, body('slow', who))).status).toBe(202);
      await chain.mine();
    } finally {
      chain.setAutomine(true);
    }
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(0n);
    const retry = await post(svc.base, payload, body('slow', who));
    expect(retry.status).toBe(200);
    const receipt = await retry.text();
    expect((JSON.parse(receipt) as { verification_id: string }).verification_id).toBe(pendingId);
    expect(decodePaymentResponseHeader(retry.headers.get('payment-response')!)).toMatchObject({ success: true });
    expect(await (await fetch(`${svc.base}/verifications/${pendingId}`)).text()).toBe(receipt);
    expect((await reputation(who)).verifications).toBe(1);
    // Asking again gives the same receipt, not a second one.
    expect(await (await post(svc.base, payload, body('slow', who))).text()).toBe(receipt);
    expect((await reputation(who)).verifications).toBe(1);
  });

  it('a pending settlement that reverts when mined: the buyer who did not pay gets no receipt', async () => {
    const b = buyer(PRICE);
    const who = agent('never');
    const payload = await b.client.createPaymentPayload(await paymentRequired());
    chain.setAutomine(false);
    let pendingId: string;
    try {
      const r = await post(svc.base, payload, body('never', who));
      expect(r.status).toBe(202);
      pendingId = ((await r.json()) as { verification_id: string }).verification_id;
      chainSkewMs = 400_000; // mined after the authorization expired: it reverts
      await chain.mine();
    } finally {
      chainSkewMs = 0;
      chain.setAutomine(true);
    }
    const counts = await svc.app.payments!.gate.reconcileAll();
    expect(counts.failed).toBeGreaterThanOrEqual(1);
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(PRICE);
    expect((await fetch(`${svc.base}/verifications/${pendingId}`)).status).toBe(404);
    expect((await reputation(who)).verifications).toBe(0);
    expect(await svc.app.store.pendingSettlementFor(pendingId)).toBeNull();
    const kinds = (await svc.app.store.paymentEvents({ verificationId: pendingId })).map((e) => e.kind);
    expect(kinds).toEqual(['settle_pending', 'settle_failed', 'voided']);
    // The authorization is still valid by the chain's clock now: a retry is a fresh, paid attempt (a new receipt).
    // (The official facilitator first answers from its own cache of the reverted transaction: one more
    // settlement_failed, nothing charged; the attempt after that settles.)
    let retry = await post(svc.base, payload, body('never', who));
    if (retry.status === 402) {
      expect(((await retry.json()) as { code: string }).code).toBe('settlement_failed');
      expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(PRICE);
      retry = await post(svc.base, payload, body('never', who));
    }
    expect(retry.status).toBe(200);
    expect((JSON.parse(await retry.text()) as { verification_id: string }).verification_id).not.toBe(pendingId);
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(0n);
    expect((await reputation(who)).verifications).toBe(1);
    expect((await fetch(`${svc.base}/verifications/${pendingId}`)).status).toBe(404);
  });

  it('pending receipts are reconciled from the chain at start-up', async () => {
    const b = buyer(PRICE);
    const who = agent('restart');
    const ownDir = tempDir('aov-pay-restart-');
    let first: Running | null = await start(ownDir.dir);
    try {
      const payload = await b.client.createPaymentPayload(await paymentRequired(first.base));
      chain.setAutomine(false);
      let pendingId: string;
      try {
        const r = await post(first.base, payload, body('restart', who));
        expect(r.status).toBe(202);
        pendingId = ((await r.json()) as { verification_id: string }).verification_id;
        await first.close();
        first = null;
        await chain.mine();
      } finally {
        chain.setAutomine(true);
      }
      const second = await start(ownDir.dir);
      try {
        let status = 0;
        for (let i = 0; i < 50 && status !== 200; i++) {
          status = (await fetch(`${second.base}/verifications/${pendingId}`)).status;
          if (status !== 200) await new Promise((r) => setTimeout(r, 100));
        }
        expect(status).toBe(200);
        expect((await reputation(who, second.base)).verifications).toBe(1);
      } finally {
        await second.close();
      }
    } finally {
      await first?.close();
      ownDir.cleanup();
    }
  });
});

describe('malformed payments', () => {
  it('bad authorization fields and Permit2 payloads: 402 payment_invalid, never 5xx, each refusal in the ledger', async () => {
    const b = buyer(PRICE);
    const who = agent('malformed');
    const good = await b.client.createPaymentPayload(await paymentRequired());
    const auth = (good.payload as { authorization: Record<string, string> }).authorization;
    const variants: Array<[string, PaymentPayload]> = [
      ['value abc', { ...good, payload: { ...good.payload, authorization: { ...auth, value: 'abc' } } }],
      ['no signature', { ...good, payload: { authorization: auth } }],
      ['short nonce', { ...good, payload: { ...good.payload, authorization: { ...auth, nonce: '0x1234' } } }],
      ['validBefore negative', { ...good, payload: { ...good.payload, authorization: { ...auth, validBefore: '-1' } } }],
      ['from not an address', { ...good, payload: { ...good.payload, authorization: { ...auth, from: 'me' } } }],
      [
        'permit2',
        {
          ...good,
          payload: {
            ...good.payload,
            permit2Authorization: { from: auth.from, permitted: { token: BASE_USDC, amount: '20000' }, spender: PAY_TO_EVM, nonce: '1', deadline: '9999999999' },
          },
        },
      ],
    ];
    const before = (await svc.app.store.paymentEvents()).filter((e) => e.kind === 'refused').length;
    for (const [name, payload] of variants) {
      const r = await post(svc.base, payload, body(`malformed-${name}`, who));
      expect(r.status, name).toBe(402);
      expect(((await r.json()) as { code: string }).code, name).toBe('payment_invalid');
    }
    const garbage = await post(svc.base, 'not-base64-json', body('garbage', who));
    expect(garbage.status).toBe(402);
    expect(((await garbage.json()) as { code: string }).code).toBe('payment_invalid');
    const after = (await svc.app.store.paymentEvents()).filter((e) => e.kind === 'refused');
    expect(after.length - before).toBe(variants.length + 1);
    expect(after.some((e) => /^unsupported_payload: Only EIP-3009/.test(e.detail ?? ''))).toBe(true);
    expect((await reputation(who)).verifications).toBe(0);
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(PRICE);
    // The good one still works: nothing above spent it.
    expect((await post(svc.base, good, body('malformed-good', who))).status).toBe(200);
  });
});

describe('a failed work releases the payment', () => {
  it('the work throws: 500, a released ledger event, and the same PAYMENT-SIGNATURE then buys the verification', async () => {
    const b = buyer(PRICE);
    const who = agent('workfail');
    const header = encodePaymentSignatureHeader(await b.client.createPaymentPayload(await paymentRequired()));
    const runner = svc.app.runner;
    const original = runner.run.bind(runner);
    runner.run = async () => {
      runner.run = original;
      throw new Error('disk on fire');
    };
    const failed = await post(svc.base, header, body('workfail', who));
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as { code: string }).code).toBe('internal_error');
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(PRICE);
    const released = (await svc.app.store.paymentEvents()).filter((e) => e.kind === 'released' && e.key.payer === b.account.address.toLowerCase());
    expect(released.map((e) => e.detail)).toEqual(['work_failed']);
    const retry = await post(svc.base, header, body('workfail', who));
    expect(retry.status).toBe(200);
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(0n);
    expect((await reputation(who)).verifications).toBe(1);
  });

  it('storing the pending receipt fails: the reservation is released too', async () => {
    const b = buyer(PRICE);
    const header = encodePaymentSignatureHeader(await b.client.createPaymentPayload(await paymentRequired()));
    const store = svc.app.store;
    const original = store.savePendingSettlement.bind(store);
    store.savePendingSettlement = async () => {
      store.savePendingSettlement = original;
      throw new Error('database gone');
    };
    const failed = await post(svc.base, header, body('storefail', agent('storefail')));
    expect(failed.status).toBe(500);
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(PRICE);
    expect((await post(svc.base, header, body('storefail', agent('storefail')))).status).toBe(200);
  });
});

describe('the 402 body', () => {
  it('carries the free_trial object for clients of the hosted original, beside the existing fields', async () => {
    const r = await fetch(`${svc.base}/verify/schema`, { method: 'POST', headers: json, body: body('unpaid', 'someone') });
    expect(r.status).toBe(402);
    const b402 = (await r.json()) as Record<string, unknown>;
    expect(b402).toMatchObject({ code: 'free_trial_exhausted', available: false, remaining_calls_today: 0 });
    expect(b402.free_trial).toEqual({
      available: false,
      via: 'mcp+rest',
      transport: 'streamable-http',
      url: `${svc.app.config.publicBaseUrl}/mcp`,
      tool: 'verify_schema',
      calls_per_client_per_day: 0,
      remaining_calls_today: 0,
      resets_at: b402.resets_at,
      client: 'ip address',
      message: expect.stringMatching(/used up/),
      code: 'free_trial_exhausted',
    });
  });
});

describe('MCP', () => {
  async function mcp<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ name: 'money-buyer', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.base}/mcp`)));
    try {
      return await fn(client);
    } finally {
      await client.close();
    }
  }

  it('a failed settlement answers settlement_failed and leaves no receipt', async () => {
    const b = buyer(PRICE);
    const who = agent('mcp-fail');
    await mcp(async (client) => {
      const args = { ...INVOICE, task_id: 'mcp-fail', agent_id: who };
      const payload = await b.client.createPaymentPayload(await paymentRequired());
      chain.failNextWrites(1);
      const r = (await client.callTool({ name: 'verify_schema', arguments: args, _meta: { 'x402/payment': payload } })) as CallToolResult;
      expect(r.isError).toBe(true);
      expect(r._meta).toMatchObject({ code: 'settlement_failed' });
      expect((r.structuredContent as { x402Version: number }).x402Version).toBe(2);
    });
    expect((await reputation(who)).verifications).toBe(0);
    expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(PRICE);
  });

  it('a pending settlement answers settlement_pending; once mined the same payment returns the receipt', async () => {
    const b = buyer(PRICE);
    const who = agent('mcp-slow');
    await mcp(async (client) => {
      const args = { ...INVOICE, task_id: 'mcp-slow', agent_id: who };
      const payload = await b.client.createPaymentPayload(await paymentRequired());
      chain.setAutomine(false);
      let pendingId: string;
      try {
        const r = (await client.callTool({ name: 'verify_schema', arguments: args, _meta: { 'x402/payment': payload } })) as CallToolResult;
        expect(r.isError).toBe(true);
        const sc = r.structuredContent as { code: string; verification_id: string; charged?: unknown };
        expect(sc.code).toBe('settlement_pending');
        expect(sc.charged).toBeUndefined();
        pendingId = sc.verification_id;
        expect((await reputation(who)).verifications).toBe(0);
        await chain.mine();
      } finally {
        chain.setAutomine(true);
      }
      const again = (await client.callTool({ name: 'verify_schema', arguments: args, _meta: { 'x402/payment': payload } })) as CallToolResult;
      expect(again.isError).toBeFalsy();
      expect((again.structuredContent as { verification_id: string }).verification_id).toBe(pendingId);
      expect(again._meta?.['x402/payment-response']).toMatchObject({ success: true });
    });
    expect((await reputation(who)).verifications).toBe(1);
  });
});
