import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { skipUnlessAvailable } from '../../../test/requirements.js';
import { ATTESTATION_CONTEXTS, createPresigner, signingInput, signingInputOfText } from './attestation.js';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const jcsDir = path.resolve(projectRoot, '..', 'shared', 'conformance', 'jcs');
const haveConformance = !skipUnlessAvailable(existsSync(path.join(jcsDir, 'input')), 'REQUIRE_CONFORMANCE', `JCS conformance data not found at ${jcsDir}`);

const CONTEXT = ATTESTATION_CONTEXTS.verify;
const KEY = 'k-20261203-0123456789ab';
const AT = '2026-12-03T15:00:00Z';

/** signingInputOfText of the value's JSON text, or the error it threw. */
function fromText(value: Record<string, unknown>): string | Error {
  try {
    return signingInputOfText(JSON.stringify(value), 'verify', KEY, AT);
  } catch (e) {
    return e as Error;
  }
}

describe.skipIf(!haveConformance)('signingInputOfText on the RFC 8785 conformance files', () => {
  const files = haveConformance ? readdirSync(path.join(jcsDir, 'input')).filter((f) => f.endsWith('.json')) : [];
  it('has the input files', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
  });
  for (const file of files) {
    it(`${file}: the response member is the expected canonical output`, () => {
      const input = JSON.parse(readFileSync(path.join(jcsDir, 'input', file), 'utf8')) as unknown;
      const expected = readFileSync(path.join(jcsDir, 'output', file), 'utf8');
      const text = signingInputOfText(JSON.stringify(input), 'verify', KEY, AT);
      expect(text).toBe(`{"algorithm":"Ed25519","attested_at":"${AT}","context":"${CONTEXT}","key_version":"${KEY}","response":${expected}}`);
    });
  }
});

describe('signingInputOfText: the signing input of a JSON text, byte-identical to signingInput of the value', () => {
  it('random JSON objects, full Unicode strings and keys, doubles', () => {
    const value = fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.jsonValue({ maxDepth: 5, stringUnit: 'binary' }));
    fc.assert(
      fc.property(value, (v) => {
        expect(fromText(v)).toBe(signingInput(v, 'verify', KEY, AT));
      }),
      { numRuns: 2000 },
    );
  });
  it('strings with any UTF-16 code units: the same bytes, or both refuse a lone surrogate', () => {
    const unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 10 }), (s) => {
        const v = { [s]: [s, { s }] };
        let expected: string | null;
        try {
          expected = signingInput(v, 'verify', KEY, AT);
        } catch {
          expected = null;
        }
        const got = fromText(v);
        if (expected === null) expect(got).toBeInstanceOf(Error);
        else expect(got).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });
  it('integer-like keys, -0, exponents and escapes', () => {
    const v = { b: { z: 1, 10: [{ y: -0, x: 'é\n"\\' }], 2: null }, a: [1e21, 1e-7, 0.1, -5e-324], '': true, '\u007f': false };
    expect(fromText(v)).toBe(signingInput(v, 'verify', KEY, AT));
  });
  it('refuses a number that has no finite form (a JSON text may hold one; JCS has none)', () => {
    expect(() => signingInputOfText('{"a":1e400}', 'verify', KEY, AT)).toThrow(/finite/);
  });
});

describe('presign without the signing input', () => {
  const presigner = createPresigner({ serviceName: 'svc', baseUrl: 'https://verifier.example' });
  const response = { result: 'pass', verification_id: 'v1', verified_at: AT, items: [{ n: 2, s: 'ü' }] };
  it('gives the same text as with it, and no input; the input derived from that text is the one presign makes', () => {
    const full = presigner.presign(response, { context: 'verify', timestamp: AT, keyVersion: KEY });
    const bare = presigner.presign(response, { context: 'verify', timestamp: AT, keyVersion: KEY, input: false });
    expect(bare.input).toBeUndefined();
    expect(bare.text).toBe(full.text);
    expect(signingInputOfText(bare.text, 'verify', KEY, AT)).toBe(full.input);
  });
});
