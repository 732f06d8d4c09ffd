/**
 * @module Solana payments at the gate: the buyer builds a real USDC
 * TransferChecked transaction with the official @x402/svm client (mint metadata
 * from a loopback JSON-RPC stub); the built-in facilitator runs the official
 * `exact` SVM verification (layout, amounts, destination token account,
 * signatures checked cryptographically) and co-signs as fee payer; "sending" is
 * recorded in memory. The gate's replay key is the payer's transaction
 * signature. Settlement on a real Solana VM: test/payments-svm.test.ts.
 */
import { receipt } from './store-contract.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload } from '@x402/core/types';
import { ExactSvmScheme as ExactSvmClientScheme } from '@x402/svm/exact/client';
import type { FacilitatorSvmSigner } from '@x402/svm';
import {
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getTransactionDecoder,
  partiallySignTransaction,
  type KeyPairSigner,
} from '@solana/kit';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePaymentConfig, SOLANA_MAINNET, SOLANA_USDC } from '../src/payments/config.js';
import { createFacilitatorServer, createLocalFacilitator } from '../src/payments/local-facilitator.js';
import { createPaymentGate, type PaymentGate } from '../src/payments/gate.js';
import { createSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const PAY_TO = 'So11111111111111111111111111111111111111112';
const RESOURCE = { url: 'http://127.0.0.1/verify/schema', method: 'POST' as const };
/** What the paid requests are named by (a request_hash): one payment is bound to one. */
const REQUEST = 'e'.repeat(64);
const requestNo = (i: number): string => i.toString(16).padStart(64, '0');

/** SPL mint account data: authority option + authority, supply, decimals 6, initialized. */
function mintAccountData(): string {
  const data = Buffer.alloc(82);
  data.writeUInt32LE(1, 0);
  data.writeBigUInt64LE(10n ** 15n, 36);
  data[44] = 6;
  data[45] = 1;
  return data.toString('base64');
}

/** The two read calls the official client makes: the mint, and a recent blockhash. */
function startRpcStub(): Promise<Server> {
  const blockhash = getBase58Decoder().decode(randomBytes(32));
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const msg = JSON.parse(raw) as { id: number; method: string };
      const ctx = { context: { slot: 1 } };
      let result: unknown;
      if (msg.method === 'getAccountInfo') {
        result = { ...ctx, value: { data: [mintAccountData(), 'base64'], executable: false, lamports: 1461600, owner: TOKEN_PROGRAM, rentEpoch: 0, space: 82 } };
      } else if (msg.method === 'getLatestBlockhash') {
        result = { ...ctx, value: { blockhash, lastValidBlockHeight: 1000 } };
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(result === undefined ? { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'no' } } : { jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A fee-payer signer that really signs, and records "sent" transactions instead of broadcasting. */
function memorySvmSigner(feePayer: KeyPairSigner): FacilitatorSvmSigner & { sent: string[] } {
  const sent: string[] = [];
  const decode = (b64: string) => getTransactionDecoder().decode(getBase64Encoder().encode(b64));
  return {
    sent,
    getAddresses: () => [feePayer.address],
    async signTransaction(transaction) {
      const signed = await partiallySignTransaction([feePayer.keyPair], decode(transaction) as Parameters<typeof partiallySignTransaction>[1]);
      return getBase64EncodedWireTransaction(signed);
    },
    async simulateTransaction() {
      // No cluster offline: the static verification and signature checks have already run.
    },
    async sendTransaction(transaction) {
      const tx = decode(transaction);
      if (Object.values(tx.signatures).some((s) => s === null)) throw new Error('transaction not fully signed');
      sent.push(transaction);
      return getBase58Decoder().decode(tx.signatures[feePayer.address]!);
    },
    async confirmTransaction() {},
  } as FacilitatorSvmSigner & { sent: string[] };
}

let rpc: Server;
let facilitator: FastifyInstance;
let svmSigner: ReturnType<typeof memorySvmSigner>;
let gate: PaymentGate;
let store: Store;
let dir: string;
let buyer: KeyPairSigner;
let buyerClient: x402Client;
let feePayer: KeyPairSigner;

beforeAll(async () => {
  rpc = await startRpcStub();
  feePayer = await generateKeyPairSigner();
  buyer = await generateKeyPairSigner();
  svmSigner = memorySvmSigner(feePayer);
  facilitator = await createFacilitatorServer(createLocalFacilitator({ svmSigner, svmNetworks: [SOLANA_MAINNET] }));
  const url = await facilitator.listen({ host: '127.0.0.1', port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'aov-pay-sol-'));
  store = createSqliteStore({ file: join(dir, 'db.sqlite'), synchronous: 'NORMAL' });
  await store.migrate();
  const config = parsePaymentConfig({ X402_ENABLED: 'true', X402_FACILITATOR_URL: url, X402_NETWORKS: 'solana', X402_PAY_TO_SOLANA: PAY_TO });
  gate = createPaymentGate({ config, store, facilitator: new HTTPFacilitatorClient({ url }) });
  await gate.initialize();
  const rpcUrl = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`;
  buyerClient = new x402Client().register(SOLANA_MAINNET, new ExactSvmClientScheme(buyer, { rpcUrl }));
});

afterAll(async () => {
  await facilitator?.close();
  await store?.close();
  rpc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function pay(): Promise<PaymentPayload> {
  return buyerClient.createPaymentPayload(await gate.paymentRequired('verify', RESOURCE));
}

describe('Solana (offline)', () => {
  it('the requirements name USDC, 20000 and the facilitator fee payer', async () => {
    const pr = await gate.paymentRequired('verify', RESOURCE);
    expect(pr.accepts).toEqual([expect.objectContaining({ network: SOLANA_MAINNET, asset: SOLANA_USDC, amount: '20000', payTo: PAY_TO, extra: { feePayer: feePayer.address } })]);
  });

  it('a real signed transfer is verified by the official SVM scheme, reserved by its signature, co-signed and sent once', async () => {
    const payload = await pay();
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode((payload.payload as { transaction: string }).transaction));
    const buyerSig = Buffer.from(tx.signatures[buyer.address]!).toString('hex');
    // Twenty different requests carrying the one payment: it is bound to one of them; the others are refused.
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => gate.authorize('verify', RESOURCE, structuredClone(payload), requestNo(i))));
    const winners = results.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'payment_used_for_another_request')).toBe(true);
    const w = winners[0];
    if (!w.ok) return;
    expect(w.ticket.key).toEqual({ network: SOLANA_MAINNET, payer: buyer.address, nonce: buyerSig });
    const settled = await gate.settle(w.ticket, receipt(null, '2026-03-01T10:00:00Z', 'pass', { verificationId: 'sol-1' }));
    expect(settled.ok).toBe(true);
    if (!settled.ok) return;
    expect(settled.settlement).toMatchObject({ success: true, network: SOLANA_MAINNET, payer: buyer.address });
    expect(svmSigner.sent).toHaveLength(1);
    expect((await store.paymentEvents({ verificationId: 'sol-1' })).map((e) => [e.kind, e.detail])).toEqual([['settled', settled.settlement.transaction]]);
    // Used for good: another request is refused; the request it paid for gets its receipt back.
    const winner = results.indexOf(w);
    expect(await gate.authorize('verify', RESOURCE, payload, requestNo(winner + 1))).toMatchObject({ ok: false, reason: 'payment_used_for_another_request' });
    expect(await gate.authorize('verify', RESOURCE, payload, requestNo(winner))).toMatchObject({ ok: false, reason: 'paid_receipt' });
  });

  it('a transaction whose signature does not match is refused by the facilitator', async () => {
    const payload = await pay();
    const bytes = Buffer.from((payload.payload as { transaction: string }).transaction, 'base64');
    bytes[1 + 64 + 10] ^= 0xff; // corrupt the buyer's signature (slot 2; slot 1 is the fee payer's)
    (payload.payload as { transaction: string }).transaction = bytes.toString('base64');
    const r = await gate.authorize('verify', RESOURCE, payload, REQUEST);
    expect(r).toMatchObject({ ok: false, reason: 'payment_verification_failed' });
  });
});
