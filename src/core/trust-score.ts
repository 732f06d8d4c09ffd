/**
 * @module The trust score (docs/protocol.md#reputation-and-trust-score): a pure, deterministic function of an agent's
 * non-test verification history. Recent results weigh more (exponential decay),
 * and the score is a lower confidence bound of the weighted pass rate, so a short
 * perfect record does not outrank a long, nearly perfect one. See docs/trust-score.md.
 */

export const TRUST_SCORE_METHOD = 'wilson_lower_bound_recency_weighted/v1';
const DEFAULT_HALF_LIFE_DAYS = 90;
/** Two-sided 95% normal quantile. */
const DEFAULT_Z = 1.96;

const DAY_MS = 86_400_000;

export interface TrustScoreOptions {
  /** Age at which a result counts half (days, > 0; Infinity disables decay). Default 90. */
  halfLifeDays?: number;
  /** Normal quantile of the lower bound (> 0). Default 1.96 (95%). */
  z?: number;
}

export interface TrustScoreInputs {
  method: typeof TRUST_SCORE_METHOD;
  /** The instant the score was computed for (RFC 3339 UTC). */
  as_of: string;
  verifications: number;
  passes: number;
  fails: number;
  /** Sums of the decay weights, rounded to 6 decimals for display (the score uses the exact sums). */
  weighted_passes: number;
  weighted_total: number;
  /** weighted_passes / weighted_total rounded to 6 decimals; 0 when there are none. */
  weighted_pass_rate: number;
  half_life_days: number | null;
  z: number;
}

export interface TrustScore {
  /** 0–100 with two decimals. 0 when there is no history. */
  score: number;
  inputs: TrustScoreInputs;
}

export interface ScoredResult {
  result: 'pass' | 'fail';
  /** RFC 3339. */
  verifiedAt: string;
}

/** Ids starting with `test-` are examples: recorded, never scored (docs/protocol.md#request). */
export function isTestAgent(agentId: string | null | undefined): boolean {
  return typeof agentId === 'string' && agentId.startsWith('test-');
}

/**
 * Wilson score interval lower bound for `successes` out of `n` (both may be
 * fractional, as weighted counts are). 0 when n is 0.
 */
export function wilsonLowerBound(successes: number, n: number, z: number): number {
  if (!(n > 0)) return 0;
  const p = successes / n;
  const z2 = z * z;
  const centre = p + z2 / (2 * n);
  const margin = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  const lb = (centre - margin) / (1 + z2 / n);
  // Clamp rounding noise (p = 0 gives a tiny negative, p = 1 can exceed by an ulp).
  return Math.min(1, Math.max(0, lb));
}

/** Weight of a result `ageMs` old. Results dated in the future count as new. */
function decayWeight(ageMs: number, halfLifeDays: number): number {
  if (halfLifeDays === Infinity) return 1;
  return Math.pow(0.5, Math.max(0, ageMs) / DAY_MS / halfLifeDays);
}

/** Adds smallest first so the sum does not depend on the order of the history. */
function stableSum(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  let total = 0;
  for (const v of sorted) total += v;
  return total;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

export function computeTrustScore(results: readonly ScoredResult[], now: Date, options: TrustScoreOptions = {}): TrustScore {
  const halfLifeDays = options.halfLifeDays ?? DEFAULT_HALF_LIFE_DAYS;
  const z = options.z ?? DEFAULT_Z;
  if (!(halfLifeDays > 0)) throw new TypeError(`halfLifeDays must be > 0, got ${halfLifeDays}`);
  if (!(z > 0) || !Number.isFinite(z)) throw new TypeError(`z must be a positive finite number, got ${z}`);
  const nowMs = now.getTime();
  if (!Number.isFinite(nowMs)) throw new TypeError('now is not a valid date');

  const passWeights: number[] = [];
  const failWeights: number[] = [];
  for (const r of results) {
    const t = Date.parse(r.verifiedAt);
    if (!Number.isFinite(t)) throw new TypeError(`verifiedAt is not a timestamp: ${JSON.stringify(r.verifiedAt)}`);
    const w = decayWeight(nowMs - t, halfLifeDays);
    if (r.result === 'pass') passWeights.push(w);
    else if (r.result === 'fail') failWeights.push(w);
    else throw new TypeError(`result must be pass or fail, got ${JSON.stringify(r.result)}`);
  }

  const weightedPasses = stableSum(passWeights);
  const weightedTotal = weightedPasses + stableSum(failWeights);
  const lb = wilsonLowerBound(weightedPasses, weightedTotal, z);

  return {
    score: Math.round(lb * 10_000) / 100,
    inputs: {
      method: TRUST_SCORE_METHOD,
      // Whole-second instants print like verified_at ("…:00Z"), without ".000".
      as_of: now.toISOString().replace(/\.000Z$/, 'Z'),
      verifications: passWeights.length + failWeights.length,
      passes: passWeights.length,
      fails: failWeights.length,
      weighted_passes: round6(weightedPasses),
      weighted_total: round6(weightedTotal),
      weighted_pass_rate: weightedTotal > 0 ? round6(weightedPasses / weightedTotal) : 0,
      half_life_days: halfLifeDays === Infinity ? null : halfLifeDays,
      z,
    },
  };
}
