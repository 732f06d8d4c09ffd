/**
 * @module One payment, one call, across instances: several payment gates (each
 * with its own PostgreSQL pool, standing in for instances behind a load balancer)
 * receive the same authorization at once; exactly one reserves it. Skipped when
 * PostgreSQL is not reachable at 127.0.0.1:5432 db `test`.
 */
import { receipt } from './store-contract.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { createPostgresStore, type PostgresStore } from '../src/store/postgres.js';
import { createPaymentGate } from '../src/payments/gate.js';
import { BASE_USDC } from '../src/payments/config.js';
import { createPaymentFixture, type PaymentFixture } from './payments-helpers.js';
import { postgresTestTarget } from './postgres-helpers.js';

const pg = await postgresTestTarget('payments-postgres', 'aov_pay');
const { url: URL, schema, available } = pg;
const RESOURCE = { url: 'http://127.0.0.1/verify/schema', method: 'POST' as const };
/** What the paid requests are named by (a request_hash): one payment is bound to one. */
const requestNo = (i: number): string => i.toString(16).padStart(64, '0');

describe.skipIf(!available)('payments on PostgreSQL', () => {
  let f: PaymentFixture;
  const stores: PostgresStore[] = [];

  beforeAll(async () => {
    f = await createPaymentFixture();
    for (let i = 0; i < 4; i++) stores.push(await createPostgresStore({ connectionString: URL, schema, poolSize: 5 }));
    await stores[0].migrate();
  });
  afterAll(async () => {
    await stores[0]?.dropSchema();
    await Promise.all(stores.map((s) => s.close()));
    await f?.close();
  });

  it('of 40 concurrent uses of one authorization on 4 instances, exactly one is reserved and settled', async () => {
    const gates = stores.map((store) => createPaymentGate({ config: f.config, store, facilitator: new HTTPFacilitatorClient({ url: f.facilitatorUrl }) }));
    await Promise.all(gates.map((g) => g.initialize()));
    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const payload = await f.buyerClient.createPaymentPayload(await gates[0].paymentRequired('verify', RESOURCE));
    // Forty different requests carrying the one payment: it is bound to one of them.
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => gates[i % 4].authorize('verify', RESOURCE, structuredClone(payload), requestNo(i))));
    const winners = results.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    const w = winners[0];
    if (!w.ok) return;
    expect((await gates[1].settle(w.ticket, receipt(null, '2026-03-01T10:00:00Z', 'pass', { verificationId: 'pg-1' }))).ok).toBe(true);
    expect(f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(before - 20000n);
    const events = (await stores[2].paymentEvents()).filter((e) => e.key.nonce === w.ticket.key.nonce);
    expect(events.filter((e) => e.kind === 'replay_rejected')).toHaveLength(39);
    expect(events.filter((e) => e.kind === 'settled')).toHaveLength(1);
    // Settled keys stay used on every instance: refused for another request, the bought receipt for its own.
    const winner = results.indexOf(w);
    expect(await gates[3].authorize('verify', RESOURCE, payload, requestNo(winner + 1))).toMatchObject({ ok: false, reason: 'payment_used_for_another_request' });
    expect(await gates[2].authorize('verify', RESOURCE, payload, requestNo(winner))).toMatchObject({ ok: false, reason: 'paid_receipt' });
  });
});
