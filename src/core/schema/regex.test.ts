/** @module Tests for pattern compilation: ECMA-262 `u` semantics, invalid patterns, and the ReDoS safety bar. */
import { describe, it, expect } from 'vitest';
import { compilePattern } from './regex.js';

describe('compilePattern: ReDoS safety', () => {
  it('answers ^(a+)+$ against 100 hostile strings well within a second', () => {
    const hostile = 'a'.repeat(40) + '!';
    const started = performance.now();
    const p = compilePattern('^(a+)+$');
    expect(p.test(hostile)).toBe(false);
    const results = Array.from({ length: 100 }, () => p.test(hostile));
    const elapsed = performance.now() - started;
    expect(results.every((r) => r === false)).toBe(true);
    expect(p.test('a'.repeat(40))).toBe(true);
    expect(p.engine).toBe('linear');
    expect(elapsed).toBeLessThan(1000);
  });

  it('handles other classic exponential shapes in linear time', () => {
    const started = performance.now();
    for (const src of ['^(a|a)*$', '^(a|aa)+$', '^(\\w+\\s?)*$', '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$']) {
      const p = compilePattern(src);
      expect(p.engine).toBe('linear');
      p.test('a'.repeat(5000) + '!');
    }
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('rejects backtracking-only patterns with nested repetition instead of risking a hang', () => {
    expect(() => compilePattern('^(a+)+\\1$')).toThrow(/backtrack catastrophically/);
    expect(() => compilePattern('^(?=(a|b)*c)(x+)*$')).toThrow(/backtrack catastrophically/);
  });

  it('runs lookarounds and backreferences without nested repetition on the backtracking engine', () => {
    const p = compilePattern('^(?!foo)[a-z]+$');
    expect(p.engine).toBe('backtracking');
    expect(p.test('bar')).toBe(true);
    expect(p.test('foobar')).toBe(false);
    const q = compilePattern('^(a)b\\1$');
    expect(q.test('aba')).toBe(true);
    expect(q.test('abb')).toBe(false);
  });

  it('falls back for repetition counts beyond the linear engine limit when safe', () => {
    const p = compilePattern('^a{2000}$');
    expect(p.engine).toBe('backtracking');
    expect(p.test('a'.repeat(2000))).toBe(true);
    expect(p.test('a'.repeat(1999))).toBe(false);
  });
});

describe('compilePattern: ECMA-262 Unicode semantics', () => {
  const cases: Array<[string, string, boolean]> = [
    ['^\\p{Letter}+$', 'élan', true],
    ['^\\p{Letter}+$', 'a1', false],
    ['^\\p{L}$', '𝒜', true], // astral letter is one code point
    ['^\\P{L}$', '1', true],
    ['^\\p{Script=Greek}+$', 'αβγ', true],
    ['^\\d+$', '٤٢', false], // \d is ASCII only
    ['^\\p{digit}+$', '٤٢', true],
    ['^\\w+$', 'école', false], // \w is ASCII only
    ['\\wcole', 'école', false],
    ['^\\s$', '\u00a0', true],
    ['^\\s$', '\ufeff', true],
    ['^\\S$', '\u2003', false],
    ['^.$', '😀', true], // `.` matches a whole astral code point under `u`
    ['^..$', '😀', false],
    ['^.$', '\n', false],
    ['^.$', '\u2028', false],
    ['^[^a]$', '😀', true],
    ['^[😀-😂]$', '😁', true],
    ['^\\u{1F600}$', '😀', true],
    ['^\\uD83D\\uDE00$', '😀', true],
    ['^😀+$', '😀😀', true],
    ['^\\cJ$', '\n', true],
    ['^[\\b]$', '\b', true],
    ['\\bword\\b', 'a word.', true],
    ['\\Bord', 'a word', true],
    ['^a$', 'a\n', false], // `$` is end of input, not end of line
    ['^[]$', '', false],
    ['^[^]$', '\n', true],
    ['^(?<year>\\d{4})-(?:\\d{2})$', '2024-01', true],
    ['a{0}b', 'b', true],
    ['^(?:ab)*?c$', 'ababc', true],
    ['^\\x41\\u0042\\0$', 'AB\u0000', true],
    ['^[\\-\\]]+$', '-]', true],
    ['^\\/$', '/', true],
    ['', 'anything', true],
    ['a|', 'zzz', true],
  ];
  it.each(cases)('%s on %j → %s', (src, input, expected) => {
    expect(compilePattern(src).test(input)).toBe(expected);
  });

  it('searches rather than anchoring', () => {
    expect(compilePattern('es').test('test')).toBe(true);
  });
});

describe('compilePattern: invalid patterns', () => {
  it.each(['^(abc]', '[z-a]', '\\p{NotAProperty}', 'a**', '(?<n>a)(?<n>b)', '\\1(a', 'a{2,1}', '\\c', '{', '\\-'])(
    'throws a short reason for %s',
    (src) => {
      let message = '';
      try {
        compilePattern(src);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).not.toBe('');
      expect(message).not.toContain('Invalid regular expression');
    },
  );
});
