/**
 * @module x402 on a real EVM, offline: Hardhat in-process (chain id 8453) with an
 * EIP-3009 USDC-like token at the Base USDC address; the built-in facilitator
 * (official x402Facilitator + `exact` EVM scheme) serves /verify, /settle and
 * /supported over HTTP and settles on that chain; the app talks to it as to any
 * hosted facilitator; the buyer pays with @x402/fetch and a local viem account.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { wrapFetchWithPayment } from '@x402/fetch';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { createApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { verifyReceipt } from '../src/receipts/index.js';
import { createFacilitatorServer, createLocalFacilitator } from '../src/payments/local-facilitator.js';
import { BASE_USDC } from '../src/payments/config.js';
import { HARDHAT_KEY_0, HARDHAT_KEY_2, startHardhatBase, type HardhatBase } from './evm/chain.js';
import { freePort, projectRoot, tempDir } from './http-helpers.js';
import { offlineSolanaSigner, PAY_TO_EVM, PAY_TO_SOLANA, SOLANA_FEE_PAYER } from './payments-helpers.js';

const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as Record<string, unknown>;
const json = { 'content-type': 'application/json' };
const ROUTES_TOKEN = 'evm-test-facilitator-routes-token-0123456789';
const body = (taskId: string, extra: Record<string, unknown> = {}) => JSON.stringify({ ...INVOICE, task_id: taskId, agent_id: 'evm-agent', ...extra });

let hh: HardhatBase;
let facilitator: FastifyInstance;
let app: App;
let base: string;
let tmp: ReturnType<typeof tempDir>;
const buyer = privateKeyToAccount(generatePrivateKey());
const buyerClient = new x402Client().register('eip155:8453', new ExactEvmClientScheme(buyer));
const paidFetch = wrapFetchWithPayment(fetch, buyerClient);

beforeAll(async () => {
  hh = await startHardhatBase();
  await hh.mint(buyer.address, 1_000_000n);
  const local = createLocalFacilitator({
    evmSigner: hh.facilitatorSigner,
    evmNetworks: ['eip155:8453'],
    svmSigner: offlineSolanaSigner(),
    svmNetworks: ['solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'],
  });
  facilitator = await createFacilitatorServer(local);
  const facilitatorUrl = await facilitator.listen({ host: '127.0.0.1', port: 0 });
  tmp = tempDir('aov-pay-evm-');
  const port = await freePort();
  const config = loadConfig({
    DATA_DIR: tmp.dir,
    PORT: String(port),
    LOG_LEVEL: 'silent',
    FREE_ALLOWANCE_PER_DAY: '0',
    X402_ENABLED: 'true',
    X402_FACILITATOR_URL: facilitatorUrl,
    X402_PAY_TO_EVM: PAY_TO_EVM,
    X402_PAY_TO_SOLANA: PAY_TO_SOLANA,
  });
  app = await createApp(config, { logger: false });
  await app.app.listen({ host: '127.0.0.1', port });
  base = `http://127.0.0.1:${port}`;
}, 120_000);

afterAll(async () => {
  await app?.close();
  await facilitator?.close();
  tmp?.cleanup();
});

async function paymentRequired(): Promise<PaymentRequired> {
  const r = await fetch(`${base}/verify/schema`, { method: 'POST' });
  return decodePaymentRequiredHeader(r.headers.get('payment-required')!);
}

describe('x402 on a Hardhat chain (id 8453)', () => {
  it('402 lists Base USDC (with the domain the token uses) and Solana with the facilitator fee payer', async () => {
    const r = await fetch(`${base}/verify/schema`, { method: 'POST', headers: json, body: body('unpaid') });
    expect(r.status).toBe(402);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(pr.x402Version).toBe(2);
    expect(pr.accepts.map((a) => [a.network, a.amount])).toEqual([
      ['eip155:8453', '20000'],
      ['solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', '20000'],
    ]);
    expect(pr.accepts[0].extra).toMatchObject({ name: 'USD Coin', version: '2' });
    expect(pr.accepts[1].extra.feePayer).toBe(SOLANA_FEE_PAYER);
    expect(((await r.json()) as { code: string }).code).toBe('free_trial_exhausted');
  });

  it('paying with @x402/fetch settles on chain: exactly 20000 moves, the nonce is spent, the receipt verifies', async () => {
    const buyerBefore = await hh.balanceOf(buyer.address);
    const payToBefore = await hh.balanceOf(PAY_TO_EVM);
    const r = await paidFetch(`${base}/verify/schema`, { method: 'POST', headers: json, body: body('evm-paid') });
    expect(r.status).toBe(200);
    const text = await r.text();
    const card = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
    expect(verifyReceipt(text, { agentCard: card }).valid).toBe(true);
    const settlement = decodePaymentResponseHeader(r.headers.get('payment-response')!);
    expect(settlement).toMatchObject({ success: true, network: 'eip155:8453', payer: buyer.address });
    const receipt = await hh.publicClient.getTransactionReceipt({ hash: settlement.transaction as Hex });
    expect(receipt.status).toBe('success');
    expect(await hh.balanceOf(buyer.address)).toBe(buyerBefore - 20000n);
    expect(await hh.balanceOf(PAY_TO_EVM)).toBe(payToBefore + 20000n);
    const { verification_id } = JSON.parse(text) as { verification_id: string };
    const [event] = await app.store.paymentEvents({ verificationId: verification_id });
    expect(event).toMatchObject({ kind: 'settled', detail: settlement.transaction });
    expect(await hh.authorizationState(buyer.address, event.key.nonce as Hex)).toBe(true);
  });

  it('the same PAYMENT-SIGNATURE on one body sent 50 times concurrently: one receipt, one transfer, the work ran once', async () => {
    const before = await hh.balanceOf(buyer.address);
    const header = encodePaymentSignatureHeader(await buyerClient.createPaymentPayload(await paymentRequired()));
    const agent = `evm-replay-${Date.now()}`;
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(`${base}/verify/schema`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': header }, body: body('replay', { agent_id: agent }) }),
      ),
    );
    // Every copy gets the one receipt the payment bought (200), or is told it is under way (202).
    const texts = await Promise.all(responses.map((r) => r.text()));
    expect(responses.every((r) => r.status === 200 || r.status === 202)).toBe(true);
    expect(new Set(texts.filter((_, i) => responses[i]!.status === 200)).size).toBe(1);
    expect(await hh.balanceOf(buyer.address)).toBe(before - 20000n);
    const rep = (await (await fetch(`${base}/reputation/${agent}`)).json()) as { verifications: number };
    expect(rep.verifications).toBe(1);
  });

  it('an invalid request with a payment attached: 422, nothing settled, balance and nonce untouched', async () => {
    const before = await hh.balanceOf(buyer.address);
    const payload = await buyerClient.createPaymentPayload(await paymentRequired());
    const nonce = (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce;
    const r = await fetch(`${base}/verify/schema`, {
      method: 'POST',
      headers: { ...json, 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) },
      body: JSON.stringify({ task_id: 'x', expected_schema: {}, submitted_output: 1, extra: true }),
    });
    expect(r.status).toBe(422);
    expect(r.headers.get('payment-response')).toBeNull();
    expect(await hh.balanceOf(buyer.address)).toBe(before);
    expect(await hh.authorizationState(buyer.address, nonce)).toBe(false);
  });

  it('MCP: a paid verify_schema settles on chain and returns _meta["x402/payment-response"]', async () => {
    const client = new Client({ name: 'evm-buyer', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    try {
      const args = { ...INVOICE, task_id: 'evm-mcp', agent_id: 'evm-agent' };
      const unpaid = (await client.callTool({ name: 'verify_schema', arguments: args })) as CallToolResult;
      expect(unpaid.isError).toBe(true);
      const payload = await buyerClient.createPaymentPayload(unpaid.structuredContent as unknown as PaymentRequired);
      const before = await hh.balanceOf(buyer.address);
      const paid = (await client.callTool({ name: 'verify_schema', arguments: args, _meta: { 'x402/payment': payload } })) as CallToolResult;
      expect(paid.isError).toBeFalsy();
      expect((paid.structuredContent as { result: string }).result).toBe('pass');
      const settlement = paid._meta?.['x402/payment-response'] as { success: boolean; transaction: Hex };
      expect(settlement.success).toBe(true);
      expect((await hh.publicClient.getTransactionReceipt({ hash: settlement.transaction })).status).toBe('success');
      expect(await hh.balanceOf(buyer.address)).toBe(before - 20000n);
    } finally {
      await client.close();
    }
  });

  it('X402_FACILITATOR_URL=local from the environment alone: the built-in facilitator settles over JSON-RPC', async () => {
    const rpc = await hh.serveJsonRpc();
    const dir = tempDir('aov-pay-evm-local-');
    const port = await freePort();
    const config = loadConfig({
      DATA_DIR: dir.dir,
      PORT: String(port),
      LOG_LEVEL: 'silent',
      FREE_ALLOWANCE_PER_DAY: '0',
      X402_ENABLED: 'true',
      X402_FACILITATOR_URL: 'local',
      X402_LOCAL_EVM_RPC_URL: rpc.url,
      X402_LOCAL_EVM_PRIVATE_KEY: HARDHAT_KEY_2,
      X402_NETWORKS: 'base',
      X402_PAY_TO_EVM: PAY_TO_EVM,
      X402_FACILITATOR_ROUTES: 'true',
      X402_FACILITATOR_ROUTES_TOKEN: ROUTES_TOKEN,
    });
    const local = await createApp(config, { logger: false });
    await local.app.listen({ host: '127.0.0.1', port });
    try {
      // A stranger's settle through the app's facilitator routes: refused, nothing moves on chain.
      const strangerPayload = await buyerClient.createPaymentPayload(await paymentRequired());
      const strangerNonce = (strangerPayload.payload as { authorization: { nonce: Hex } }).authorization.nonce;
      const stranger = await fetch(`http://127.0.0.1:${port}/facilitator/settle`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ x402Version: 2, paymentPayload: strangerPayload, paymentRequirements: strangerPayload.accepted }),
      });
      expect(stranger.status).toBe(401);
      expect(await hh.authorizationState(buyer.address, strangerNonce)).toBe(false);
      const supported = (await (
        await fetch(`http://127.0.0.1:${port}/facilitator/supported`, { headers: { authorization: `Bearer ${ROUTES_TOKEN}` } })
      ).json()) as { signers: Record<string, string[]> };
      expect(Object.values(supported.signers).flat()).toContain(privateKeyToAccount(HARDHAT_KEY_2).address);
      const before = await hh.balanceOf(buyer.address);
      const r = await paidFetch(`http://127.0.0.1:${port}/verify/schema`, { method: 'POST', headers: json, body: body('env-local') });
      expect(r.status).toBe(200);
      const settlement = decodePaymentResponseHeader(r.headers.get('payment-response')!);
      const tx = await hh.publicClient.getTransaction({ hash: settlement.transaction as Hex });
      expect(tx.from.toLowerCase()).toBe(privateKeyToAccount(HARDHAT_KEY_2).address.toLowerCase());
      expect(tx.to?.toLowerCase()).toBe(BASE_USDC.toLowerCase());
      expect(await hh.balanceOf(buyer.address)).toBe(before - 20000n);
    } finally {
      await local.close();
      await rpc.close();
      dir.cleanup();
    }
  });

  describe('money safety', () => {
    const newBuyer = async (funds: bigint): Promise<{ account: PrivateKeyAccount; client: x402Client }> => {
      const account = privateKeyToAccount(generatePrivateKey());
      await hh.mint(account.address, funds);
      return { account, client: new x402Client().register('eip155:8453', new ExactEvmClientScheme(account)) };
    };
    const post = (url: string, payload: Parameters<typeof encodePaymentSignatureHeader>[0], requestBody: string) =>
      fetch(url, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) }, body: requestBody });
    const reputationOf = async (url: string, agent: string) => ((await (await fetch(`${url}/reputation/${agent}`)).json()) as { verifications: number }).verifications;

    it('50 concurrent valid authorizations from one buyer: 50 × 200, one transaction each, balances exact', async () => {
      const b = await newBuyer(50n * 20000n);
      const agent = `evm-rich-${Date.now()}`;
      const pr = await paymentRequired();
      const payToBefore = await hh.balanceOf(PAY_TO_EVM);
      const payloads = await Promise.all(Array.from({ length: 50 }, () => b.client.createPaymentPayload(pr)));
      const responses = await Promise.all(payloads.map((p, i) => post(`${base}/verify/schema`, p, body(`rich-${i}`, { agent_id: agent }))));
      expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 50 }, () => 200));
      const txs = new Set(responses.map((r) => decodePaymentResponseHeader(r.headers.get('payment-response')!).transaction));
      expect(txs.size).toBe(50);
      expect(await hh.balanceOf(b.account.address)).toBe(0n);
      expect(await hh.balanceOf(PAY_TO_EVM)).toBe(payToBefore + 50n * 20000n);
      expect(await reputationOf(base, agent)).toBe(50);
    }, 120_000);

    it('ten concurrent authorizations from a buyer who can afford one: exactly one receipt, the paid one', async () => {
      const b = await newBuyer(20000n);
      const agent = `evm-poor-${Date.now()}`;
      const pr = await paymentRequired();
      const payloads = await Promise.all(Array.from({ length: 10 }, () => b.client.createPaymentPayload(pr)));
      const responses = await Promise.all(payloads.map((p, i) => post(`${base}/verify/schema`, p, body(`poor-${i}`, { agent_id: agent }))));
      const ok = responses.filter((r) => r.status === 200);
      expect(ok).toHaveLength(1);
      expect(responses.filter((r) => r.status === 402)).toHaveLength(9);
      const paid = (JSON.parse(await ok[0].text()) as { verification_id: string }).verification_id;
      const rep = (await (await fetch(`${base}/reputation/${agent}`)).json()) as { verifications: number; history: Array<{ verification_id: string }> };
      expect(rep.verifications).toBe(1);
      expect(rep.history.map((h) => h.verification_id)).toEqual([paid]);
      for (const e of (await app.store.paymentEvents()).filter((x) => x.kind === 'voided' && x.key.payer === b.account.address.toLowerCase())) {
        expect((await fetch(`${base}/verifications/${e.verificationId}`)).status).toBe(404);
      }
      expect(await hh.balanceOf(b.account.address)).toBe(0n);
    }, 60_000);

    it('mining delayed (automine off): 202 pending, never "nothing charged", no receipt; mined → the same payment returns the receipt', async () => {
      // The built-in facilitator in process, with a short wait for the receipt so the delay outlasts it.
      const signer = hh.signerFor(HARDHAT_KEY_0, 1_000);
      const dir = tempDir('aov-pay-evm-pending-');
      const port = await freePort();
      const config = loadConfig({
        DATA_DIR: dir.dir,
        PORT: String(port),
        LOG_LEVEL: 'silent',
        FREE_ALLOWANCE_PER_DAY: '0',
        X402_ENABLED: 'true',
        X402_FACILITATOR_URL: 'local',
        X402_LOCAL_EVM_RPC_URL: 'http://127.0.0.1:9',
        X402_LOCAL_EVM_PRIVATE_KEY: HARDHAT_KEY_0,
        X402_NETWORKS: 'base',
        X402_PAY_TO_EVM: PAY_TO_EVM,
      });
      const local = await createApp(config, { logger: false, payments: { evmSigner: signer }, reconcileIntervalMs: 3_600_000 });
      await local.app.listen({ host: '127.0.0.1', port });
      const url = `http://127.0.0.1:${port}`;
      const b = await newBuyer(20000n);
      const agent = `evm-slow-${Date.now()}`;
      try {
        const pr = decodePaymentRequiredHeader((await fetch(`${url}/verify/schema`, { method: 'POST' })).headers.get('payment-required')!);
        const payload = await b.client.createPaymentPayload(pr);
        await hh.provider.request({ method: 'evm_setAutomine', params: [false] });
        let pendingId: string;
        try {
          const r = await post(`${url}/verify/schema`, payload, body('slow', { agent_id: agent }));
          expect(r.status).toBe(202);
          const text = await r.text();
          expect(text).not.toMatch(/nothing was charged|"charged":\s*false/i);
          const pending = JSON.parse(text) as { code: string; verification_id: string; transaction: Hex };
          expect(pending.code).toBe('settlement_pending');
          pendingId = pending.verification_id;
          expect((await fetch(`${url}/verifications/${pendingId}`)).status).toBe(404);
          expect(await reputationOf(url, agent)).toBe(0);
          await hh.provider.request({ method: 'evm_mine', params: [] });
          expect((await hh.publicClient.getTransactionReceipt({ hash: pending.transaction })).status).toBe('success');
        } finally {
          await hh.provider.request({ method: 'evm_setAutomine', params: [true] });
        }
        expect(await hh.balanceOf(b.account.address)).toBe(0n);
        const retry = await post(`${url}/verify/schema`, payload, body('slow', { agent_id: agent }));
        expect(retry.status).toBe(200);
        const receipt = await retry.text();
        expect((JSON.parse(receipt) as { verification_id: string }).verification_id).toBe(pendingId);
        expect(await (await fetch(`${url}/verifications/${pendingId}`)).text()).toBe(receipt);
        expect(await reputationOf(url, agent)).toBe(1);
      } finally {
        await local.close();
        dir.cleanup();
      }
    }, 60_000);

    it('malformed authorization fields: 402 payment_invalid, nothing on chain', async () => {
      const b = await newBuyer(20000n);
      const good = await b.client.createPaymentPayload(await paymentRequired());
      const auth = (good.payload as { authorization: Record<string, string> }).authorization;
      for (const payload of [
        { ...good, payload: { ...good.payload, authorization: { ...auth, value: 'abc' } } },
        { ...good, payload: { authorization: auth } },
        { ...good, payload: { ...good.payload, permit2Authorization: { from: auth.from } } },
      ]) {
        const r = await post(`${base}/verify/schema`, payload, body('malformed'));
        expect(r.status).toBe(402);
        expect(((await r.json()) as { code: string }).code).toBe('payment_invalid');
      }
      expect(await hh.authorizationState(b.account.address, auth.nonce as Hex)).toBe(false);
      expect(await hh.balanceOf(b.account.address)).toBe(20000n);
    });

    // Last: it moves the chain's clock forward for good.
    it('edge of validity: verified while valid, expired in the block that would settle it → no receipt anywhere', async () => {
      const b = await newBuyer(20000n);
      const agent = `evm-edge-${Date.now()}`;
      const payload = await b.client.createPaymentPayload(await paymentRequired());
      const auth = (payload.payload as { authorization: { validBefore: string; nonce: Hex } }).authorization;
      // Reads and the facilitator's checks see the current time; the next block is past validBefore.
      await hh.provider.request({ method: 'evm_setNextBlockTimestamp', params: [Number(auth.validBefore) + 1] });
      const r = await post(`${base}/verify/schema`, payload, body('edge', { agent_id: agent }));
      expect(r.status).toBe(402);
      expect(((await r.json()) as { code: string }).code).toBe('settlement_failed');
      expect(await reputationOf(base, agent)).toBe(0);
      const voided = (await app.store.paymentEvents()).filter((e) => e.kind === 'voided' && e.key.payer === b.account.address.toLowerCase());
      expect(voided).toHaveLength(1);
      expect((await fetch(`${base}/verifications/${voided[0].verificationId}`)).status).toBe(404);
      expect(await hh.authorizationState(b.account.address, auth.nonce)).toBe(false);
      expect(await hh.balanceOf(b.account.address)).toBe(20000n);
    });
  });
});
