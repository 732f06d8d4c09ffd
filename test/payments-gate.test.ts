/**
 * @module Fast payment layer: the gate against the built-in facilitator (served
 * over HTTP on 127.0.0.1) on the in-memory chain, a real SQLite store and the
 * official x402 buyer client. Covers requirements, paying, replay, windows,
 * settlement failure and the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import type { FacilitatorClient } from '@x402/core/server';
import { BASE_USDC, SOLANA_USDC } from '../src/payments/config.js';
import type { ReceiptRecord } from '../src/store/store.js';
import { createPaymentFixture, PAY_TO_EVM, PAY_TO_SOLANA, SOLANA_FEE_PAYER, type PaymentFixture } from './payments-helpers.js';

const RESOURCE = { url: 'http://127.0.0.1/verify/schema', description: 'Verify an agent output', method: 'POST' as const };
/** What the paid requests are named by (a request_hash): one payment is bound to one. */
const REQUEST = 'e'.repeat(64);
const requestNo = (i: number): string => i.toString(16).padStart(64, '0');

/** The receipt a paid call produced, as the gate gets it (stored pending, published when settled). */
function rec(verificationId: string, agentId: string | null = 'gate-agent'): ReceiptRecord {
  return {
    verificationId,
    agentId,
    taskId: `task-${verificationId}`,
    result: 'pass',
    overallRatio: 1,
    verifiedAt: '2026-03-01T10:00:00Z',
    keyVersion: 'k1',
    receipt: JSON.stringify({ verification_id: verificationId }),
  };
}

let f: PaymentFixture;
beforeAll(async () => {
  f = await createPaymentFixture();
});
afterAll(async () => {
  await f?.close();
});

async function pay(route: 'verify' | 'score' = 'verify', client = f.buyerClient): Promise<PaymentPayload> {
  const pr = await f.gate.paymentRequired(route, RESOURCE);
  return client.createPaymentPayload(pr);
}

