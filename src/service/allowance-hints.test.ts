import { describe, expect, it } from 'vitest';
import { createAllowanceHints } from './allowance-hints.js';

describe('allowance hints', () => {
  it('admits nothing on a hint it does not have', () => {
    const hints = createAllowanceHints();
    expect(hints.reserve('a')).toBe(false);
  });

  it('admits as many requests at once as the last known count leaves, and one more once one is done', () => {
    const hints = createAllowanceHints();
    hints.learn('a', { remaining: 3 });
    expect([hints.reserve('a'), hints.reserve('a'), hints.reserve('a'), hints.reserve('a')]).toEqual([true, true, true, false]);
    hints.settle('a');
    expect(hints.reserve('a')).toBe(true);
    expect(hints.reserve('a')).toBe(false);
    // Another client has its own count.
    expect(hints.reserve('b')).toBe(false);
  });

  it('a newer count replaces the old one; none left means the unit is taken first again', () => {
    const hints = createAllowanceHints();
    hints.learn('a', { remaining: 10 });
    expect(hints.reserve('a')).toBe(true);
    hints.learn('a', { remaining: 0 });
    hints.settle('a');
    expect(hints.reserve('a')).toBe(false);
    hints.learn('a', { remaining: 999 });
    expect(hints.reserve('a')).toBe(true);
  });

  it('settling more often than reserving never makes room that is not there', () => {
    const hints = createAllowanceHints();
    hints.learn('a', { remaining: 1 });
    hints.settle('a');
    hints.settle('a');
    expect(hints.reserve('a')).toBe(true);
    expect(hints.reserve('a')).toBe(false);
  });

  it('forgets the oldest client past its bound', () => {
    const hints = createAllowanceHints({ maxClients: 2 });
    hints.learn('a', { remaining: 5 });
    hints.learn('b', { remaining: 5 });
    hints.learn('c', { remaining: 5 });
    expect(hints.reserve('a')).toBe(false);
    expect(hints.reserve('b')).toBe(true);
    expect(hints.reserve('c')).toBe(true);
  });
});
