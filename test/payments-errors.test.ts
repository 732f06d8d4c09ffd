/**
 * @module What a buyer learns when a payment fails, on a real EVM (Hardhat in process, the built-in facilitator
 * settling real transactions): a stable reason (`invalid_exact_evm_insufficient_balance`) and one sentence, never
 * the library's exception — no contract call with its arguments, no settling account, no documentation URL, no
 * library version, no stack — on every transport (REST, MCP, the batch route, A2A) and on the built-in
 * facilitator's own routes, for refused payments as for failed settlements. The full text stays in the server log
 * and the payment ledger.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { BASE_USDC } from '../src/payments/config.js';
import { HARDHAT_KEY_1, localBase, startHardhatBase, type HardhatBase } from './evm/chain.js';
import { freePort, projectRoot, tempDir } from './http-helpers.js';
import { localEvmPaymentEnv, withMcpClient } from './payments-helpers.js';

const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as Record<string, unknown>;
const json = { 'content-type': 'application/json' };
const PRICE = 20_000n;
const ROUTES_TOKEN = 'errors-test-facilitator-routes-token-0123456789';
/** The account that submits settlements (pays gas): its address must never reach a client. */
const SETTLER = privateKeyToAccount(HARDHAT_KEY_1).address;
const BALANCE_REASON = 'invalid_exact_evm_insufficient_balance';

let hh: HardhatBase;
let app: App;
let base: string;
let dir: ReturnType<typeof tempDir>;
const logLines: string[] = [];

beforeAll(async () => {
  hh = await startHardhatBase();
  dir = tempDir('aov-pay-errors-');
  const port = await freePort();
  const config = loadConfig({
    ...localEvmPaymentEnv(dir.dir, port, HARDHAT_KEY_1, 'warn'),
    X402_FACILITATOR_ROUTES: 'true',
    X402_FACILITATOR_ROUTES_TOKEN: ROUTES_TOKEN,
  });
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  app = await createApp(config, { logger: { level: 'warn', stream }, payments: { evmSigner: hh.signerFor(HARDHAT_KEY_1, 10_000) }, reconcileIntervalMs: 3_600_000 });
  await app.app.listen({ host: '127.0.0.1', port });
  base = `http://127.0.0.1:${port}`;
}, 120_000);
afterAll(async () => {
  await app?.close();
  dir?.cleanup();
});

/** Everything of a library exception or a stack that must not reach a client. */
function expectNoInternals(text: string): void {
  expect(text).not.toMatch(/viem/i);
  expect(text).not.toMatch(/Version:/);
  expect(text).not.toMatch(/Contract Call:|Request Arguments:|Estimate Gas Arguments:|Details:|Docs:/);
  expect(text).not.toMatch(/\bsender:/i);
  // Our own URLs and the JSON Schema dialect of the discovery declaration; nothing else (no documentation links).
  expect(text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|json-schema\.org\/draft\/2020-12\/schema\b)/);
  expect(text).not.toMatch(/\n\s+at |\bat [\w.<>]+ \(/);
  expect(text).not.toMatch(/VM Exception|reverted with reason/i);
  expect(text.toLowerCase()).not.toContain(SETTLER.toLowerCase());
  expect(text.toLowerCase()).not.toContain(SETTLER.slice(2).toLowerCase());
}

