/** @module Which patterns take the native fast path, and that it agrees with the safe engine. */
import { describe, expect, it } from 'vitest';
import { boundedPattern } from './bounded-pattern.js';
import { compilePattern } from '../regex/index.js';

describe('boundedPattern', () => {
  it('accepts literals, simple classes and bounded quantifiers', () => {
    for (const p of ['^INV-[0-9]{4}$', '^[A-Z]{3}$', 'abc', '^\\d{3}-\\d{2,4}$', '^a?b?c?$', '^[^\\]x]{1,3}$', '\\.json$', 'é{2}']) {
      expect(boundedPattern(p), p).not.toBeNull();
    }
  });

  it('refuses anything that could backtrack without bound or needs the general engine', () => {
    for (const p of ['^a*$', 'a+', '(a)', 'a|b', '^a{2,}$', '(?=a)', '\\1', '^[a-z]{1,100}[a-z]{1,100}$', '\\p{L}', '[]', 'a{1,3}?', '\\u0041']) {
      expect(boundedPattern(p), p).toBeNull();
    }
  });

  it('answers like the safe engine', () => {
    const cases: Array<[string, string[]]> = [
      ['^INV-[0-9]{4}$', ['INV-0001', 'INV-001', 'INV-00011', 'inv-0001', 'xINV-0001']],
      ['^\\d{3}-\\d{2,4}$', ['123-45', '123-4567', '123-45678', '12-34']],
      ['b.c', ['abxc', 'bc', 'b\nc', 'b😀c']],
      ['^[^a-c]?x$', ['x', 'dx', 'ax', '😀x']],
    ];
    for (const [p, inputs] of cases) {
      const fast = boundedPattern(p)!;
      const safe = compilePattern(p);
      for (const s of inputs) expect(fast.test(s), `${p} on ${s}`).toBe(safe.test(s));
    }
  });
});
