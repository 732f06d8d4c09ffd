/**
 * @module The free allowance over real sockets: exact under 200 concurrent
 * requests, durable across a restart on the same data directory, not consumed
 * by invalid requests, refunded when the work fails with an uncoded 5xx, keyed by
 * X-Forwarded-For only behind a trusted proxy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { countUnitWithReceipt, postJson, startApp, tempDir } from './http-helpers.js';
import type { Running } from './http-helpers.js';

const request = JSON.stringify({
  task_id: 'allowance',
  agent_id: 'test-allowance',
  expected_schema: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } },
  submitted_output: { ok: true },
});

describe('HTTP: free allowance', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  it('200 concurrent requests with allowance 50 → exactly 50 × 200 and 150 × 429, still exhausted after restart', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    let srv: Running = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '50' });
    cleanups.push(() => srv.close());

    const responses = await Promise.all(Array.from({ length: 200 }, () => postJson(srv.base, '/verify/schema', request)));
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<any>));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(150);
    for (const [i, r] of responses.entries()) {
      expect(r.headers.get('free-allowance-limit')).toBe('50');
      expect(r.headers.get('free-allowance-resets')).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00Z$/);
      if (r.status === 429) {
        expect(r.headers.get('free-allowance-remaining')).toBe('0');
        const body = bodies[i];
        expect(body.code).toBe('free_allowance_exhausted');
        expect(body.retry_after).toBe(Number(r.headers.get('retry-after')));
        const resets = Date.parse(r.headers.get('free-allowance-resets')!);
        expect(Math.abs(resets - Date.now() - body.retry_after * 1000)).toBeLessThan(5000);
      }
    }
    const remaining = responses.filter((r) => r.status === 200).map((r) => Number(r.headers.get('free-allowance-remaining')));
    expect(new Set(remaining).size).toBe(50);
    expect(Math.min(...remaining)).toBe(0);

    await srv.close();
    srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '50' });
    const again = await postJson(srv.base, '/verify/schema', request);
    expect(again.status).toBe(429);
    expect(again.headers.get('free-allowance-remaining')).toBe('0');
  });

  it('an invalid request does not consume; a valid one does; trusted proxy keys by X-Forwarded-For', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    // Two trusted hops: the proxy on loopback and an inner one at 10.0.0.1 that appended the client address.
    const srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '3', TRUST_PROXY: '127.0.0.1,10.0.0.0/8' });
    cleanups.push(() => srv.close());
    const as = (ip: string) => ({ 'x-forwarded-for': `${ip}, 10.0.0.1` });

    const bad = await postJson(srv.base, '/verify/schema', '{"task_id":"x"}', as('203.0.113.5'));
    expect(bad.status).toBe(422);
    expect(bad.headers.get('free-allowance-remaining')).toBe('3');
    const dup = await postJson(srv.base, '/verify/schema', '{"task_id":"x","task_id":"y"}', as('203.0.113.5'));
    expect(dup.status).toBe(422);

    // Valid JSON, but the schema cannot be compiled: found only after the unit was taken, so it is given back.
    const unresolved = JSON.stringify({ task_id: 'x', expected_schema: { $ref: 'https://schemas.example.com/missing.json' }, submitted_output: {} });
    const refRes = await postJson(srv.base, '/verify/schema', unresolved, as('203.0.113.5'));
    expect(refRes.status).toBe(422);
    expect(((await refRes.json()) as any).code).toBe('invalid_request');
    expect(refRes.headers.get('free-allowance-remaining')).toBe('3');

    const ok = await postJson(srv.base, '/verify/schema', request, as('203.0.113.5'));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('free-allowance-remaining')).toBe('2');
    // Another client behind the same proxy has its own count.
    const other = await postJson(srv.base, '/verify/schema', request, as('203.0.113.6'));
    expect(other.headers.get('free-allowance-remaining')).toBe('2');
  });

  it('behind a trusted proxy that appends, a spoofed X-Forwarded-For grants nothing', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    // TRUST_PROXY=true: only the nearest hop (the proxy on loopback) is trusted.
    const srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '2', TRUST_PROXY: 'true' });
    cleanups.push(() => srv.close());
    // The client writes whatever it likes on the left; the proxy appends the address it saw (203.0.113.7).
    const spoofed = (fake: string) => ({ 'x-forwarded-for': `${fake}, 203.0.113.7` });
    const statuses: number[] = [];
    for (const fake of ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4']) {
      statuses.push((await postJson(srv.base, '/verify/schema', request, spoofed(fake))).status);
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
    // Another real client (a different appended address) has its own count.
    expect((await postJson(srv.base, '/verify/schema', request, { 'x-forwarded-for': '198.51.100.1, 203.0.113.8' })).status).toBe(200);
  });

  it('without a trusted proxy X-Forwarded-For is ignored', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '2' });
    cleanups.push(() => srv.close());
    const a = await postJson(srv.base, '/verify/schema', request, { 'x-forwarded-for': '198.51.100.1' });
    const b = await postJson(srv.base, '/verify/schema', request, { 'x-forwarded-for': '198.51.100.2' });
    const c = await postJson(srv.base, '/verify/schema', request, { 'x-forwarded-for': '198.51.100.3' });
    expect([a.status, b.status, c.status]).toEqual([200, 200, 429]);
  });

  it('an uncoded 5xx (the receipt write throws) answers 500 and gives the allowance unit back', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '3' });
    cleanups.push(() => srv.close());
    const first = await postJson(srv.base, '/verify/schema', request);
    expect(first.status).toBe(200);
    expect(first.headers.get('free-allowance-remaining')).toBe('2');

    // The service holds this same store object: a disk or database failure while storing the receipt,
    // alone or with its unit (this client is known to have units left: see src/service/allowance-hints.ts).
    const store = srv.handle.store;
    // Receipts are signed as they are stored: those writes fail too.
    const originals = { ...store };
    let failedWrites = 0;
    const fail = async (): Promise<never> => {
      failedWrites++;
      throw new Error('disk full');
    };
    store.saveReceipt = store.consumeAllowanceAndSaveReceipt = fail;
    store.signAndSaveReceipt = store.consumeAllowanceAndSignAndSaveReceipt = fail;
    const failed = await postJson(srv.base, '/verify/schema', request);
    const body = (await failed.json()) as Record<string, unknown>;
    expect(failedWrites).toBe(1);
    expect(failed.status).toBe(500);
    expect(body.code).toBe('internal_error');
    expect(body.charged).toBe(false);
    expect(JSON.stringify(body)).not.toContain('disk full');
    // The unit taken for this request is back, and the reply says so.
    expect(failed.headers.get('free-allowance-remaining')).toBe('2');

    Object.assign(store, originals);
    const next = await postJson(srv.base, '/verify/schema', request);
    expect(next.status).toBe(200);
    expect(next.headers.get('free-allowance-remaining')).toBe('1');
  });

  it('a client known to have units left takes its unit with its receipt: a stale count is refused with nothing stored; exact under 120 concurrent requests', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '40' });
    cleanups.push(() => srv.close());
    const together = countUnitWithReceipt(srv.handle.store);
    const client = { clientKey: '127.0.0.1' };
    const stored = async () => ((await (await fetch(`${srv.base}/reputation/test-allowance?limit=100`)).json()) as { verifications: number }).verifications;

    // The first request takes its unit first: nothing is known of this client yet.
    const first = await postJson(srv.base, '/verify/schema', request);
    expect(first.status).toBe(200);
    expect(first.headers.get('free-allowance-remaining')).toBe('39');
    expect(together()).toBe(0);

    // Another instance on the same database takes the 39 left. This one still believes 39 are left: the next request
    // is admitted on that belief, finds no unit when its receipt is to be stored, and gets the door's 429; nothing is stored.
    expect((await srv.handle.service.takeAllowance(client, 39)).allowed).toBe(true);
    const stale = await postJson(srv.base, '/verify/schema', request);
    const staleBody = (await stale.json()) as any;
    expect(together()).toBe(1);
    expect(stale.status).toBe(429);
    expect(staleBody.code).toBe('free_allowance_exhausted');
    expect(staleBody.verification_id).toBeUndefined();
    expect(stale.headers.get('free-allowance-remaining')).toBe('0');
    expect(await stored()).toBe(1);

    // The units come back; the client is now believed to have none, so the next request takes its unit first.
    await srv.handle.service.refundAllowanceUnits(client, 39);
    const again = await postJson(srv.base, '/verify/schema', request);
    expect(again.status).toBe(200);
    expect(again.headers.get('free-allowance-remaining')).toBe('38');
    expect(together()).toBe(1);

    const responses = await Promise.all(Array.from({ length: 120 }, () => postJson(srv.base, '/verify/schema', request)));
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<any>));
    const ok = responses.filter((r) => r.status === 200);
    expect(ok).toHaveLength(38);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(82);
    // Some went the one-write way (at most 38: one per unit the client was known to have).
    expect(together()).toBeGreaterThan(1);
    expect(together()).toBeLessThanOrEqual(1 + 38);
    expect(new Set(ok.map((r) => r.headers.get('free-allowance-remaining'))).size).toBe(38);
    for (const [i, r] of responses.entries()) {
      if (r.status !== 429) continue;
      expect(r.headers.get('free-allowance-remaining')).toBe('0');
      expect(bodies[i].code).toBe('free_allowance_exhausted');
      expect(bodies[i].verification_id).toBeUndefined();
    }
    // Exactly the 40 answered receipts are stored, each one retrievable.
    expect(await stored()).toBe(40);
    for (const [i, r] of responses.entries()) {
      if (r.status !== 200) continue;
      expect((await fetch(`${srv.base}/receipts/${bodies[i].verification_id}`)).status).toBe(200);
    }
  });
});
