import { describe, it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { skipUnlessAvailable } from '../../test/requirements.js';
import canonicalizeLib from 'canonicalize';
import { canonicalize, canonicalizeWithText, JcsError, serializeNumber } from './jcs.js';

/** The `canonicalize` package (the reference implementation), unwrapped: accepts toJSON, drops undefined. */
const canonicalizeReference = canonicalizeLib as unknown as (value: unknown) => string | undefined;

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const jcsDir = path.resolve(projectRoot, '..', 'shared', 'conformance', 'jcs');
// Missing locally: those tests show as skipped; under REQUIRE_CONFORMANCE=1 (CI) this file fails instead.
const haveConformance = !skipUnlessAvailable(existsSync(path.join(jcsDir, 'input')), 'REQUIRE_CONFORMANCE', `JCS conformance data not found at ${jcsDir}`);

describe.skipIf(!haveConformance)('RFC 8785 conformance files (cyberphone/json-canonicalization testdata)', () => {
  const files = haveConformance ? readdirSync(path.join(jcsDir, 'input')).filter((f) => f.endsWith('.json')) : [];
  it('has the input files', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
  });
  for (const file of files) {
    it(`${file}: byte-exact output and outhex`, () => {
      const input = JSON.parse(readFileSync(path.join(jcsDir, 'input', file), 'utf8')) as unknown;
      const got = Buffer.from(canonicalize(input), 'utf8');
      expect(got.equals(readFileSync(path.join(jcsDir, 'output', file)))).toBe(true);
      const hex = readFileSync(path.join(jcsDir, 'outhex', file.replace(/\.json$/, '.txt')), 'utf8')
        .split(/\s+/)
        .filter(Boolean)
        .join('');
      expect(got.toString('hex')).toBe(hex.toLowerCase());
    });
  }
});

