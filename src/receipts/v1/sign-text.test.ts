/**
 * @module The signer the SQLite writer thread runs (signVerifyText) makes, from the unsigned text alone,
 * the very bytes the HTTP thread's attestor makes from the response object: the same signature (Ed25519
 * is deterministic) and the same signed text.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStaticKeyRing } from '../key-ring.js';
import { createAttestor, signingInput } from './attestation.js';
import { signVerifyText } from './sign-text.js';

const KEY = 'k-20261203-0123456789ab';
const AT = '2026-12-03T15:00:00Z';
const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const key = createPrivateKey(pem);
const attestor = createAttestor({
  serviceName: 'svc',
  baseUrl: 'https://verifier.example',
  keyRing: createStaticKeyRing(pem, { keyVersion: KEY, notBefore: '2026-01-01T00:00:00Z' }),
});

function bothWays(response: Record<string, unknown>): { attached: string; fromText: { signature: string; text: string }; input: string } {
  const attached = JSON.stringify(attestor.attach(response, { context: 'verify', timestamp: AT }));
  const presigned = attestor.presign(response, { context: 'verify', timestamp: AT, keyVersion: KEY, input: false });
  return { attached, fromText: signVerifyText(presigned.text, KEY, AT, key), input: signingInput(presigned.unsigned, 'verify', KEY, AT) };
}

describe('signVerifyText', () => {
  it('signs a response text to the attestor’s own bytes, with a signature over the signing input', () => {
    const { attached, fromText, input } = bothWays({ result: 'pass', verification_id: 'v1', verified_at: AT, items: [{ n: 2, s: 'ü😀' }], ratio: 0.1 });
    expect(fromText.text).toBe(attached);
    expect(JSON.parse(attached).attestation.signature).toBe(fromText.signature);
    expect(verify(null, Buffer.from(input, 'utf8'), createPublicKey(key), Buffer.from(fromText.signature, 'base64'))).toBe(true);
  });

  it('agrees with the attestor on random responses', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (extra) => {
        const { attached, fromText } = bothWays({ ...extra, result: 'fail', verification_id: 'v2', verified_at: AT });
        expect(fromText.text).toBe(attached);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a text holding a lone surrogate, as JCS does', () => {
    expect(() => signVerifyText('{"a":"\\ud800"}', KEY, AT, key)).toThrow(/surrogate/);
  });
});
