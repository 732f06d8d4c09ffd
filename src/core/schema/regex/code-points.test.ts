import { describe, expect, it } from 'vitest';
import { buildPropertyTables, inRanges, propertyKey, propertyKeysOf, propertyRanges } from './code-points.js';

describe('\\p{…} code point sets', () => {
  const bodies = ['L', 'Lu', 'Nd', 'Script=Greek', 'Emoji', 'Any'];
  // One pass builds all six (the way a pattern's tables are built); each is then checked on its own.
  buildPropertyTables(bodies.map(propertyKey));

  // Every scalar value, checked one by one against V8's own property test: the sets are read in
  // chunks, so runs that cross a chunk's edge (or the end of the BMP) must be joined exactly.
  for (const body of bodies) {
    it(`\\p{${body}} holds exactly the code points V8 says it does`, () => {
      const ranges = propertyRanges(body);
      const re = new RegExp(`^\\p{${body}}$`, 'u');
      const wrong: number[] = [];
      for (let cp = 0; cp <= 0x10ffff; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        if (inRanges(ranges, cp) !== re.test(String.fromCodePoint(cp))) wrong.push(cp);
        if (wrong.length > 5) break;
      }
      expect(wrong).toEqual([]);
      for (let k = 1; k < ranges.length; k++) expect(ranges[k]![0]).toBeGreaterThan(ranges[k - 1]![1] + 1);
    });
  }

  it('names one table however the property is spelled', () => {
    expect(['gc=Lu', 'General_Category=Lu', 'Lu'].map(propertyKey)).toEqual(['Lu', 'Lu', 'Lu']);
    expect(propertyKey('sc=Greek')).toBe('Script=Greek');
    expect(propertyKey('scx=Greek')).toBe('Script_Extensions=Greek');
    expect(propertyKey('Script_Extensions=Greek')).toBe('Script_Extensions=Greek');
    expect(propertyRanges('gc=Lu')).toBe(propertyRanges('Lu'));
    expect(propertyRanges('sc=Greek')).toBe(propertyRanges('Script=Greek'));
  });

  it('reads the tables a pattern needs from its text', () => {
    expect(propertyKeysOf('^\\p{L}[\\P{gc=L}\\p{Nd}]\\d+\\p{sc=Latin}|\\p{Script=Latin}$')).toEqual(['L', 'Nd', 'Script=Latin']);
    // an escaped backslash before p is a literal, and so is a p after another escape
    expect(propertyKeysOf('[\\\\p{L}]\\u{70}\\x70')).toEqual([]);
    expect(propertyKeysOf('abc')).toEqual([]);
  });
});