/** A response's status line, headers (the x402 ones decoded) and body, as one text. */
async function responseText(r: Response): Promise<string> {
  const headers = [...r.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
  const required = r.headers.get('payment-required');
  const decoded = required ? JSON.stringify(decodePaymentRequiredHeader(required)) : '';
  return `${r.status}\n${headers}\n${decoded}\n${await r.text()}`;
}

interface Buyer {
  account: PrivateKeyAccount;
  client: x402Client;
}

async function buyer(funds: bigint): Promise<Buyer> {
  const account = privateKeyToAccount(generatePrivateKey());
  if (funds > 0n) await hh.mint(account.address, funds);
  await hh.provider.request({ method: 'hardhat_setBalance', params: [account.address, '0xde0b6b3a7640000'] });
  return { account, client: new x402Client().register('eip155:8453', new ExactEvmClientScheme(account)) };
}

async function paymentFor(b: Buyer, route = '/verify/schema', unpaidBody?: string): Promise<PaymentPayload> {
  const r = await fetch(`${base}${route}`, { method: 'POST', ...(unpaidBody ? { headers: json, body: unpaidBody } : {}) });
  return b.client.createPaymentPayload(decodePaymentRequiredHeader(r.headers.get('payment-required')!) as PaymentRequired);
}

const post = (payload: PaymentPayload, requestBody: string, route = '/verify/schema') =>
  fetch(`${base}${route}`, { method: 'POST', headers: { ...json, 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) }, body: requestBody });

/** While the next verification is worked on (its payment verified and reserved), the buyer moves its funds away. */
function drainDuringWork(b: Buyer): void {
  const runner = app.runner;
  const original = runner.run.bind(runner);
  runner.run = async (prepared) => {
    runner.run = original;
    const hash = await hh.wallet(b.account).writeContract({
      address: BASE_USDC,
      abi: hh.token.abi,
      functionName: 'transfer',
      args: [privateKeyToAccount(generatePrivateKey()).address, await hh.balanceOf(b.account.address)],
      account: b.account,
      chain: localBase,
    });
    await hh.publicClient.waitForTransactionReceipt({ hash });
    return original(prepared);
  };
}

function mcp<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  return withMcpClient(base, 'errors-buyer', fn);
}

async function ledgerDetails(b: Buyer, kind: string): Promise<string[]> {
  return (await app.store.paymentEvents()).filter((e) => e.kind === kind && e.key.payer === b.account.address.toLowerCase()).map((e) => e.detail ?? '');
}