describe('payment requirements', () => {
  it('lists Base and Solana USDC with atomic amounts, the SDK EIP-712 domain and the facilitator fee payer', async () => {
    const pr = await f.gate.paymentRequired('verify', RESOURCE);
    expect(pr.x402Version).toBe(2);
    expect(pr.resource.url).toBe(RESOURCE.url);
    expect(pr.accepts).toHaveLength(2);
    const [base, sol] = pr.accepts;
    expect(base).toMatchObject({ scheme: 'exact', network: 'eip155:8453', amount: '20000', asset: BASE_USDC, payTo: PAY_TO_EVM, maxTimeoutSeconds: 300 });
    expect(base.extra).toMatchObject({ name: 'USD Coin', version: '2' });
    expect(sol).toMatchObject({ scheme: 'exact', network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', amount: '20000', asset: SOLANA_USDC, payTo: PAY_TO_SOLANA });
    expect(sol.extra.feePayer).toBe(SOLANA_FEE_PAYER);
    const score = await f.gate.paymentRequired('score', { url: 'http://127.0.0.1/score/a', method: 'GET' });
    expect(score.accepts.map((a) => a.amount)).toEqual(['10000', '10000']);
  });

  it('declares the bazaar discovery extension with the route input and output', async () => {
    const pr = await f.gate.paymentRequired('verify', RESOURCE);
    const bazaar = pr.extensions?.bazaar as { info: { input: Record<string, unknown>; output: Record<string, unknown> } };
    expect(bazaar.info.input).toMatchObject({ type: 'http', method: 'POST', bodyType: 'json' });
    // The output declaration: an example receipt (shape only; values are placeholders).
    expect(bazaar.info.output).toEqual({
      type: 'json',
      example: expect.objectContaining({
        summary: { result: 'pass', blocking_checks: [] },
        result: 'pass',
        verification_id: '00000000-0000-4000-8000-000000000000',
        attestation: expect.objectContaining({ algorithm: 'Ed25519' }),
      }),
    });
    const mcp = await f.gate.paymentRequired('verify', { url: 'mcp://tool/verify_schema', transport: 'mcp' });
    expect((mcp.extensions?.bazaar as { info: { input: Record<string, unknown> } }).info.input).toMatchObject({ type: 'mcp', toolName: 'verify_schema' });
  });

  it('reflects configured prices', async () => {
    const g = await createPaymentFixture({ X402_PRICE_VERIFY: '$0.05', X402_NETWORKS: 'base' });
    try {
      const prices = await g.gate.prices();
      expect(prices.find((p) => p.route === 'verify')).toMatchObject({ price: '$0.05' });
      expect(prices.find((p) => p.route === 'verify')!.accepts.map((a) => a.amount)).toEqual(['50000']);
    } finally {
      await g.close();
    }
  });
});

describe('paying', () => {
  it('verifies, reserves, settles on chain and writes the ledger', async () => {
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const payload = await pay();
    const auth = await f.gate.authorize('verify', RESOURCE, payload, REQUEST);
    expect(auth.ok).toBe(true);
    if (!auth.ok) return;
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before); // nothing moves before the work is done
    const settled = await f.gate.settle(auth.ticket, rec('vid-1'));
    expect(settled.ok).toBe(true);
    if (!settled.ok) return;
    expect(settled.settlement).toMatchObject({ success: true, network: 'eip155:8453' });
    expect(settled.settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
    const events = await f.store.paymentEvents({ verificationId: 'vid-1' });
    expect(events.map((e) => e.kind)).toEqual(['settled']);
    expect(events[0].detail).toBe(settled.settlement.transaction);
    // Settled: the receipt is published.
    expect(await f.store.getReceipt('vid-1')).toBe(JSON.stringify({ verification_id: 'vid-1' }));
    expect(await f.store.pendingSettlementFor('vid-1')).toBeNull();
    const all = await f.store.paymentEvents();
    expect(all.filter((e) => e.key.nonce === auth.ticket.key.nonce).map((e) => e.kind)).toEqual(['verified', 'settled']);
    // A used authorization is refused afterwards for another request; its own gets the receipt again.
    expect(await f.gate.authorize('verify', RESOURCE, payload, requestNo(1))).toMatchObject({ ok: false, reason: 'payment_used_for_another_request' });
    expect(await f.gate.authorize('verify', RESOURCE, payload, REQUEST)).toMatchObject({ ok: false, reason: 'paid_receipt' });
  });

  it('lets exactly one of 50 concurrent uses of the same payment through, bound to its request', async () => {
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const payload = await pay();
    // 25 copies of one request and 25 other requests, all at once.
    const requests = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? REQUEST : requestNo(i)));
    const results = await Promise.all(requests.map((r) => f.gate.authorize('verify', RESOURCE, structuredClone(payload), r)));
    const winners = results.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    const w = winners[0];
    if (!w.ok) return;
    const bound = requests[results.indexOf(w)]!;
    results.forEach((r, i) => {
      if (r === w) return;
      if (requests[i] === bound) {
        // Its own request, while that one runs: under way, not refused (and nothing to fetch yet).
        expect(r).toMatchObject({ ok: false, reason: 'settlement_pending', pending: { verificationId: null } });
      } else {
        expect(r).toMatchObject({ ok: false, reason: 'payment_used_for_another_request' });
      }
    });
    expect((await f.gate.settle(w.ticket, rec('vid-50'))).ok).toBe(true);
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
    const replays = (await f.store.paymentEvents()).filter((e) => e.key.nonce === w.ticket.key.nonce && e.kind === 'replay_rejected');
    expect(replays).toHaveLength(requests.filter((r) => r !== bound).length);
    // Settled: its own request gets the receipt it bought, any other is refused.
    expect(await f.gate.authorize('verify', RESOURCE, payload, bound)).toMatchObject({ ok: false, reason: 'paid_receipt', receipt: JSON.stringify({ verification_id: 'vid-50' }) });
    expect(await f.gate.authorize('verify', RESOURCE, payload, requestNo(1000))).toMatchObject({ ok: false, reason: 'payment_used_for_another_request' });
  });

  it('releases the reservation when the work fails, so the same payment can be retried', async () => {
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const payload = await pay();
    const first = await f.gate.authorize('verify', RESOURCE, payload, REQUEST);
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    await f.gate.cancel(first.ticket, 'internal_error');
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before);
    const second = await f.gate.authorize('verify', RESOURCE, payload, REQUEST);
    expect(second.ok).toBe(true);
    if (!second.ok) return;
    expect((await f.gate.settle(second.ticket, rec('vid-retry'))).ok).toBe(true);
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
  });

  it('releases the reservation when settlement fails and reports it', async () => {
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const payload = await pay();
    const auth = await f.gate.authorize('verify', RESOURCE, payload, REQUEST);
    if (!auth.ok) throw new Error(auth.message);
    f.chain.failNextWrites(1);
    const s = await f.gate.settle(auth.ticket, rec('vid-fail'));
    expect(s.ok).toBe(false);
    if (s.ok || s.pending) throw new Error('expected a failed settlement');
    expect(s.paymentRequired.x402Version).toBe(2);
    expect(s.message).toMatch(/Settlement failed/);
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before);
    const kinds = (await f.store.paymentEvents({ verificationId: 'vid-fail' })).map((e) => e.kind);
    expect(kinds).toEqual(['settle_failed', 'voided']);
    // No receipt anywhere: not published, not pending.
    expect(await f.store.getReceipt('vid-fail')).toBeNull();
    expect(await f.store.pendingSettlementFor('vid-fail')).toBeNull();
    const retry = await f.gate.authorize('verify', RESOURCE, payload, REQUEST);
    expect(retry.ok).toBe(true);
    if (retry.ok) await f.gate.cancel(retry.ticket, 'test');
  });
});

