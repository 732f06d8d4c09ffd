/**
 * @module What this process last learned of each client's free allowance, to admit a client
 * known to have units left without a write of its own: its unit is then taken in the same
 * transaction that stores its receipt (Store.consumeAllowanceAndSaveReceipt), one trip to the
 * store instead of two. At a moderate rate that trip, with its two thread wake-ups, cost more
 * than the rest of the request's store work (docs/BENCHMARKS.md).
 *
 * A hint only decides whether the work runs before the unit is taken, never whether the unit is
 * taken: the store's count stays exact, and a request that finds no unit left when its receipt
 * is stored is refused and its receipt dropped, as if it had been refused at the door. What a
 * wrong hint can cost is bounded: a client is admitted this way only while its last known count
 * leaves a unit for every such request of its still in flight, so near the end of its allowance
 * (or with no hint yet, or after a refusal) it takes its unit first, as before. Another process
 * sharing the store can make a hint stale; the waste is then at most that client's requests in
 * flight here.
 */
import type { AllowanceInfo } from './types.js';

export interface AllowanceHintsOptions {
  /** Clients remembered at most (default 10,000); past it the oldest is forgotten. */
  maxClients?: number;
}

export interface AllowanceHints {
  /** True, and counted as in flight, when the client's last known count leaves a unit for this request too. */
  reserve(clientKey: string): boolean;
  /** A reserved request is done (stored, refused or failed). */
  settle(clientKey: string): void;
  /** The store's latest answer for this client. */
  learn(clientKey: string, allowance: Pick<AllowanceInfo, 'remaining'>): void;
}

export function createAllowanceHints(options: AllowanceHintsOptions = {}): AllowanceHints {
  const maxClients = options.maxClients ?? 10_000;
  const known = new Map<string, { remaining: number; inFlight: number }>();
  return {
    reserve(clientKey) {
      const hint = known.get(clientKey);
      if (hint === undefined || hint.remaining - hint.inFlight < 1) return false;
      hint.inFlight++;
      return true;
    },
    settle(clientKey) {
      const hint = known.get(clientKey);
      if (hint !== undefined && hint.inFlight > 0) hint.inFlight--;
    },
    learn(clientKey, allowance) {
      const hint = known.get(clientKey);
      if (hint !== undefined) {
        hint.remaining = allowance.remaining;
        return;
      }
      if (known.size >= maxClients) known.delete(known.keys().next().value as string);
      known.set(clientKey, { remaining: allowance.remaining, inFlight: 0 });
    },
  };
}
