/**
 * @module Fixed-shape patterns answered without a RegExp agree with the RegExp
 * (`u` flag, as the engine compiles them) on every string, and everything else
 * is left to the RegExp.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { simplePatternMatcher } from './simple-pattern.js';
import { createSchemaEngine } from './index.js';

const SIMPLE = [
  '^INV-[0-9]{4}$',
  '^[A-Z]{3}$',
  '^\\d{4}-\\d{2}-\\d{2}$',
  '^[a-zA-Z0-9_]{8}$',
  '^[-a]{2}$',
  '^[a-]{2}$',
  '^[+--]$',
  '^\\.\\$x\\[\\]$',
  '^[\\.\\-\\]]{3}$',
  '^a$',
  '^ab c/d$',
  '^[\\d.]{5}$',
];

const NOT_SIMPLE = [
  '^a',
  'a$',
  '^a+$',
  '^a*$',
  '^a?$',
  '^a{1,3}$',
  '^a{2,}$',
  '^(ab)$',
  '^a|b$',
  '^.$',
  '^\\w{2}$',
  '^\\s$',
  '^[^a]$',
  '^\\p{L}$',
  '^é$',
  '^a\\$',
  '^a{0}$',
  '^$',
];

describe('fixed-shape patterns', () => {
  it('are recognised, and nothing else is', () => {
    for (const p of SIMPLE) expect(simplePatternMatcher(p), p).not.toBeNull();
    for (const p of NOT_SIMPLE) expect(simplePatternMatcher(p), p).toBeNull();
  });

  it('match exactly what the RegExp matches', () => {
    const alphabet = fc.constantFrom('I', 'N', 'V', '-', '0', '4', '9', 'a', 'Z', '_', '.', '$', '[', ']', '+', ',', ' ', '/', 'c', 'd', 'é', '\u{1F600}', '\ud800', '\n');
    for (const p of SIMPLE) {
      const re = new RegExp(p, 'u');
      const m = simplePatternMatcher(p)!;
      fc.assert(
        fc.property(fc.array(alphabet, { maxLength: 12 }).map((cs) => cs.join('')), (s) => {
          expect(m(s), `${p} on ${JSON.stringify(s)}`).toBe(re.test(s));
        }),
        { numRuns: 300 },
      );
      // strings built from the pattern's own shape, so that matches happen
      for (const s of ['INV-0042', 'INV-004', 'ABC', 'abc', '2026-12-01', 'abcd_123', '--', 'a-', '+', ',', '.$x[]', '.-]', 'a', 'ab c/d', '12.34']) {
        expect(m(s), `${p} on ${s}`).toBe(re.test(s));
      }
    }
  });

  it('give the same verdicts, failures and steps in generated code as the closures', () => {
    const schema = { type: 'array', items: { type: 'string', pattern: '^INV-[0-9]{4}$' } };
    const docs = [['INV-0001', 'INV-12', 'inv-0001', 'INV-00011', 'INV-\u{1F600}'], ['INV-9999']];
    const generated = createSchemaEngine().compile(schema);
    const closures = createSchemaEngine({ generatedCode: false }).compile(schema);
    generated.evaluate([]); // code is generated from the second evaluation on
    for (const doc of docs) {
      expect(JSON.parse(JSON.stringify(generated.evaluate(doc)))).toEqual(JSON.parse(JSON.stringify(closures.evaluate(doc))));
    }
  });
});
