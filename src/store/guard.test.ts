/**
 * @module The store guard: faults become 503 `unavailable` with Retry-After,
 * other errors pass through untouched, readiness reports a fault until the
 * store commits again, and a refund that could not reach the database is retried
 * until it does.
 */
import { describe, expect, it } from 'vitest';
import { isApiError } from '../errors.js';
import { guardStore } from './guard.js';
import type { Store } from './store.js';

function fakeStore(state: { down: boolean; refunds: number }): Store {
  const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  return {
    async consumeAllowance() {
      if (state.down) throw refused();
      return { allowed: true, limit: 5, used: 1, remaining: 4 };
    },
    async refundAllowance() {
      if (state.down) throw refused();
      state.refunds++;
    },
    async refundAllowanceUnits(_key: string, _day: string, units: number) {
      if (state.down) throw refused();
      state.refunds += units;
    },
    async getReceipt() {
      throw new TypeError('a bug');
    },
    async health() {
      return true;
    },
    async check() {
      return state.down ? 'database unreachable' : null;
    },
    async close() {},
  } as unknown as Store;
}

describe('guardStore', () => {
  it('a fault is a 503 with retry_after; a bug is not turned into one', async () => {
    const state = { down: true, refunds: 0 };
    const g = guardStore(fakeStore(state));
    const err = await g.consumeAllowance('c', '2026-01-01', 5).catch((e: unknown) => e);
    expect(isApiError(err) && err.toBody()).toMatchObject({ code: 'unavailable', status: 503, retryable: true, retry_after: 2 });
    expect(await g.readiness()).toBe('database unreachable');
    const bug = await g.getReceipt('x').catch((e: unknown) => e);
    expect(bug).toBeInstanceOf(TypeError);
    state.down = false;
    await g.consumeAllowance('c', '2026-01-01', 5);
    expect(await g.readiness()).toBeNull();
  });

  it('a refund during an outage is kept and made once the database is back', async () => {
    const state = { down: true, refunds: 0 };
    const g = guardStore(fakeStore(state), { refundRetryMs: 20 });
    await g.refundAllowance('c', '2026-01-01');
    expect(g.queuedRefunds()).toBe(1);
    await new Promise((r) => setTimeout(r, 60));
    expect(state.refunds).toBe(0);
    state.down = false;
    for (let i = 0; i < 50 && g.queuedRefunds() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(g.queuedRefunds()).toBe(0);
    expect(state.refunds).toBe(1);
    await g.close();
  });

  it('a refund of a batch (N units) during an outage is kept whole and made once the database is back', async () => {
    const state = { down: true, refunds: 0 };
    const g = guardStore(fakeStore(state), { refundRetryMs: 20 });
    await g.refundAllowanceUnits('c', '2026-01-01', 7);
    expect(g.queuedRefunds()).toBe(1);
    state.down = false;
    for (let i = 0; i < 50 && g.queuedRefunds() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(g.queuedRefunds()).toBe(0);
    expect(state.refunds).toBe(7);
    await g.close();
  });
});