describe('refusing payments', () => {
  it('refuses a payment for a cheaper route', async () => {
    const payload = await pay('score');
    const r = await f.gate.authorize('verify', RESOURCE, payload, REQUEST);
    expect(r).toMatchObject({ ok: false, reason: 'no_matching_requirements' });
  });

  it('refuses a tampered signature without moving funds', async () => {
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const payload = await pay();
    const auth = (payload.payload as { authorization: Record<string, string> }).authorization;
    auth.to = PAY_TO_EVM.replace(/1$/, '2');
    const r = await f.gate.authorize('verify', RESOURCE, payload, REQUEST);
    expect(r.ok).toBe(false);
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before);
  });

  it('refuses an authorization valid for longer than maxTimeoutSeconds', async () => {
    const pr = await f.gate.paymentRequired('verify', RESOURCE);
    const long: PaymentRequired = { ...pr, accepts: [{ ...pr.accepts[0], maxTimeoutSeconds: 3600 }] };
    const payload = await f.buyerClient.createPaymentPayload(long);
    payload.accepted = pr.accepts[0];
    const r = await f.gate.authorize('verify', RESOURCE, payload, REQUEST);
    expect(r).toMatchObject({ ok: false, reason: 'authorization_window_too_long' });
  });

  it('refuses a payer without funds, verified by the facilitator', async () => {
    const { generatePrivateKey, privateKeyToAccount } = await import('viem/accounts');
    const poor = new x402Client().register('eip155:8453', new ExactEvmClientScheme(privateKeyToAccount(generatePrivateKey())));
    const r = await f.gate.authorize('verify', RESOURCE, await pay('verify', poor), REQUEST);
    expect(r).toMatchObject({ ok: false, reason: 'payment_verification_failed' });
    if (!r.ok) expect(r.message).toMatch(/insufficient_balance/);
  });

  it('refuses garbage and unsupported versions with a PaymentRequired to retry with', async () => {
    for (const bad of [null, 'x', { x402Version: 2 }, { x402Version: 2, payload: {}, accepted: 'no' }]) {
      const r = await f.gate.authorize('verify', RESOURCE, bad, REQUEST);
      expect(r).toMatchObject({ ok: false, reason: 'invalid_payment' });
      if (!r.ok && 'paymentRequired' in r) expect(r.paymentRequired.accepts).toHaveLength(2);
    }
    const v1 = await f.gate.authorize('verify', RESOURCE, { x402Version: 1, payload: {}, scheme: 'exact', network: 'base' }, REQUEST);
    expect(v1).toMatchObject({ ok: false, reason: 'unsupported_version' });
  });
});