// The generator of the ES6 number test file, from the README beside the conformance data.
const STATIC_U64S: bigint[] = [
  0x0000000000000000n, 0x8000000000000000n, 0x0000000000000001n, 0x8000000000000001n,
  0xc46696695dbd1cc3n, 0xc43211ede4974a35n, 0xc3fce97ca0f21056n, 0xc3c7213080c1a6acn,
  0xc39280f39a348556n, 0xc35d9b1f5d20d557n, 0xc327af4c4a80aaacn, 0xc2f2f2a36ecd5556n,
  0xc2be51057e155558n, 0xc28840d131aaaaacn, 0xc253670dc1555557n, 0xc21f0b4935555557n,
  0xc1e8d5d42aaaaaacn, 0xc1b3de4355555556n, 0xc17fca0555555556n, 0xc1496e6aaaaaaaabn,
  0xc114585555555555n, 0xc0e046aaaaaaaaabn, 0xc0aa0aaaaaaaaaaan, 0xc074d55555555555n,
  0xc040aaaaaaaaaaabn, 0xc00aaaaaaaaaaaabn, 0xbfd5555555555555n, 0xbfa1111111111111n,
  0xbf6b4e81b4e81b4fn, 0xbf35d867c3ece2a5n, 0xbf0179ec9cbd821en, 0xbecbf647612f3696n,
  0xbe965e9f80f29212n, 0xbe61e54c672874dbn, 0xbe2ca213d840baf8n, 0xbdf6e80fe033c8c6n,
  0xbdc2533fe68fd3d2n, 0xbd8d51ffd74c861cn, 0xbd5774ccac3d3817n, 0xbd22c3d6f030f9acn,
  0xbcee0624b3818f79n, 0xbcb804ea293472c7n, 0xbc833721ba905bd3n, 0xbc4ebe9c5db3c61en,
  0xbc18987d17c304e5n, 0xbbe3ad30dfcf371dn, 0xbbaf7b816618582fn, 0xbb792f9ab81379bfn,
  0xbb442615600f9499n, 0xbb101e77800c76e1n, 0xbad9ca58cce0be35n, 0xbaa4a1e0a3e6fe90n,
  0xba708180831f320dn, 0xba3a68cd9e985016n, 0x446696695dbd1cc3n, 0x443211ede4974a35n,
  0x43fce97ca0f21056n, 0x43c7213080c1a6acn, 0x439280f39a348556n, 0x435d9b1f5d20d557n,
  0x4327af4c4a80aaacn, 0x42f2f2a36ecd5556n, 0x42be51057e155558n, 0x428840d131aaaaacn,
  0x4253670dc1555557n, 0x421f0b4935555557n, 0x41e8d5d42aaaaaacn, 0x41b3de4355555556n,
  0x417fca0555555556n, 0x41496e6aaaaaaaabn, 0x4114585555555555n, 0x40e046aaaaaaaaabn,
  0x40aa0aaaaaaaaaaan, 0x4074d55555555555n, 0x4040aaaaaaaaaaabn, 0x400aaaaaaaaaaaabn,
  0x3fd5555555555555n, 0x3fa1111111111111n, 0x3f6b4e81b4e81b4fn, 0x3f35d867c3ece2a5n,
  0x3f0179ec9cbd821en, 0x3ecbf647612f3696n, 0x3e965e9f80f29212n, 0x3e61e54c672874dbn,
  0x3e2ca213d840baf8n, 0x3df6e80fe033c8c6n, 0x3dc2533fe68fd3d2n, 0x3d8d51ffd74c861cn,
  0x3d5774ccac3d3817n, 0x3d22c3d6f030f9acn, 0x3cee0624b3818f79n, 0x3cb804ea293472c7n,
  0x3c833721ba905bd3n, 0x3c4ebe9c5db3c61en, 0x3c18987d17c304e5n, 0x3be3ad30dfcf371dn,
  0x3baf7b816618582fn, 0x3b792f9ab81379bfn, 0x3b442615600f9499n, 0x3b101e77800c76e1n,
  0x3ad9ca58cce0be35n, 0x3aa4a1e0a3e6fe90n, 0x3a708180831f320dn, 0x3a3a68cd9e985016n,
  0x4024000000000000n, 0x4014000000000000n, 0x3fe0000000000000n, 0x3fa999999999999an,
  0x3f747ae147ae147bn, 0x3f40624dd2f1a9fcn, 0x3f0a36e2eb1c432dn, 0x3ed4f8b588e368f1n,
  0x3ea0c6f7a0b5ed8dn, 0x3e6ad7f29abcaf48n, 0x3e35798ee2308c3an, 0x3ed539223589fa95n,
  0x3ed4ff26cd5a7781n, 0x3ed4f95a762283ffn, 0x3ed4f8c60703520cn, 0x3ed4f8b72f19cd0dn,
  0x3ed4f8b5b31c0c8dn, 0x3ed4f8b58d1c461an, 0x3ed4f8b5894f7f0en, 0x3ed4f8b588ee37f3n,
  0x3ed4f8b588e47da4n, 0x3ed4f8b588e3849cn, 0x3ed4f8b588e36bb5n, 0x3ed4f8b588e36937n,
  0x3ed4f8b588e368f8n, 0x3ed4f8b588e368f1n, 0x3ff0000000000000n, 0xbff0000000000000n,
  0xbfeffffffffffffan, 0xbfeffffffffffffbn, 0x3feffffffffffffan, 0x3feffffffffffffbn,
  0x3feffffffffffffcn, 0x3feffffffffffffen, 0xbfefffffffffffffn, 0xbfefffffffffffffn,
  0x3fefffffffffffffn, 0x3fefffffffffffffn, 0x3fd3333333333332n, 0x3fd3333333333333n,
  0x3fd3333333333334n, 0x0010000000000000n, 0x000ffffffffffffdn, 0x000fffffffffffffn,
  0x7fefffffffffffffn, 0xffefffffffffffffn, 0x4340000000000000n, 0xc340000000000000n,
  0x4430000000000000n, 0x44b52d02c7e14af5n, 0x44b52d02c7e14af6n, 0x44b52d02c7e14af7n,
  0x444b1ae4d6e2ef4en, 0x444b1ae4d6e2ef4fn, 0x444b1ae4d6e2ef50n, 0x3eb0c6f7a0b5ed8cn,
  0x3eb0c6f7a0b5ed8dn, 0x41b3de4355555553n, 0x41b3de4355555554n, 0x41b3de4355555555n,
  0x41b3de4355555556n, 0x41b3de4355555557n, 0xbecbf647612f3696n, 0x43143ff3c1cb0959n,
];

