/**
 * @module Paid batches over the real app on a loopback socket, with the built-in
 * facilitator on the in-memory Base chain, on SQLite and on PostgreSQL: the 402 of
 * a batch names N × the price and the batch resource; one payment of that amount,
 * made with the official @x402/fetch (and with the package's client), pays the whole
 * batch and is settled once after every receipt is stored; an underpaid batch, a
 * failed store write and a failed settlement store nothing and charge nothing; and
 * with payments on, the free allowance is taken for N items at once or not at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createApp, type App } from '../src/app.js';
import { createVerifierClient } from '../src/client/index.js';
import { loadConfig } from '../src/config.js';
import { BASE_USDC } from '../src/payments/config.js';
import { verifyReceipt } from '../src/receipts/index.js';
import { createMemoryEvmChain, type MemoryEvmChain } from './memory-chain.js';
import { freePort, tempDir } from './http-helpers.js';
import { PAY_TO_EVM } from './payments-helpers.js';
import { postgresTestTarget } from './postgres-helpers.js';

const PRICE = 20_000n;
const FREE = 3;
const json = { 'content-type': 'application/json' };
const schema = { type: 'object', required: ['qty'], properties: { qty: { type: 'integer', minimum: 0 } } };

function batch(agentId: string, n: number): string {
  return JSON.stringify({
    expected_schema: schema,
    items: Array.from({ length: n }, (_, i) => ({ task_id: `t-${i}`, agent_id: agentId, submitted_output: { qty: i === 1 ? -1 : i } })),
  });
}

const pg = await postgresTestTarget('paid batches (PostgreSQL)', 'aov_paybatch');
const backends = [
  { name: 'SQLite', env: (): Record<string, string> => ({}), run: true },
  { name: 'PostgreSQL', env: (): Record<string, string> => ({ DATABASE_URL: pg.url, DATABASE_SCHEMA: pg.schema }), run: pg.available },
];

for (const backend of backends) {
  describe.runIf(backend.run)(`paid POST /verify/batch (${backend.name})`, () => {
    let chain: MemoryEvmChain;
    let dir: ReturnType<typeof tempDir>;
    let app: App;
    let base: string;
    let card: unknown;

    beforeAll(async () => {
      chain = createMemoryEvmChain({
        chainId: 8453,
        tokens: [{ address: BASE_USDC, name: 'USD Coin', version: '2' }],
        facilitatorAddress: '0x2222222222222222222222222222222222222222',
      });
      dir = tempDir('aov-pay-batch-');
      const port = await freePort();
      const config = loadConfig({
        DATA_DIR: dir.dir,
        PORT: String(port),
        LOG_LEVEL: 'silent',
        FREE_ALLOWANCE_PER_DAY: String(FREE),
        X402_ENABLED: 'true',
        X402_FACILITATOR_URL: 'local',
        X402_LOCAL_EVM_RPC_URL: 'http://127.0.0.1:9',
        X402_LOCAL_EVM_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
        X402_NETWORKS: 'base',
        X402_PAY_TO_EVM: PAY_TO_EVM,
        ...backend.env(),
      });
      app = await createApp(config, { logger: false, payments: { evmSigner: chain.signer }, reconcileIntervalMs: 3_600_000 });
      await app.app.listen({ host: '127.0.0.1', port });
      base = `http://127.0.0.1:${port}`;
      card = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
    });
    afterAll(async () => {
      await app?.close();
      dir?.cleanup();
      if (backend.name === 'PostgreSQL') await pg.dropSchema();
    });

    function buyer(funds: bigint): { account: PrivateKeyAccount; client: x402Client } {
      const account = privateKeyToAccount(generatePrivateKey());
      chain.mint(BASE_USDC, account.address, funds);
      return { account, client: new x402Client().register('eip155:8453', new ExactEvmClientScheme(account)) };
    }
    const postBatch = (body: string, headers: Record<string, string> = {}) => fetch(`${base}/verify/batch`, { method: 'POST', headers: { ...json, ...headers }, body });
    const stored = async (agentId: string) => (await app.store.reputation(agentId, { limit: 100 })).verifications;
    const used = async () => (await app.pipeline.peekAllowance({ clientKey: '127.0.0.1' })).used;
    const agent = (name: string) => `${name}-${backend.name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
    async function batchPaymentRequired(n: number): Promise<PaymentRequired> {
      const r = await postBatch(batch(agent('offer'), n));
      expect(r.status).toBe(402);
      return decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    }

    it('the free allowance with payments on: N units at once or none (402 with the batch price, allowance unchanged)', async () => {
      const who = agent('free');
      const two = await postBatch(batch(who, 2));
      expect(two.status).toBe(200);
      expect(two.headers.get('payment-response')).toBeNull();
      expect(two.headers.get('free-allowance-remaining')).toBe(String(FREE - 2));
      expect(await stored(who)).toBe(2);
      // One unit left, two needed: refused whole, nothing taken, and asked to pay for both.
      const refused = await postBatch(batch(who, 2));
      expect(refused.status).toBe(402);
      const body = (await refused.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ code: 'payment_required', available: true, remaining_calls_today: 1, charged: false });
      expect((body.free_trial as Record<string, unknown>).remaining_calls_today).toBe(1);
      const pr = decodePaymentRequiredHeader(refused.headers.get('payment-required')!);
      expect(pr.accepts.map((a) => a.amount)).toEqual([String(2n * PRICE)]);
      expect(await used()).toBe(FREE - 1);
      expect(await stored(who)).toBe(2);
      // The last unit still buys a batch of one; then the trial is spent.
      expect((await postBatch(batch(who, 1))).status).toBe(200);
      const spent = await postBatch(batch(who, 1));
      expect(spent.status).toBe(402);
      expect(await spent.json()).toMatchObject({ code: 'free_trial_exhausted', available: false, remaining_calls_today: 0 });
      expect(await stored(who)).toBe(3);
    });

    it('the 402 of a batch names N × the price and the batch resource', async () => {
      const pr = await batchPaymentRequired(7);
      expect(pr.x402Version).toBe(2);
      expect(pr.resource.url).toBe(`${app.config.publicBaseUrl}/verify/batch`);
      expect(pr.accepts).toHaveLength(1);
      expect(pr.accepts[0]).toMatchObject({ network: 'eip155:8453', amount: String(7n * PRICE), payTo: PAY_TO_EVM });
    });

    it('a batch of 5 paid with @x402/fetch: one settlement of 5 × the price, after every receipt is stored; each receipt verifies', async () => {
      const b = buyer(10n * PRICE);
      const who = agent('paid');
      const paidFetch = wrapFetchWithPayment(fetch, b.client);
      const r = await paidFetch(`${base}/verify/batch`, { method: 'POST', headers: json, body: batch(who, 5) });
      expect(r.status).toBe(200);
      const settlement = decodePaymentResponseHeader(r.headers.get('payment-response')!);
      expect(settlement).toMatchObject({ success: true, network: 'eip155:8453' });
      expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(5n * PRICE);
      const body = (await r.json()) as { summary: unknown; receipts: Array<Record<string, unknown>> };
      expect(body.summary).toEqual({ total: 5, passed: 4, failed: 1 });
      for (const [i, receipt] of body.receipts.entries()) {
        expect(receipt.task_id).toBe(`t-${i}`);
        expect(verifyReceipt(receipt, { agentCard: card as never })).toMatchObject({ valid: true });
        expect(await app.store.getReceipt(receipt.verification_id as string)).toBe(JSON.stringify(receipt));
      }
      expect(await stored(who)).toBe(5);
      const events = (await app.store.paymentEvents()).filter((e) => e.key.payer === b.account.address.toLowerCase());
      expect(events.filter((e) => e.kind === 'settled').map((e) => [e.amount, e.detail])).toEqual([[String(5n * PRICE), settlement.transaction]]);
      expect(await app.store.pendingSettlementFor(body.receipts[0]!.verification_id as string)).toBeNull();
    });

    it('the package client pays a batch with a payer and returns the settlement', async () => {
      const b = buyer(3n * PRICE);
      const client = createVerifierClient({ baseUrl: base, payer: b.client });
      const out = await client.verifyBatch({ expected_schema: schema, items: [0, 1, 2].map((i) => ({ task_id: `c-${i}`, submitted_output: { qty: i } })) } as never);
      expect(out.summary).toEqual({ total: 3, passed: 3, failed: 0 });
      expect(out.settlement).toMatchObject({ success: true });
      expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(0n);
      for (const receipt of out.receipts) expect((await client.checkReceipt(receipt)).valid).toBe(true);
    });

    it('an underpaid batch (the price of one item for three) is refused: 402 payment_invalid, nothing stored, nothing charged', async () => {
      const b = buyer(10n * PRICE);
      const who = agent('under');
      const single = decodePaymentRequiredHeader((await fetch(`${base}/verify/schema`, { method: 'POST' })).headers.get('payment-required')!);
      expect(single.accepts[0]!.amount).toBe(String(PRICE));
      const header = encodePaymentSignatureHeader(await b.client.createPaymentPayload(single));
      const r = await postBatch(batch(who, 3), { 'PAYMENT-SIGNATURE': header });
      expect(r.status).toBe(402);
      expect(await r.json()).toMatchObject({ code: 'payment_invalid', charged: false });
      expect(decodePaymentRequiredHeader(r.headers.get('payment-required')!).accepts[0]!.amount).toBe(String(3n * PRICE));
      expect(await stored(who)).toBe(0);
      expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(10n * PRICE);
      // A payment for a batch of 2 does not pay a batch of 3 either.
      const two = encodePaymentSignatureHeader(await b.client.createPaymentPayload(await batchPaymentRequired(2)));
      expect((await postBatch(batch(who, 3), { 'PAYMENT-SIGNATURE': two })).status).toBe(402);
      expect(await stored(who)).toBe(0);
      expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(10n * PRICE);
    });

    it('storing the pending receipts fails: 503, nothing stored or charged, the reservation released; the same payment then buys the batch', async () => {
      const b = buyer(4n * PRICE);
      const who = agent('storefail');
      const header = encodePaymentSignatureHeader(await b.client.createPaymentPayload(await batchPaymentRequired(4)));
      const store = app.store;
      const original = store.savePendingSettlement.bind(store);
      store.savePendingSettlement = async () => {
        store.savePendingSettlement = original;
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      };
      const failed = await postBatch(batch(who, 4), { 'PAYMENT-SIGNATURE': header });
      expect(failed.status).toBe(503);
      expect(await failed.json()).toMatchObject({ code: 'unavailable', charged: false });
      expect(await stored(who)).toBe(0);
      expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(4n * PRICE);
      const retry = await postBatch(batch(who, 4), { 'PAYMENT-SIGNATURE': header });
      expect(retry.status).toBe(200);
      expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(0n);
      expect(await stored(who)).toBe(4);
    });

    it('an item whose run fails: 500, nothing stored, the payment released (not charged)', async () => {
      const b = buyer(3n * PRICE);
      const who = agent('runfail');
      const header = encodePaymentSignatureHeader(await b.client.createPaymentPayload(await batchPaymentRequired(3)));
      const runner = app.runner;
      const original = runner.run.bind(runner);
      let calls = 0;
      runner.run = async (prepared) => {
        if (++calls === 2) throw new Error('worker crashed');
        return original(prepared);
      };
      let failed: Response;
      try {
        failed = await postBatch(batch(who, 3), { 'PAYMENT-SIGNATURE': header });
      } finally {
        runner.run = original;
      }
      expect(failed.status).toBe(500);
      expect(await stored(who)).toBe(0);
      expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(3n * PRICE);
      const released = (await app.store.paymentEvents()).filter((e) => e.kind === 'released' && e.key.payer === b.account.address.toLowerCase());
      expect(released.map((e) => e.detail)).toEqual(['work_failed']);
    });

    it('a failed settlement: 402 settlement_failed, every receipt of the batch voided, nothing charged', async () => {
      const b = buyer(3n * PRICE);
      const who = agent('settlefail');
      const header = encodePaymentSignatureHeader(await b.client.createPaymentPayload(await batchPaymentRequired(3)));
      chain.failNextWrites(1);
      const r = await postBatch(batch(who, 3), { 'PAYMENT-SIGNATURE': header });
      expect(r.status).toBe(402);
      expect(await r.json()).toMatchObject({ code: 'settlement_failed', charged: false });
      expect(await stored(who)).toBe(0);
      expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(3n * PRICE);
      const voided = (await app.store.paymentEvents()).filter((e) => e.kind === 'voided' && e.key.payer === b.account.address.toLowerCase());
      expect(voided).toHaveLength(3);
      for (const e of voided) expect(await app.store.getReceipt(e.verificationId!)).toBeNull();
    });

    it('a settlement not mined in time: 202 pending, nothing visible; once mined the same payment returns every receipt', async () => {
      const b = buyer(2n * PRICE);
      const who = agent('slow');
      const header = encodePaymentSignatureHeader(await b.client.createPaymentPayload(await batchPaymentRequired(2)));
      chain.setAutomine(false);
      try {
        const r = await postBatch(batch(who, 2), { 'PAYMENT-SIGNATURE': header });
        expect(r.status).toBe(202);
        expect(await r.json()).toMatchObject({ code: 'settlement_pending' });
        expect(await stored(who)).toBe(0);
        await chain.mine();
      } finally {
        chain.setAutomine(true);
      }
      const again = await postBatch(batch(who, 2), { 'PAYMENT-SIGNATURE': header });
      expect(again.status).toBe(200);
      const body = (await again.json()) as { summary: unknown; receipts: Array<Record<string, unknown>> };
      expect(body.summary).toEqual({ total: 2, passed: 1, failed: 1 });
      for (const receipt of body.receipts) expect(verifyReceipt(receipt, { agentCard: card as never }).valid).toBe(true);
      expect(await stored(who)).toBe(2);
      expect(chain.balanceOf(BASE_USDC, b.account.address)).toBe(0n);
    });
  });
}
