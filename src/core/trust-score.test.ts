import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeTrustScore, isTestAgent, TRUST_SCORE_METHOD, wilsonLowerBound, type ScoredResult } from './trust-score.js';

const now = new Date('2026-06-01T00:00:00Z');
const DAY = 86_400_000;
const at = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY).toISOString();
const many = (passes: number, fails: number, daysAgo = 0): ScoredResult[] => [
  ...Array.from({ length: passes }, () => ({ result: 'pass' as const, verifiedAt: at(daysAgo) })),
  ...Array.from({ length: fails }, () => ({ result: 'fail' as const, verifiedAt: at(daysAgo) })),
];

describe('computeTrustScore', () => {
  it('no history → score 0 with the inputs shown', () => {
    expect(computeTrustScore([], now)).toEqual({
      score: 0,
      inputs: {
        method: TRUST_SCORE_METHOD,
        as_of: '2026-06-01T00:00:00Z',
        verifications: 0,
        passes: 0,
        fails: 0,
        weighted_passes: 0,
        weighted_total: 0,
        weighted_pass_rate: 0,
        half_life_days: 90,
        z: 1.96,
      },
    });
  });

  it('3/3 does not outrank 950/1000 (same age), nor 950/1000 spread over a year', () => {
    const short = computeTrustScore(many(3, 0), now).score;
    const long = computeTrustScore(many(950, 50), now).score;
    expect(short).toBeLessThan(long);
    const spread = Array.from({ length: 1000 }, (_, i) => ({ result: (i % 20 === 0 ? 'fail' : 'pass') as 'pass' | 'fail', verifiedAt: at(Math.floor((i * 365) / 1000)) }));
    expect(short).toBeLessThan(computeTrustScore(spread, now).score);
  });

  it('matches the published Wilson 95% lower bounds when nothing has decayed', () => {
    // 3/3 → 0.4385, 950/1000 → 0.9347, 0/n → 0 (textbook values of the Wilson interval).
    expect(computeTrustScore(many(3, 0), now).score).toBe(43.85);
    expect(computeTrustScore(many(950, 50), now).score).toBe(93.47);
    expect(computeTrustScore(many(0, 7), now).score).toBe(0);
  });

  it('a result one half-life old counts half', () => {
    const s = computeTrustScore(many(1, 0, 90), now);
    expect(s.inputs.weighted_total).toBe(0.5);
    expect(s.score).toBe(Math.round(wilsonLowerBound(0.5, 0.5, 1.96) * 10_000) / 100);
    expect(computeTrustScore(many(1, 0, 90), now, { halfLifeDays: 30 }).inputs.weighted_total).toBe(0.125);
    expect(computeTrustScore(many(1, 0, 900), now, { halfLifeDays: Infinity }).inputs).toMatchObject({ weighted_total: 1, half_life_days: null });
  });

  it('old perfect records fade: the same 3/3 scores lower a year later', () => {
    expect(computeTrustScore(many(3, 0, 365), now).score).toBeLessThan(computeTrustScore(many(3, 0, 0), now).score);
  });

  it('as_of keeps milliseconds only when there are some', () => {
    expect(computeTrustScore([], new Date('2026-06-01T00:00:00.250Z')).inputs.as_of).toBe('2026-06-01T00:00:00.250Z');
  });

  it('results dated after `now` count as new (weight 1), never more', () => {
    const future = [{ result: 'pass' as const, verifiedAt: '2026-07-01T00:00:00Z' }];
    expect(computeTrustScore(future, now).inputs.weighted_total).toBe(1);
  });

  it('shows counts and weighted inputs', () => {
    const s = computeTrustScore([...many(2, 1, 0), ...many(1, 0, 90)], now, { z: 1.645 });
    expect(s.inputs).toMatchObject({ verifications: 4, passes: 3, fails: 1, weighted_passes: 2.5, weighted_total: 3.5, weighted_pass_rate: 0.714286, z: 1.645 });
  });

  it('is deterministic and does not depend on the order of the history', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ pass: fc.boolean(), daysAgo: fc.integer({ min: -5, max: 2000 }) }), { maxLength: 60 }), (xs) => {
        const hist = xs.map((x) => ({ result: x.pass ? ('pass' as const) : ('fail' as const), verifiedAt: at(x.daysAgo) }));
        const a = computeTrustScore(hist, now);
        expect(computeTrustScore(hist, now)).toEqual(a);
        expect(computeTrustScore([...hist].reverse(), now)).toEqual(a);
      }),
    );
  });

  it('monotonic: one more pass never lowers the score, one more fail never raises it', () => {
    const entry = fc.record({ pass: fc.boolean(), daysAgo: fc.integer({ min: 0, max: 1500 }) });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 80 }), fc.integer({ min: 0, max: 1500 }), (xs, extraDaysAgo) => {
        const hist = xs.map((x) => ({ result: x.pass ? ('pass' as const) : ('fail' as const), verifiedAt: at(x.daysAgo) }));
        const base = computeTrustScore(hist, now).score;
        expect(computeTrustScore([...hist, { result: 'pass', verifiedAt: at(extraDaysAgo) }], now).score).toBeGreaterThanOrEqual(base);
        expect(computeTrustScore([...hist, { result: 'fail', verifiedAt: at(extraDaysAgo) }], now).score).toBeLessThanOrEqual(base);
      }),
      { numRuns: 300 },
    );
  });

  it('stays within 0–100 with at most two decimals', () => {
    fc.assert(
      fc.property(fc.nat({ max: 1500 }), fc.nat({ max: 1500 }), (p, f) => {
        const { score } = computeTrustScore(many(p, f), now);
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(100);
        expect(Math.round(score * 100) / 100).toBe(score);
      }),
      { numRuns: 100 },
    );
  });

  it('rejects malformed input (programming errors)', () => {
    expect(() => computeTrustScore([{ result: 'pass', verifiedAt: 'yesterday' }], now)).toThrow(TypeError);
    expect(() => computeTrustScore([{ result: 'maybe' as 'pass', verifiedAt: at(0) }], now)).toThrow(TypeError);
    expect(() => computeTrustScore([], new Date('nope'))).toThrow(TypeError);
    expect(() => computeTrustScore([], now, { halfLifeDays: 0 })).toThrow(TypeError);
    expect(() => computeTrustScore([], now, { z: -1 })).toThrow(TypeError);
  });
});

describe('isTestAgent', () => {
  it('is true only for ids starting with test-', () => {
    expect(isTestAgent('test-agent')).toBe(true);
    expect(isTestAgent('test-')).toBe(true);
    expect(isTestAgent('Test-agent')).toBe(false);
    expect(isTestAgent('my-test-agent')).toBe(false);
    expect(isTestAgent('testagent')).toBe(false);
    expect(isTestAgent(null)).toBe(false);
  });
});