/** SHA-256 of the first `lines` lines `hex,expected\n` of the ES6 number sequence, streamed. */
function es6NumbersDigest(lines: number): { sha256: string; bytes: number } {
  const hash = createHash('sha256');
  const word = Buffer.alloc(8);
  let bytes = 0;
  let chunk = '';
  let block = Buffer.alloc(32);
  let blockIndex = 4; // forces a fresh block on the first random draw
  const emit = (bits: bigint): void => {
    word.writeBigUInt64LE(bits);
    const line = `${bits.toString(16)},${serializeNumber(word.readDoubleLE(0))}\n`;
    chunk += line;
    bytes += line.length; // ASCII only
    if (chunk.length > 1 << 16) {
      hash.update(chunk, 'latin1');
      chunk = '';
    }
  };
  for (let idx = 0; idx < lines; idx++) {
    if (idx < STATIC_U64S.length) {
      emit(STATIC_U64S[idx]);
    } else if (idx < STATIC_U64S.length + 2000) {
      emit(0x0010000000000000n + BigInt(idx - STATIC_U64S.length));
    } else {
      for (;;) {
        if (blockIndex === 4) {
          block = createHash('sha256').update(block).digest();
          blockIndex = 0;
        }
        const f = block.readDoubleLE(blockIndex * 8);
        const bits = block.readBigUInt64LE(blockIndex * 8);
        blockIndex++;
        if (f !== 0 && Number.isFinite(f)) {
          emit(bits);
          break;
        }
      }
    }
  }
  hash.update(chunk, 'latin1');
  return { sha256: hash.digest('hex'), bytes };
}

describe('ES6 number serialization (the README generator, regenerated in-process)', () => {
  it('spot values from the README', () => {
    const cases: Array<[bigint, string]> = [
      [0x4340000000000001n, '9007199254740994'],
      [0x4340000000000002n, '9007199254740996'],
      [0x444b1ae4d6e2ef50n, '1e+21'],
      [0x3eb0c6f7a0b5ed8dn, '0.000001'],
      [0x3eb0c6f7a0b5ed8cn, '9.999999999999997e-7'],
      [0x8000000000000000n, '0'],
      [0n, '0'],
    ];
    const b = Buffer.alloc(8);
    for (const [bits, expected] of cases) {
      b.writeBigUInt64LE(bits);
      expect(serializeNumber(b.readDoubleLE(0))).toBe(expected);
    }
  });

  it('first 1,000 lines match the published SHA-256', () => {
    expect(es6NumbersDigest(1000)).toEqual({
      sha256: 'be18b62b6f69cdab33a7e0dae0d9cfa869fda80ddc712221570f9f40a5878687',
      bytes: 37967,
    });
  });

  it('first 1,000,000 lines match the published SHA-256 (40,357,417 bytes)', () => {
    expect(es6NumbersDigest(1_000_000)).toEqual({
      sha256: '49415fee2c56c77864931bd3624faad425c3c577d6d74e89a83bc725506dad16',
      bytes: 40_357_417,
    });
  });
});

describe('JCS wrapper rejects values without an I-JSON form', () => {
  const bad: Array<[string, unknown]> = [
    ['lone high surrogate in a string', { a: 'x\ud800' }],
    ['lone low surrogate in a string', ['\udc00']],
    ['lone surrogate in a key', { ['k\udbff']: 1 }],
    ['NaN', { n: NaN }],
    ['Infinity', [Infinity]],
    ['-Infinity', -Infinity],
    ['undefined member', { a: undefined }],
    ['undefined top level', undefined],
    ['function', { f: () => 1 }],
    ['bigint', { b: 1n }],
    ['Date (toJSON)', { d: new Date(0) }],
    ['boxed number', { n: new Number(1) }],
    ['sparse array', [1, , 3]], // eslint-disable-line no-sparse-arrays
  ];
  for (const [name, value] of bad) {
    it(`throws JcsError for ${name}`, () => {
      expect(() => canonicalize(value)).toThrow(JcsError);
    });
  }
  it('names where the bad value is', () => {
    expect(() => canonicalize({ a: [1, { b: NaN }] })).toThrow(/\.a\[1\]\.b/);
  });
  it('accepts well-formed pairs and ordinary keys like __proto__', () => {
    const v = JSON.parse('{"__proto__":{"x":1},"😀":"😀","b":-0,"a":1e21}') as unknown;
    expect(canonicalize(v)).toBe('{"__proto__":{"x":1},"a":1e+21,"b":0,"😀":"😀"}');
  });
  it('serializeNumber rejects non-finite numbers', () => {
    expect(() => serializeNumber(NaN)).toThrow(JcsError);
    expect(() => serializeNumber(-Infinity)).toThrow(JcsError);
  });
});

