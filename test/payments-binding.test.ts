/**
 * @module One payment, one request, on a real EVM: Hardhat in process (chain id 8453, the EIP-3009 token at the
 * Base USDC address) and the built-in facilitator settling real transactions, with a short wait for receipts so
 * that holding mining back makes a settlement pending. A payment is bound to the request it was reserved for
 * (its request_hash): sent again with that request it gets the one receipt it bought — 200, or 202 naming that
 * receipt while the settlement is pending — any number of times, at once or one after another, over REST, MCP
 * and the batch route; sent with another request it is `402 payment_invalid`, nothing charged and no receipt,
 * before, during and after a pending settlement. Settled at once, pending then mined, pending then reverted; on
 * SQLite, and on PostgreSQL when it is reachable.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { createApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { BASE_USDC } from '../src/payments/config.js';
import { HARDHAT_KEY_1, HARDHAT_KEY_2, localBase, startHardhatBase, type HardhatBase } from './evm/chain.js';
import { freePort, projectRoot, tempDir } from './http-helpers.js';
import { localEvmPaymentEnv, PAY_TO_EVM, withMcpClient } from './payments-helpers.js';
import { postgresTestTarget } from './postgres-helpers.js';

const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as Record<string, unknown>;
const json = { 'content-type': 'application/json' };
const PRICE = 20_000n;
const COPIES = 5;

const pg = await postgresTestTarget('payments-binding', 'aov_bind');

let hh: HardhatBase;
beforeAll(async () => {
  hh = await startHardhatBase();
}, 120_000);
afterAll(async () => {
  if (pg.available) await pg.dropSchema();
});

interface Service {
  base: string;
  app: App;
}

interface Buyer {
  account: PrivateKeyAccount;
  client: x402Client;
}

const stores: Array<{ name: string; env: Record<string, string>; facilitatorKey: Hex; skip: boolean }> = [
  { name: 'SQLite', env: {}, facilitatorKey: HARDHAT_KEY_1, skip: false },
  { name: 'PostgreSQL', env: { DATABASE_URL: pg.url, DATABASE_SCHEMA: pg.schema }, facilitatorKey: HARDHAT_KEY_2, skip: !pg.available },
];

describe.each(stores)('one payment, one request ($name)', ({ env, facilitatorKey, skip }) => {
  let svc: Service;
  let dir: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    if (skip) return;
    dir = tempDir('aov-pay-binding-');
    const port = await freePort();
    const config = loadConfig({
      ...localEvmPaymentEnv(dir.dir, port, facilitatorKey),
      ...env,
    });
    // Receipts are waited for 1 s: with mining held back the settlement is pending, and only retries reconcile it.
    const app = await createApp(config, { logger: false, payments: { evmSigner: hh.signerFor(facilitatorKey, 1_000) }, reconcileIntervalMs: 3_600_000 });
    await app.app.listen({ host: '127.0.0.1', port });
    svc = { base: `http://127.0.0.1:${port}`, app };
  }, 60_000);
  afterAll(async () => {
    await svc?.app.close();
    dir?.cleanup();
  });

  const agent = (name: string) => `${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const body = (taskId: string, agentId: string) => JSON.stringify({ ...INVOICE, task_id: taskId, agent_id: agentId });
  const args = (taskId: string, agentId: string) => ({ ...INVOICE, task_id: taskId, agent_id: agentId });

  async function buyer(funds: bigint): Promise<Buyer> {
    const account = privateKeyToAccount(generatePrivateKey());
    await hh.mint(account.address, funds);
    return { account, client: new x402Client().register('eip155:8453', new ExactEvmClientScheme(account)) };
  }

  async function paymentFor(b: Buyer, route = '/verify/schema', unpaidBody?: string): Promise<PaymentPayload> {
    const r = await fetch(`${svc.base}${route}`, { method: 'POST', ...(unpaidBody ? { headers: json, body: unpaidBody } : {}) });
    expect(r.status).toBe(402);
    return b.client.createPaymentPayload(decodePaymentRequiredHeader(r.headers.get('payment-required')!) as PaymentRequired);
  }

  function post(payload: PaymentPayload, requestBody: string, route = '/verify/schema'): Promise<Response> {
    return fetch(`${svc.base}${route}`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) }, body: requestBody });
  }

  function mcp<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    return withMcpClient(svc.base, 'binding-buyer', fn);
  }

  const callVerify = (client: Client, a: Record<string, unknown>, payload: PaymentPayload) =>
    client.callTool({ name: 'verify_schema', arguments: a, _meta: { 'x402/payment': payload } }) as Promise<CallToolResult>;

  const verifications = async (agentId: string) => ((await (await fetch(`${svc.base}/reputation/${agentId}`)).json()) as { verifications: number }).verifications;

  /** A refusal of the payment because it is bound to another request: 402 payment_invalid, nothing charged, no receipt. */
  async function expectBoundElsewhere(r: Response): Promise<void> {
    expect(r.status).toBe(402);
    expect(r.headers.get('payment-response')).toBeNull();
    const b = (await r.json()) as Record<string, unknown>;
    expect(b).toMatchObject({ code: 'payment_invalid', charged: false });
    expect(String(b.message)).toMatch(/used for another request/);
    expect(b.verification_id).toBeUndefined();
    expect(b.receipts).toBeUndefined();
  }

  function expectMcpBoundElsewhere(r: CallToolResult): void {
    expect(r.isError).toBe(true);
    expect(r._meta).toMatchObject({ code: 'payment_invalid', charged: false });
    expect(String(r._meta?.message)).toMatch(/used for another request/);
    expect(r._meta?.['x402/payment-response']).toBeUndefined();
  }

  /**
   * Send `send` while the next verification is being worked on (its payment reserved, nothing settled yet);
   * returns the getter of what it answered.
   */
  function whileWorking(send: () => Promise<Response>): () => Promise<Response> {
    const runner = svc.app.runner;
    const original = runner.run.bind(runner);
    let answered: Promise<Response> | null = null;
    runner.run = async (prepared) => {
      runner.run = original;
      answered = send();
      await answered;
      return original(prepared);
    };
    return async () => {
      runner.run = original;
      if (answered === null) throw new Error('no verification ran');
      return answered;
    };
  }

  async function settledEvents(b: Buyer): Promise<number> {
    return (await svc.app.store.paymentEvents()).filter((e) => e.kind === 'settled' && e.key.payer === b.account.address.toLowerCase()).length;
  }

  it.skipIf(skip)('settled at once: identical copies, at once and one after another, all get the one receipt; another body is refused', async () => {
    const b = await buyer(PRICE * 3n);
    const who = agent('at-once');
    const payload = await paymentFor(b);
    const payToBefore = await hh.balanceOf(PAY_TO_EVM);

    const before = whileWorking(() => post(payload, body('at-once-before', who)));
    const first = await Promise.all(Array.from({ length: COPIES }, () => post(payload, body('at-once', who))));
    await expectBoundElsewhere(await before());
    expect(first.some((r) => r.status === 200)).toBe(true);
    for (const r of first) expect([200, 202]).toContain(r.status);
    // Every copy told 202 retries with the same payment and gets the receipt.
    const texts: string[] = [];
    for (const r of first) {
      if (r.status === 200) {
        texts.push(await r.text());
        continue;
      }
      const pending = (await r.json()) as { code: string };
      expect(pending.code).toBe('settlement_pending');
      const retry = await post(payload, body('at-once', who));
      expect(retry.status).toBe(200);
      texts.push(await retry.text());
    }
    // One after another, and at once again.
    for (let i = 0; i < 3; i++) texts.push(await (await post(payload, body('at-once', who))).text());
    const again = await Promise.all(Array.from({ length: COPIES }, () => post(payload, body('at-once', who))));
    for (const r of again) {
      expect(r.status).toBe(200);
      expect(decodePaymentResponseHeader(r.headers.get('payment-response')!)).toMatchObject({ success: true, payer: b.account.address });
      texts.push(await r.text());
    }
    expect(new Set(texts).size).toBe(1);
    const id = (JSON.parse(texts[0]!) as { verification_id: string }).verification_id;
    expect(await (await fetch(`${svc.base}/verifications/${id}`)).text()).toBe(texts[0]);

    // Another body (another task, another agent) with the same payment: refused, also mixed with copies at once.
    await expectBoundElsewhere(await post(payload, body('at-once-other', who)));
    await expectBoundElsewhere(await post(payload, body('at-once', agent('someone-else'))));
    const mixed = await Promise.all(Array.from({ length: 8 }, (_, i) => post(payload, i % 2 ? body(`mixed-${i}`, who) : body('at-once', who))));
    for (const [i, r] of mixed.entries()) {
      if (i % 2) await expectBoundElsewhere(r);
      else expect(await r.text()).toBe(texts[0]);
    }

    // MCP: the same request gets the same receipt; other arguments are refused.
    await mcp(async (client) => {
      const same = await callVerify(client, args('at-once', who), payload);
      expect(same.isError).toBeFalsy();
      expect((same.structuredContent as { verification_id: string }).verification_id).toBe(id);
      expect(same._meta?.['x402/payment-response']).toMatchObject({ success: true });
      expectMcpBoundElsewhere(await callVerify(client, args('at-once-mcp-other', who), payload));
    });

    // Charged once, one receipt, one settlement in the ledger.
    expect(await hh.balanceOf(b.account.address)).toBe(PRICE * 2n);
    expect(await hh.balanceOf(PAY_TO_EVM)).toBe(payToBefore + PRICE);
    expect(await verifications(who)).toBe(1);
    expect(await settledEvents(b)).toBe(1);
  }, 60_000);

  it.skipIf(skip)('pending then mined: 202 naming one verification for the same body, 402 for another; once mined 200 for every copy, charged once', async () => {
    const b = await buyer(PRICE * 3n);
    const who = agent('mined');
    const payload = await paymentFor(b);
    let pendingId = '';
    await hh.provider.request({ method: 'evm_setAutomine', params: [false] });
    try {
      const before = whileWorking(() => post(payload, body('mined-before', who)));
      const pendingCopies = await Promise.all(Array.from({ length: COPIES }, () => post(payload, body('mined', who))));
      // Another body while the first copy was being worked on, before anything was settled: refused.
      await expectBoundElsewhere(await before());
      const ids = new Set<string>();
      for (const r of pendingCopies) {
        expect(r.status).toBe(202);
        const p = (await r.json()) as { code: string; verification_id: string | null; charged?: unknown };
        expect(p.code).toBe('settlement_pending');
        expect(p.charged).toBeUndefined();
        if (p.verification_id !== null) ids.add(p.verification_id);
      }
      expect(ids.size).toBe(1);
      pendingId = [...ids][0]!;
      // During the pending settlement: the same body → 202 for that verification; another body → 402, REST and MCP.
      const same = (await (await post(payload, body('mined', who))).json()) as { code: string; verification_id: string };
      expect(same).toMatchObject({ code: 'settlement_pending', verification_id: pendingId });
      await expectBoundElsewhere(await post(payload, body('mined-other', who)));
      await mcp(async (client) => {
        expectMcpBoundElsewhere(await callVerify(client, args('mined-mcp-other', who), payload));
        const pendingMcp = await callVerify(client, args('mined', who), payload);
        expect(pendingMcp.isError).toBe(true);
        expect(pendingMcp.structuredContent).toMatchObject({ code: 'settlement_pending', verification_id: pendingId });
      });
      expect((await fetch(`${svc.base}/verifications/${pendingId}`)).status).toBe(404);
      expect(await verifications(who)).toBe(0);
      await hh.provider.request({ method: 'evm_mine', params: [] });
    } finally {
      await hh.provider.request({ method: 'evm_setAutomine', params: [true] });
    }
    expect(await hh.balanceOf(b.account.address)).toBe(PRICE * 2n);

    // Every copy told 202, retrying at once after mining: 200 with that verification.
    const retries = await Promise.all(Array.from({ length: COPIES }, () => post(payload, body('mined', who))));
    const texts = await Promise.all(retries.map((r) => r.text()));
    expect(retries.map((r) => r.status)).toEqual(Array.from({ length: COPIES }, () => 200));
    expect(new Set(texts).size).toBe(1);
    expect((JSON.parse(texts[0]!) as { verification_id: string }).verification_id).toBe(pendingId);
    // And one after another, over REST and MCP.
    for (let i = 0; i < 2; i++) expect(await (await post(payload, body('mined', who))).text()).toBe(texts[0]);
    await mcp(async (client) => {
      const same = await callVerify(client, args('mined', who), payload);
      expect((same.structuredContent as { verification_id: string }).verification_id).toBe(pendingId);
      expectMcpBoundElsewhere(await callVerify(client, args('mined-mcp-after', who), payload));
    });
    // After: another body is still refused.
    await expectBoundElsewhere(await post(payload, body('mined-after', who)));
    expect(await (await fetch(`${svc.base}/verifications/${pendingId}`)).text()).toBe(texts[0]);
    expect(await hh.balanceOf(b.account.address)).toBe(PRICE * 2n);
    expect(await verifications(who)).toBe(1);
    expect(await settledEvents(b)).toBe(1);
  }, 90_000);

  it.skipIf(skip)('pending then reverted: another body refused while pending; nothing charged and no receipt anywhere afterwards', async () => {
    const b = await buyer(PRICE);
    const who = agent('reverted');
    const payload = await paymentFor(b);
    const payToBefore = await hh.balanceOf(PAY_TO_EVM);
    // The buyer pays gas for the transfer that will win the block.
    await hh.provider.request({ method: 'hardhat_setBalance', params: [b.account.address, '0xde0b6b3a7640000'] });
    let pendingId = '';
    let transaction: Hex;
    await hh.provider.request({ method: 'evm_setAutomine', params: [false] });
    try {
      const r = await post(payload, body('reverted', who));
      expect(r.status).toBe(202);
      const p = (await r.json()) as { verification_id: string; transaction: Hex };
      pendingId = p.verification_id;
      transaction = p.transaction;
      await expectBoundElsewhere(await post(payload, body('reverted-other', who)));
      // The buyer moves the funds away in a transaction mined first (a higher tip): the settlement reverts.
      await hh.wallet(b.account).writeContract({
        address: BASE_USDC,
        abi: hh.token.abi,
        functionName: 'transfer',
        args: [privateKeyToAccount(generatePrivateKey()).address, PRICE],
        account: b.account,
        chain: localBase,
        // Given, not estimated: estimated against the pending block, where the settlement already spent the funds.
        gas: 100_000n,
        maxPriorityFeePerGas: 50_000_000_000n,
        maxFeePerGas: 100_000_000_000n,
      });
      await hh.provider.request({ method: 'evm_mine', params: [] });
    } finally {
      await hh.provider.request({ method: 'evm_setAutomine', params: [true] });
    }
    expect((await hh.publicClient.getTransactionReceipt({ hash: transaction! })).status).toBe('reverted');
    // The same body: the settlement is found reverted (receipt voided), and a fresh attempt has no funds.
    const retry = await post(payload, body('reverted', who));
    expect(retry.status).toBe(402);
    expect(retry.headers.get('payment-response')).toBeNull();
    const refused = (await retry.json()) as Record<string, unknown>;
    expect(refused).toMatchObject({ code: 'payment_invalid', charged: false });
    expect(refused.verification_id).toBeUndefined();
    // Another body after the revert: refused as well, nothing charged.
    const other = await post(payload, body('reverted-other', who));
    expect(other.status).toBe(402);
    expect(((await other.json()) as { code: string }).code).toBe('payment_invalid');
    expect((await fetch(`${svc.base}/verifications/${pendingId}`)).status).toBe(404);
    expect(await verifications(who)).toBe(0);
    expect(await hh.balanceOf(PAY_TO_EVM)).toBe(payToBefore);
    expect(await hh.authorizationState(b.account.address, (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce)).toBe(false);
    const kinds = (await svc.app.store.paymentEvents({ verificationId: pendingId })).map((e) => e.kind);
    expect(kinds).toEqual(['settle_pending', 'settle_failed', 'voided']);
    expect(await settledEvents(b)).toBe(0);
  }, 60_000);

  it.skipIf(skip)('a batch: the same items get the receipts the payment bought, other items and a single request are refused', async () => {
    const b = await buyer(PRICE * 6n);
    const who = agent('batch');
    const batch = (tag: string) =>
      JSON.stringify({
        expected_schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
        items: [0, 1].map((i) => ({ task_id: `${tag}-${i}`, agent_id: who, submitted_output: { n: i } })),
      });
    const payload = await paymentFor(b, '/verify/batch', batch('b'));
    const copies = await Promise.all(Array.from({ length: COPIES }, () => post(payload, batch('b'), '/verify/batch')));
    const texts: string[] = [];
    for (const r of copies) {
      expect([200, 202]).toContain(r.status);
      texts.push(r.status === 200 ? await r.text() : await (await post(payload, batch('b'), '/verify/batch')).text());
    }
    expect(new Set(texts).size).toBe(1);
    const receipts = (JSON.parse(texts[0]!) as { receipts: Array<{ verification_id: string }> }).receipts;
    expect(receipts).toHaveLength(2);
    await expectBoundElsewhere(await post(payload, batch('other'), '/verify/batch'));
    // The payment is for 2 × the price: as a single verification it matches no option (402 payment_invalid).
    const single = await post(payload, body('batch-single', who));
    expect(single.status).toBe(402);
    expect(((await single.json()) as { code: string }).code).toBe('payment_invalid');
    expect(await hh.balanceOf(b.account.address)).toBe(PRICE * 4n);
    expect(await verifications(who)).toBe(2);
  }, 60_000);
});
