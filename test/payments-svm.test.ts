/**
 * @module x402 on a real Solana VM, offline: LiteSVM behind a loopback JSON-RPC
 * server (test/svm/chain.ts) with a USDC-like mint at the mainnet USDC address;
 * the service runs the built-in facilitator from its environment alone
 * (X402_FACILITATOR_URL=local, X402_LOCAL_SVM_RPC_URL, X402_LOCAL_SVM_KEY_FILE),
 * which verifies with the official `exact` SVM scheme, co-signs as fee payer,
 * sends and confirms; buyers pay with @x402/fetch and the official @x402/svm
 * client. Balances are read from the VM.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wrapFetchWithPayment } from '@x402/fetch';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactSvmScheme as ExactSvmClientScheme } from '@x402/svm/exact/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { createApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { verifyReceipt } from '../src/receipts/index.js';
import { SOLANA_MAINNET, SOLANA_USDC } from '../src/payments/config.js';
import { svmAddressOf } from '../src/payments/svm-signer.js';
import { startSvmChain, type SvmChain } from './svm/chain.js';
import { freePort, projectRoot, tempDir } from './http-helpers.js';
import { withMcpClient } from './payments-helpers.js';

const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as Record<string, unknown>;
const json = { 'content-type': 'application/json' };
const PRICE = 20000n;
const body = (taskId: string, agent: string) => JSON.stringify({ ...INVOICE, task_id: taskId, agent_id: agent });
let seq = 0;
const agentId = (label: string) => `svm-${label}-${++seq}`;

let chain: SvmChain;
let app: App;
let base: string;
let tmp: ReturnType<typeof tempDir>;
let feePayer: string;
let seller: string;
let keyFile: string;

/** The settings of a service paid on Solana through the built-in facilitator, from the environment alone. */
function svmEnv(dataDir: string, port: number): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'silent',
    FREE_ALLOWANCE_PER_DAY: '0',
    X402_ENABLED: 'true',
    X402_FACILITATOR_URL: 'local',
    X402_NETWORKS: 'solana',
    X402_PAY_TO_SOLANA: seller,
    X402_LOCAL_SVM_RPC_URL: chain.url,
    X402_LOCAL_SVM_KEY_FILE: keyFile,
    X402_LOCAL_CONFIRMATION_TIMEOUT_MS: '1000',
  };
}

interface Buyer {
  signer: KeyPairSigner;
  client: x402Client;
  paidFetch: typeof fetch;
}

async function newBuyer(funds: bigint): Promise<Buyer> {
  const signer = await generateKeyPairSigner();
  await chain.fund(signer.address, funds);
  const client = new x402Client().register(SOLANA_MAINNET, new ExactSvmClientScheme(signer, { rpcUrl: chain.url }));
  return { signer, client, paidFetch: wrapFetchWithPayment(fetch, client) };
}

async function paymentRequired(url = `${base}/verify/schema`, method = 'POST'): Promise<PaymentRequired> {
  const r = await fetch(url, { method });
  return decodePaymentRequiredHeader(r.headers.get('payment-required')!);
}

const post = (payload: PaymentPayload | string, requestBody: string) =>
  fetch(`${base}/verify/schema`, {
    method: 'POST',
    headers: { ...json, 'PAYMENT-SIGNATURE': typeof payload === 'string' ? payload : encodePaymentSignatureHeader(payload) },
    body: requestBody,
  });
const reputationOf = async (agent: string) => ((await (await fetch(`${base}/reputation/${agent}`)).json()) as { verifications: number }).verifications;
const visible = async (verificationId: string) => (await fetch(`${base}/verifications/${verificationId}`)).status === 200;
/** Whether the transparency log knows the receipt (it logs published receipts only). */
const logged = async (verificationId: string) => (await fetch(`${base}/log/proof/${verificationId}`)).status !== 404;

async function until(what: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  chain = await startSvmChain();
  tmp = tempDir('aov-pay-svm-');
  // The fee payer as `solana-keygen new -o` writes it: a JSON array of the seed and the public key.
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
  const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  keyFile = path.join(tmp.dir, 'fee-payer.json');
  writeFileSync(keyFile, JSON.stringify([...seed, ...pub]), { mode: 0o600 });
  feePayer = svmAddressOf(privateKey);
  chain.airdrop(feePayer, 10_000_000_000n);
  seller = (await generateKeyPairSigner()).address;
  await chain.fund(seller, 0n);
  const port = await freePort();
  const config = loadConfig(svmEnv(tmp.dir, port));
  expect(JSON.stringify(config)).not.toContain(String([...seed].join(',')));
  app = await createApp(config, { logger: false, reconcileIntervalMs: 200 });
  await app.app.listen({ host: '127.0.0.1', port });
  base = `http://127.0.0.1:${port}`;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await chain?.close();
  tmp?.cleanup();
});