describe('byte-identical to the canonicalize package (differential)', () => {
  it('random JSON values, full Unicode strings and keys, doubles', () => {
    const value = fc.jsonValue({ maxDepth: 6, stringUnit: 'binary' });
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalize(v)).toBe(canonicalizeReference(v));
      }),
      { numRuns: 2000 },
    );
  });
  it('random doubles from raw bits', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        expect(serializeNumber(d)).toBe(canonicalizeReference(d));
        expect(canonicalize([d])).toBe(canonicalizeReference([d]));
      }),
      { numRuns: 5000 },
    );
  });
  it('strings with any UTF-16 code units: same output, or both reject a lone surrogate', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 12 }), (s) => {
        let reference: string | undefined;
        try {
          reference = canonicalizeReference({ [s]: s });
        } catch {
          reference = undefined;
        }
        if (reference === undefined) expect(() => canonicalize({ [s]: s })).toThrow(JcsError);
        else expect(canonicalize({ [s]: s })).toBe(reference);
      }),
      { numRuns: 3000 },
    );
  });
  it('key order is UTF-16 code-unit order, for small and large objects', () => {
    const small = { '\ue000': 1, '😀': 2, a: 3, A: 4, '': 5 };
    expect(canonicalize(small)).toBe('{"":5,"A":4,"a":3,"😀":2,"\ue000":1}');
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary', maxLength: 4 }), fc.integer(), { minKeys: 41, maxKeys: 120 }), (big) => {
        expect(canonicalize(big)).toBe(canonicalizeReference(big));
      }),
      { numRuns: 200 },
    );
  });
  it('canonicalizeWithText splices a known member and matches canonicalize', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.jsonValue({ maxDepth: 3 })), fc.jsonValue({ maxDepth: 3 }), (obj, block) => {
        const value = { ...obj, verify: block } as Record<string, unknown>;
        expect(canonicalizeWithText(value, 'verify', canonicalize(block), JSON.stringify(block)).canonical).toBe(canonicalize(value));
      }),
      { numRuns: 500 },
    );
    expect(() => canonicalizeWithText({ a: { b: ['\ud800'] }, verify: 1 }, 'verify', '1', '1')).toThrow(/\.a\.b\[0\] holds a lone surrogate/);
  });
  it('canonicalizeWithText gives canonicalize and JSON.stringify of the same value from one walk', () => {
    const member = fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' });
    const keys = fc.string({ unit: 'binary', maxLength: 6 });
    fc.assert(
      fc.property(fc.dictionary(keys, member, { maxKeys: 60 }), member, (obj, block) => {
        const value = { ...obj, verify: block } as Record<string, unknown>;
        expect(canonicalizeWithText(value, 'verify', canonicalize(block), JSON.stringify(block))).toEqual({ canonical: canonicalize(value), json: JSON.stringify(value) });
      }),
      { numRuns: 500 },
    );
    // Integer-like keys come first in Object.keys (and so in JSON.stringify), in numeric order.
    const mixed = { b: { z: 1, 10: [{ y: -0, x: 'é\n' }], 2: null }, a: [], verify: { k: 1, c: 2 } };
    expect(canonicalizeWithText(mixed, 'verify', canonicalize(mixed.verify), JSON.stringify(mixed.verify))).toEqual({
      canonical: canonicalize(mixed),
      json: JSON.stringify(mixed),
    });
    expect(() => canonicalizeWithText({ a: { b: ['\ud800'] }, verify: 1 }, 'verify', '1', '1')).toThrow(/\.a\.b\[0\] holds a lone surrogate/);
    expect(() => canonicalizeWithText({ a: [1, undefined], verify: 1 }, 'verify', '1', '1')).toThrow(JcsError);
  });
  it('cyclic values throw JcsError instead of overflowing the stack', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => canonicalize(a)).toThrow(JcsError);
  });
});
