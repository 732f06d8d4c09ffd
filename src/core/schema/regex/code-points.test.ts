import { describe, expect, it } from 'vitest';
import { inRanges, propertyRanges } from './code-points.js';

describe('\\p{…} code point sets', () => {
  // Every scalar value, checked one by one against V8's own property test: the sets are read in
  // chunks, so runs that cross a chunk's edge (or the end of the BMP) must be joined exactly.
  for (const body of ['L', 'Lu', 'Nd', 'Script=Greek', 'Emoji', 'Any']) {
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
});
