/**
 * @module Wraps any store so that its faults fail closed and tell the truth:
 * a fault (database unreachable, disk full, file gone…) becomes a retryable
 * 503 `unavailable` instead of a 500; readiness is the store's own check (a
 * small commit), so it reports a fault until the store commits again; and an
 * allowance refund that could not reach the database is retried in the
 * background until it does, so an error is never charged, also when the error
 * was the database going away.
 */
import { isApiError } from '../errors.js';
import { storeFaultReason, storeUnavailableError } from './faults.js';
import type { Store } from './store.js';

export interface StoreGuardOptions {
  /** Called on every fault (for logging); never throws into the caller. */
  onFault?: (reason: string, err: unknown) => void;
  /** How often queued refunds are retried (default 1000 ms). */
  refundRetryMs?: number;
  /** Most refunds kept waiting for the database (default 100,000); beyond that the oldest are dropped. */
  maxQueuedRefunds?: number;
}

export interface GuardedStore {
  /** Null when the store can commit now, else the reason (e.g. `disk full`). Never throws. */
  readiness(): Promise<string | null>;
  /** Refunds waiting for the database to come back. */
  queuedRefunds(): number;
}

/** Left alone: lifecycle, the guard's own readiness probe and the sync and wait statistics (reads of memory). */
const UNGUARDED = new Set(['close', 'health', 'check', 'then', 'walSyncs', 'walRestarts', 'writeWaits']);

export function guardStore<S extends Store>(inner: S, options: StoreGuardOptions = {}): S & GuardedStore {
  /** [clientKey, day, units]: one unit from refundAllowance, `units` from refundAllowanceUnits. */
  const refunds: Array<[string, string, number]> = [];
  const maxRefunds = options.maxQueuedRefunds ?? 100_000;
  let retryTimer: NodeJS.Timeout | null = null;
  let closed = false;

  const fault = (err: unknown): never => {
    const reason = storeFaultReason(err);
    if (reason === null || isApiError(err)) throw err;
    try {
      options.onFault?.(reason, err);
    } catch {
      // A logging failure must not replace the caller's error.
    }
    throw storeUnavailableError(reason);
  };

  const scheduleRefunds = () => {
    if (retryTimer || closed || refunds.length === 0) return;
    retryTimer = setTimeout(() => void drainRefunds(), options.refundRetryMs ?? 1000);
    retryTimer.unref();
  };

  async function drainRefunds(): Promise<void> {
    retryTimer = null;
    while (refunds.length > 0 && !closed) {
      const [clientKey, day, units] = refunds[0]!;
      try {
        if (units === 1) await inner.refundAllowance(clientKey, day);
        else await inner.refundAllowanceUnits(clientKey, day, units);
      } catch (err) {
        if (storeFaultReason(err) !== null) break;
        // Not a fault (a bug or a closed store): retrying cannot help.
      }
      refunds.shift();
    }
    scheduleRefunds();
  }

  const extra: GuardedStore = {
    async readiness() {
      if (closed) return 'store closed';
      try {
        // A commit of the store's own: null once the store writes again.
        return await inner.check();
      } catch (err) {
        return storeFaultReason(err) ?? 'database check failed';
      }
    },
    queuedRefunds: () => refunds.length,
  };

  // One wrapper per method, made on first use: the proxy sits on every store call of every request.
  const wrappers = new Map<string, { fn: unknown; wrapped: (...a: unknown[]) => unknown }>();
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'readiness' || prop === 'queuedRefunds') return extra[prop];
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string' || UNGUARDED.has(prop)) {
        if (prop === 'close' && typeof value === 'function') {
          return (...args: unknown[]) => {
            closed = true;
            if (retryTimer) clearTimeout(retryTimer);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return value;
      }
      const known = wrappers.get(prop);
      if (known && known.fn === value) return known.wrapped;
      const fn = value as (...a: unknown[]) => unknown;
      const wrapped = (...args: unknown[]) => {
        // Closed (shutting down): unavailable, like every other way the store can be away.
        if (closed) return Promise.reject(storeUnavailableError('store closed'));
        let out: unknown;
        try {
          out = fn.apply(target, args);
        } catch (err) {
          // Every store method is async: a synchronous throw is answered as a rejection too.
          return Promise.reject(err).catch(fault);
        }
        if (!(out instanceof Promise)) return out;
        return out.catch((err: unknown) => {
          if ((prop === 'refundAllowance' || prop === 'refundAllowanceUnits') && storeFaultReason(err) !== null && !isApiError(err)) {
            // Given back once the database is back: the caller's error is never charged.
            if (refunds.length >= maxRefunds) refunds.shift();
            refunds.push([args[0] as string, args[1] as string, prop === 'refundAllowance' ? 1 : (args[2] as number)]);
            scheduleRefunds();
            return undefined;
          }
          return fault(err);
        });
      };
      wrappers.set(prop, { fn: value, wrapped });
      return wrapped;
    },
  }) as S & GuardedStore;
}