describe('x402 on Solana through the built-in facilitator (LiteSVM)', () => {
  it('the 402 lists Solana USDC at 20000 with the facilitator fee payer in extra.feePayer; /score asks 10000', async () => {
    const r = await fetch(`${base}/verify/schema`, { method: 'POST', headers: json, body: body('unpaid', agentId('unpaid')) });
    expect(r.status).toBe(402);
    const pr = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(pr.accepts).toHaveLength(1);
    expect(pr.accepts[0]).toMatchObject({ scheme: 'exact', network: SOLANA_MAINNET, asset: SOLANA_USDC, amount: '20000', payTo: seller, extra: { feePayer } });
    const score = await paymentRequired(`${base}/score/some-agent`, 'GET');
    expect(score.accepts[0]).toMatchObject({ network: SOLANA_MAINNET, amount: '10000', extra: { feePayer } });
  });

  it('@x402/fetch pays POST /verify/schema: buyer −20000, seller +20000 on the VM, the receipt verifies, reputation counts 1', async () => {
    const b = await newBuyer(100_000n);
    const agent = agentId('paid');
    const sellerBefore = await chain.balance(seller);
    const lamportsBefore = chain.lamports(feePayer);
    const started = Date.now();
    const r = await b.paidFetch(`${base}/verify/schema`, { method: 'POST', headers: json, body: body('paid', agent) });
    const ms = Date.now() - started;
    expect(r.status).toBe(200);
    const text = await r.text();
    const card = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
    expect(verifyReceipt(text, { agentCard: card }).valid).toBe(true);
    const settlement = decodePaymentResponseHeader(r.headers.get('payment-response')!);
    expect(settlement).toMatchObject({ success: true, network: SOLANA_MAINNET, payer: b.signer.address });
    expect(chain.landed().get(settlement.transaction)).toMatchObject({ err: null });
    expect(await chain.balance(b.signer.address)).toBe(100_000n - PRICE);
    expect(await chain.balance(seller)).toBe(sellerBefore + PRICE);
    // The fee payer paid the fees (two signatures and the priority fee), in lamports, not the buyer.
    expect(chain.lamports(feePayer)).toBeLessThan(lamportsBefore);
    expect(chain.lamports(b.signer.address)).toBe(0n);
    expect(await reputationOf(agent)).toBe(1);
    const { verification_id } = JSON.parse(text) as { verification_id: string };
    const [event] = await app.store.paymentEvents({ verificationId: verification_id });
    expect(event).toMatchObject({ kind: 'settled', detail: settlement.transaction });
    expect(chain.unknownMethods).toEqual([]);
    console.log(`svm: paid verify in ${ms} ms, fee payer spent ${lamportsBefore - chain.lamports(feePayer)} lamports`);
  });

  it('/score at $0.01 on Solana: 10000 moves', async () => {
    const b = await newBuyer(PRICE);
    const sellerBefore = await chain.balance(seller);
    const r = await b.paidFetch(`${base}/score/${agentId('scored')}`);
    expect(r.status).toBe(200);
    expect(await chain.balance(b.signer.address)).toBe(PRICE - 10_000n);
    expect(await chain.balance(seller)).toBe(sellerBefore + 10_000n);
  });

  it('a buyer who can afford one of ten concurrent payments gets exactly one receipt', async () => {
    const b = await newBuyer(PRICE);
    const agent = agentId('poor');
    const sellerBefore = await chain.balance(seller);
    const lamportsBefore = chain.lamports(feePayer);
    const pr = await paymentRequired();
    const payloads = await Promise.all(Array.from({ length: 10 }, () => b.client.createPaymentPayload(pr)));
    const responses = await Promise.all(payloads.map((p, i) => post(p, body(`poor-${i}`, agent))));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 402)).toHaveLength(9);
    expect(await chain.balance(b.signer.address)).toBe(0n);
    expect(await chain.balance(seller)).toBe(sellerBefore + PRICE);
    expect(await reputationOf(agent)).toBe(1);
    const voided = (await app.store.paymentEvents()).filter((x) => x.kind === 'voided' && x.key.payer === b.signer.address);
    for (const e of voided) {
      expect(await visible(e.verificationId!)).toBe(false);
      expect(await logged(e.verificationId!)).toBe(false);
    }
    const landedFailed = lamportsBefore - chain.lamports(feePayer) - 10_001n;
    console.log(`svm: 1 of 10 paid; ${voided.length} refused at settlement (receipt voided), ${9 - voided.length} at verification; fees of failed transactions: ${landedFailed} lamports`);
  });

  it('50 concurrent payments from one buyer all settle: 50 transactions, exact balances', async () => {
    const b = await newBuyer(50n * PRICE);
    const agent = agentId('rich');
    const sellerBefore = await chain.balance(seller);
    const pr = await paymentRequired();
    const payloads = await Promise.all(Array.from({ length: 50 }, () => b.client.createPaymentPayload(pr)));
    const started = Date.now();
    const responses = await Promise.all(payloads.map((p, i) => post(p, body(`rich-${i}`, agent))));
    const ms = Date.now() - started;
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 50 }, () => 200));
    const txs = new Set(responses.map((r) => decodePaymentResponseHeader(r.headers.get('payment-response')!).transaction));
    expect(txs.size).toBe(50);
    for (const tx of txs) expect(chain.landed().get(tx)).toMatchObject({ err: null });
    expect(await chain.balance(b.signer.address)).toBe(0n);
    expect(await chain.balance(seller)).toBe(sellerBefore + 50n * PRICE);
    expect(await reputationOf(agent)).toBe(50);
    console.log(`svm: 50 concurrent paid verifies in ${ms} ms`);
  }, 60_000);

  it('the same transaction over REST and MCP at once: one call, one transfer, one receipt', async () => {
    const b = await newBuyer(PRICE * 2n);
    const agent = agentId('replay');
    const payload = await b.client.createPaymentPayload(await paymentRequired());
    const args = { ...INVOICE, task_id: 'replay', agent_id: agent };
    const call = () =>
      withMcpClient(base, 'svm-buyer', async (client) => (await client.callTool({ name: 'verify_schema', arguments: args, _meta: { 'x402/payment': payload } })) as CallToolResult);
    const [rest, mcp] = await Promise.all([post(payload, JSON.stringify(args)), call()]);
    expect([200, 202]).toContain(rest.status);
    // Once settled, both transports answer the receipt that one payment bought.
    const again = await post(payload, JSON.stringify(args));
    expect(again.status).toBe(200);
    const id = (JSON.parse(await again.text()) as { verification_id: string }).verification_id;
    const mcpAgain = await call();
    expect(mcpAgain.isError).toBeFalsy();
    expect((mcpAgain.structuredContent as { verification_id: string }).verification_id).toBe(id);
    if (!mcp.isError) expect((mcp.structuredContent as { verification_id: string }).verification_id).toBe(id);
    expect(await chain.balance(b.signer.address)).toBe(PRICE);
    expect(await reputationOf(agent)).toBe(1);
    // Sent with another request, the payment is refused.
    const other = await post(payload, body('another', agent));
    expect(other.status).toBe(402);
    expect(((await other.json()) as { code: string }).code).toBe('payment_invalid');
  });

  it('the blockhash expires between verify and settle: 402, no receipt anywhere, nothing charged', async () => {
    const b = await newBuyer(PRICE);
    const agent = agentId('expired');
    const payload = await b.client.createPaymentPayload(await paymentRequired());
    chain.expireBlockhashAfterNextSimulation();
    const r = await post(payload, body('expired', agent));
    expect(r.status).toBe(402);
    expect(((await r.json()) as { code: string }).code).toBe('settlement_failed');
    expect(await reputationOf(agent)).toBe(0);
    const voided = (await app.store.paymentEvents()).filter((e) => e.kind === 'voided' && e.key.payer === b.signer.address);
    expect(voided).toHaveLength(1);
    expect(await visible(voided[0]!.verificationId!)).toBe(false);
    expect(await logged(voided[0]!.verificationId!)).toBe(false);
    expect(await chain.balance(b.signer.address)).toBe(PRICE);
    // Sent again, the same transaction is refused: its blockhash can never land now.
    const again = await post(payload, body('expired', agent));
    expect(again.status).toBe(402);
    expect(await chain.balance(b.signer.address)).toBe(PRICE);
  });

  it('not confirmed within the wait: 202 and invisible; confirmed later → published, and the same payment gets the receipt', async () => {
    const b = await newBuyer(PRICE);
    const agent = agentId('slow');
    const payload = await b.client.createPaymentPayload(await paymentRequired());
    chain.hold();
    let pending: { code: string; verification_id: string; transaction: string };
    try {
      const r = await post(payload, body('slow', agent));
      expect(r.status).toBe(202);
      const text = await r.text();
      expect(text).not.toMatch(/nothing was charged/i);
      pending = JSON.parse(text) as typeof pending;
      expect(pending.code).toBe('settlement_pending');
      expect(pending.transaction).toBeTruthy();
      expect(await visible(pending.verification_id)).toBe(false);
      expect(await logged(pending.verification_id)).toBe(false);
      expect(await reputationOf(agent)).toBe(0);
      // Still unknown: the same payment is told it is pending, and nothing runs again.
      expect((await post(payload, body('slow', agent))).status).toBe(202);
    } finally {
      chain.release();
    }
    expect(chain.landed().get(pending.transaction)).toMatchObject({ err: null });
    expect(await chain.balance(b.signer.address)).toBe(0n);
    // The periodic reconciliation publishes it by the transaction's signature status.
    await until(() => visible(pending.verification_id));
    expect(await logged(pending.verification_id)).toBe(true);
    expect(await reputationOf(agent)).toBe(1);
    const retry = await post(payload, body('slow', agent));
    expect(retry.status).toBe(200);
    expect((JSON.parse(await retry.text()) as { verification_id: string }).verification_id).toBe(pending.verification_id);
    expect(await chain.balance(b.signer.address)).toBe(0n);
  });

  it('not confirmed, then its blockhash expires without it landing: voided, never visible, nothing charged', async () => {
    const b = await newBuyer(PRICE);
    const agent = agentId('dropped');
    const payload = await b.client.createPaymentPayload(await paymentRequired());
    chain.hold();
    let pending: { verification_id: string; transaction: string };
    try {
      const r = await post(payload, body('dropped', agent));
      expect(r.status).toBe(202);
      pending = (await r.json()) as typeof pending;
    } finally {
      chain.expireBlockhash();
      expect(chain.dropHeld()).toBe(1);
    }
    const voidedFor = async () => (await app.store.paymentEvents({ verificationId: pending.verification_id })).some((e) => e.kind === 'voided');
    await until(voidedFor);
    expect(await visible(pending.verification_id)).toBe(false);
    expect(await logged(pending.verification_id)).toBe(false);
    expect(await reputationOf(agent)).toBe(0);
    expect(chain.landed().has(pending.transaction)).toBe(false);
    expect(await chain.balance(b.signer.address)).toBe(PRICE);
  });

  it('the answer to the send is lost but the transaction lands: confirmed by its signature, 200 with the receipt', async () => {
    const b = await newBuyer(PRICE);
    const agent = agentId('lost');
    const payload = await b.client.createPaymentPayload(await paymentRequired());
    chain.loseNextSendAnswer();
    const r = await post(payload, body('lost', agent));
    expect(r.status).toBe(200);
    const settlement = decodePaymentResponseHeader(r.headers.get('payment-response')!);
    expect(chain.landed().get(settlement.transaction)).toMatchObject({ err: null });
    expect(await chain.balance(b.signer.address)).toBe(0n);
    expect(await reputationOf(agent)).toBe(1);
  });

  it('garbage payloads: 402 payment_invalid, never 5xx, nothing moves', async () => {
    const b = await newBuyer(PRICE);
    const good = await b.client.createPaymentPayload(await paymentRequired());
    const tx = (good.payload as { transaction: string }).transaction;
    const bytes = Buffer.from(tx, 'base64');
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 5] ^= 0xff;
    const garbage: Array<PaymentPayload | string> = [
      { ...good, payload: { transaction: 'not base64 at all ###' } },
      { ...good, payload: { transaction: Buffer.from('hello').toString('base64') } },
      { ...good, payload: { transaction: bytes.subarray(0, 40).toString('base64') } },
      { ...good, payload: { transaction: flipped.toString('base64') } },
      { ...good, payload: { transaction: 42 } } as unknown as PaymentPayload,
      { ...good, payload: {} },
      { ...good, accepted: { ...good.accepted, amount: '1' } },
      'not-a-payment-header',
    ];
    for (const [i, payload] of garbage.entries()) {
      const r = await post(payload, body(`garbage-${i}`, agentId('garbage')));
      expect(r.status, `garbage #${i}`).toBe(402);
      expect(((await r.json()) as { code: string }).code, `garbage #${i}`).toBe('payment_invalid');
    }
    expect(await chain.balance(b.signer.address)).toBe(PRICE);
  });

  // Last: it replaces the service with a new one on the same data directory.
  it('pending when the service stops: reconciled at the next start from the signature status', async () => {
    const b = await newBuyer(PRICE);
    const agent = agentId('restart');
    const payload = await b.client.createPaymentPayload(await paymentRequired());
    const port = Number(new URL(base).port);
    chain.hold();
    let pending: { verification_id: string };
    try {
      const r = await post(payload, body('restart', agent));
      expect(r.status).toBe(202);
      pending = (await r.json()) as typeof pending;
      await app.close();
    } finally {
      chain.release();
    }
    expect(await chain.balance(b.signer.address)).toBe(0n);
    // No periodic pass in this service's lifetime: only the one at start-up.
    app = await createApp(loadConfig(svmEnv(tmp.dir, port)), { logger: false, reconcileIntervalMs: 3_600_000 });
    await app.app.listen({ host: '127.0.0.1', port });
    await until(() => visible(pending.verification_id));
    expect(await reputationOf(agent)).toBe(1);
    expect((await post(payload, body('restart', agent))).status).toBe(200);
    expect(await chain.balance(b.signer.address)).toBe(0n);
  });
});
