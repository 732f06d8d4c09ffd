import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { clipText } from './runtime.js';

const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

describe('clipText', () => {
  it('keeps text up to the limit, and cuts longer text to the limit with "..."', () => {
    expect(clipText('abc', 3)).toBe('abc');
    expect(clipText('abcdef', 5)).toBe('ab...');
    expect(clipText('x'.repeat(61), 60)).toBe(`${'x'.repeat(57)}...`);
  });
  it('never cuts a surrogate pair in two', () => {
    // The emoji's high half is the 57th unit: cut before the pair, one unit shorter.
    const text = `"${'x'.repeat(55)}😀yy"`;
    expect(clipText(text, 60)).toBe(`"${'x'.repeat(55)}...`);
    expect(wellFormed(clipText(text, 60))).toBe(true);
    expect(clipText(`${'x'.repeat(56)}😀`, 60)).toBe(`${'x'.repeat(56)}😀`);
  });
  it('on any well-formed text: well-formed, at most the limit, a prefix of the text', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 80 });
    fc.assert(
      fc.property(text, fc.integer({ min: 4, max: 90 }), (t, max) => {
        const out = clipText(t, max);
        expect(wellFormed(out)).toBe(true);
        expect(out.length).toBeLessThanOrEqual(max);
        if (out !== t) expect(t.startsWith(out.slice(0, -3))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