describe('a facilitator answering with text of its own', () => {
  it("is told to the buyer as a reason code and a sentence, verify and settle; the ledger keeps the facilitator's text", async () => {
    const { createPaymentGate } = await import('../src/payments/gate.js');
    const junk = 'Error: connect ECONNREFUSED 10.0.0.7:8545\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)\nVersion: viem@2.57.20';
    let refuse = true;
    const facilitator: FacilitatorClient = {
      getSupported: () => f.local.getSupported(),
      verify: async (payload, requirements) => (refuse ? { isValid: false, invalidReason: junk, invalidMessage: junk } : f.local.verify(payload, requirements)),
      settle: async (_payload, requirements) => ({ success: false, errorReason: junk, errorMessage: junk, transaction: junk, network: requirements.network }),
    };
    const gate = createPaymentGate({ config: f.config, store: f.store, facilitator });
    await gate.initialize();
    const payload = await pay();
    const refused = await gate.authorize('verify', RESOURCE, payload, REQUEST);
    expect(refused).toMatchObject({ ok: false, reason: 'payment_verification_failed', message: 'The facilitator rejected the payment (payment_verification_failed): The facilitator did not accept the payment.' });
    expect(JSON.stringify(refused)).not.toMatch(/ECONNREFUSED|viem|\bat /);
    refuse = false;
    const auth = await gate.authorize('verify', RESOURCE, payload, REQUEST);
    if (!auth.ok) throw new Error(auth.message);
    const failed = await gate.settle(auth.ticket, rec('vid-junk'));
    expect(failed).toMatchObject({
      ok: false,
      message: 'Settlement failed (settlement_failed): The settlement did not go through. Nothing was charged and no receipt was issued.',
      settlement: { success: false, errorReason: 'settlement_failed', errorMessage: 'The settlement did not go through.', transaction: '', network: 'eip155:8453' },
    });
    expect(JSON.stringify(failed)).not.toMatch(/ECONNREFUSED|viem|\bat /);
    const events = (await f.store.paymentEvents()).filter((e) => e.key.nonce === auth.ticket.key.nonce);
    expect(events.find((e) => e.kind === 'verify_failed')?.detail).toContain('ECONNREFUSED');
    expect(events.find((e) => e.kind === 'settle_failed')?.detail).toContain('Version: viem@2.57.20');
    expect(events.find((e) => e.kind === 'voided')?.detail).toBe('settlement_failed');
  });
});

describe('facilitator outage', () => {
  it('is a retryable 503 unavailable, never a charge', async () => {
    const { createPaymentGate } = await import('../src/payments/gate.js');
    const { HTTPFacilitatorClient } = await import('@x402/core/server');
    const down = createPaymentGate({ config: f.config, store: f.store, facilitator: new HTTPFacilitatorClient({ url: 'http://127.0.0.1:9', timeoutMs: 2000 }) });
    await expect(down.paymentRequired('verify', RESOURCE)).rejects.toMatchObject({ code: 'unavailable', status: 503 });
    await expect(down.authorize('verify', RESOURCE, await pay(), REQUEST)).rejects.toMatchObject({ code: 'unavailable' });
  });
});

describe('facilitator HTTP endpoints', () => {
  it('serves /supported with the EVM kind and the Solana fee payer', async () => {
    const res = await fetch(`${f.facilitatorUrl}/supported`);
    const body = (await res.json()) as { kinds: Array<{ network: string; scheme: string; extra?: Record<string, unknown> }> };
    expect(body.kinds).toContainEqual(expect.objectContaining({ scheme: 'exact', network: 'eip155:8453' }));
    const sol = body.kinds.find((k) => k.network.startsWith('solana:'));
    expect(sol?.extra?.feePayer).toBe(SOLANA_FEE_PAYER);
  });

  it('answers a malformed /verify with 400 and a real one with a verdict', async () => {
    const bad = await fetch(`${f.facilitatorUrl}/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(bad.status).toBe(400);
    const payload = await pay();
    const res = await fetch(`${f.facilitatorUrl}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ isValid: true, payer: f.buyer.address });
  });
});