describe('failed settlements and refused payments tell a reason, not the library', () => {
  it('REST: a settlement that reverts for want of funds → 402 settlement_failed with the reason and a sentence; the full text in the log and the ledger', async () => {
    const b = await buyer(PRICE);
    const payload = await paymentFor(b);
    const before = logLines.length;
    drainDuringWork(b);
    const r = await post(payload, JSON.stringify({ ...INVOICE, task_id: 'rest-drained' }));
    const text = await responseText(r.clone());
    expect(r.status).toBe(402);
    const body = (await r.json()) as { code: string; message: string; settlement: Record<string, unknown> };
    expect(body.code).toBe('settlement_failed');
    expect(body.settlement).toEqual({
      success: false,
      errorReason: BALANCE_REASON,
      errorMessage: "The payer's balance is too low for this payment.",
      transaction: '',
      network: 'eip155:8453',
      payer: b.account.address,
    });
    expect(body.message).toContain(BALANCE_REASON);
    expectNoInternals(text);
    // The operator keeps the whole exception.
    const [failed] = await ledgerDetails(b, 'settle_failed');
    expect(failed).toMatch(new RegExp(`^${BALANCE_REASON}: `));
    expect(failed).toMatch(/Contract Call:|Version: viem/);
    const logged = logLines.slice(before).filter((line) => line.includes('x402 settlement failed'));
    expect(logged.some((line) => /Contract Call:.*Version: viem/s.test(line))).toBe(true);
  }, 60_000);

  it('MCP: the same failure is isError settlement_failed with nothing of the exception in the result', async () => {
    const b = await buyer(PRICE);
    const payload = await paymentFor(b);
    drainDuringWork(b);
    const result = await mcp((client) =>
      client.callTool({ name: 'verify_schema', arguments: { ...INVOICE, task_id: 'mcp-drained' }, _meta: { 'x402/payment': payload } }) as Promise<CallToolResult>,
    );
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({ code: 'settlement_failed', 'x402/payment-response': { errorReason: BALANCE_REASON } });
    expectNoInternals(JSON.stringify(result));
    expect((await ledgerDetails(b, 'settle_failed'))[0]).toMatch(/Contract Call:|Version: viem/);
  }, 60_000);

  it('batch: a paid batch whose settlement fails → 402 settlement_failed without the exception', async () => {
    const b = await buyer(PRICE * 2n);
    const batch = JSON.stringify({
      expected_schema: { type: 'object' },
      items: [0, 1].map((i) => ({ task_id: `batch-drained-${i}`, submitted_output: { i } })),
    });
    const payload = await paymentFor(b, '/verify/batch', batch);
    drainDuringWork(b);
    const r = await post(payload, batch, '/verify/batch');
    const text = await responseText(r.clone());
    expect(r.status).toBe(402);
    expect(((await r.json()) as { settlement: { errorReason: string } }).settlement.errorReason).toBe(BALANCE_REASON);
    expectNoInternals(text);
  }, 60_000);

  it('a payer without funds is refused at verification: the reason and a sentence, REST and MCP; the simulation error only in the ledger', async () => {
    const b = await buyer(0n);
    const payload = await paymentFor(b);
    const r = await post(payload, JSON.stringify({ ...INVOICE, task_id: 'poor' }));
    const text = await responseText(r.clone());
    expect(r.status).toBe(402);
    const body = (await r.json()) as { code: string; message: string };
    expect(body.code).toBe('payment_invalid');
    expect(body.message).toMatch(/^The facilitator rejected the payment \(invalid_exact_evm_[a-z_]+\): [A-Z][^:]+\.$/);
    expectNoInternals(text);
    const result = await mcp((client) =>
      client.callTool({ name: 'verify_schema', arguments: { ...INVOICE, task_id: 'poor-mcp' }, _meta: { 'x402/payment': payload } }) as Promise<CallToolResult>,
    );
    expect(result._meta).toMatchObject({ code: 'payment_invalid' });
    expectNoInternals(JSON.stringify(result));
    // The simulation's own error is kept for the operator.
    expect((await ledgerDetails(b, 'verify_failed'))[0]).toMatch(/^invalid_exact_evm_[a-z_]+: .*(viem|reverted|balance)/s);
  }, 60_000);

  it("the built-in facilitator's routes answer a reason and a sentence too (verify and settle)", async () => {
    const auth = { ...json, authorization: `Bearer ${ROUTES_TOKEN}` };
    const poor = await buyer(0n);
    const payload = await paymentFor(poor);
    const request = JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted });
    const verified = await fetch(`${base}/facilitator/verify`, { method: 'POST', headers: auth, body: request });
    const verifiedText = await responseText(verified.clone());
    const verdict = (await verified.json()) as { isValid: boolean; invalidReason: string; invalidMessage: string };
    expect(verdict).toMatchObject({ isValid: false, invalidReason: expect.stringMatching(/^invalid_exact_evm_[a-z_]+$/) });
    expect(verdict.invalidMessage).toMatch(/^[A-Z][^:]+\.$/);
    expectNoInternals(verifiedText);
    // Settle skips the simulation: the transfer itself fails, with the library's exception underneath.
    const settled = await fetch(`${base}/facilitator/settle`, { method: 'POST', headers: auth, body: request });
    const settledText = await responseText(settled.clone());
    expect(await settled.json()).toMatchObject({ success: false, errorReason: BALANCE_REASON, errorMessage: "The payer's balance is too low for this payment." });
    expectNoInternals(settledText);
  }, 60_000);

  it('A2A: with payments on, a refusal names where to pay and nothing else', async () => {
    const r = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { ...json, 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ data: INVOICE }] } } }),
    });
    const text = await responseText(r);
    expect(text).toMatch(/free_trial_exhausted|payment_required/);
    expectNoInternals(text);
  });
});
