/**
 * @module The pure-JS receipt verifier (used by the browser-safe client) gives
 * exactly the answers of the Node one: on a valid receipt, on receipts with one
 * character changed anywhere, with the wrong key, a forged signature, a
 * non-canonical encoding, and with the original or a different request.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attestationExtension } from './agent-card-extension.js';
import { privateKeyPemFromSeed } from './ed25519.js';
import { computeHashes, sha256Hex } from './hashes.js';
import { createStaticKeyRing } from './key-ring.js';
import { createAttestor } from './v1/attestation.js';
import { requestHashVectorTexts } from './v1/request-hash-vectors.js';
import { newReceiptTrace } from './receipt-verifier.js';
import { ReceiptKeyError, verifyReceipt } from './verify-receipt.js';
import { portableReceiptCrypto, verifyReceiptPortable } from './verify-receipt-portable.js';
import { parseVerificationRequest } from '../core/request.js';

const SEED = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
const ring = createStaticKeyRing(privateKeyPemFromSeed(SEED), { keyVersion: 'k1', notBefore: '2026-01-01T00:00:00Z' });
const attestor = createAttestor({ keyRing: ring, serviceName: 'agent-output-verifier', baseUrl: 'https://v.example/' });
const card = { name: 'x', capabilities: { extensions: [attestationExtension(ring)] } };
const requests = requestHashVectorTexts().map((v) => v.request);

function receiptText(request: string): string {
  const parsed = parseVerificationRequest(request);
  const at = '2026-02-03T04:05:06Z';
  return JSON.stringify(
    attestor.attach(
      { summary: { result: 'pass', blocking_checks: [] }, result: 'pass', verification_id: '00000000-0000-4000-8000-000000000000', task_id: parsed.request.task_id, agent_id: parsed.request.agent_id, ...computeHashes(parsed), verified_at: at, verifier_version: '0.1.0' },
      { context: 'verify', timestamp: at },
    ),
  );
}

const both = (receipt: unknown, keys: Parameters<typeof verifyReceipt>[1], request?: string) => {
  const options = request === undefined ? {} : { request };
  return [verifyReceipt(receipt, keys, options), verifyReceiptPortable(receipt, keys, options)] as const;
};

describe('portable receipt verifier', () => {
  const text = receiptText(requests[1]);

  it('accepts the valid receipt, with the card, the raw key and the request', () => {
    for (const keys of [{ agentCard: card }, { publicKey: ring.active().publicKey }]) {
      const [node, portable] = both(text, keys, requests[1]);
      expect(node).toEqual({ valid: true, keyVersion: 'k1' });
      expect(portable).toEqual(node);
    }
  });

  it('matches the Node verifier on every one-character change of the receipt', () => {
    fc.assert(
      fc.property(fc.nat({ max: text.length - 1 }), fc.constantFrom('0', '1', 'a', 'f', 'A', '+', '/', '=', ' ', '"', '9'), (at, ch) => {
        const tampered = text.slice(0, at) + ch + text.slice(at + 1);
        const [node, portable] = both(tampered, { agentCard: card }, requests[1]);
        expect(portable).toEqual(node);
        if (tampered !== text) expect(node.valid).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it('matches on a different request, a wrong key and a forged signature', () => {
    const other = createStaticKeyRing(privateKeyPemFromSeed(Buffer.alloc(32, 7)), { keyVersion: 'k1', notBefore: '2026-01-01T00:00:00Z' });
    const receipt = JSON.parse(text) as { attestation: { signature: string } };
    const sig = Buffer.from(receipt.attestation.signature, 'base64');
    sig[40] ^= 1;
    const forged = { ...receipt, attestation: { ...receipt.attestation, signature: sig.toString('base64') } };
    const cases: Array<[unknown, Parameters<typeof verifyReceipt>[1], string | undefined, string]> = [
      [text, { agentCard: card }, requests[0], 'output_hash'],
      [text, { publicKey: other.active().publicKey }, undefined, 'signature'],
      [forged, { agentCard: card }, undefined, 'signature'],
    ];
    for (const [r, keys, request, failedCheck] of cases) {
      const [node, portable] = both(r, keys, request);
      expect(node).toMatchObject({ valid: false, failedCheck });
      expect(portable).toEqual(node);
    }
  });

  it('refuses a malformed raw key the same way', () => {
    expect(() => verifyReceiptPortable(text, { publicKey: 'not-base64' })).toThrow(ReceiptKeyError);
    expect(() => verifyReceipt(text, { publicKey: 'not-base64' })).toThrow(ReceiptKeyError);
  });

  it('hashes like Node', () => {
    for (const s of ['', 'abc', 'café ✓ 🚀', 'x'.repeat(100_000)]) expect(portableReceiptCrypto.sha256Hex(s)).toBe(sha256Hex(s));
  });

  it('traces every check it ran, and the hashes it compared, without changing its answer', () => {
    const full = ['format', 'key_not_found', 'algorithm', 'key_validity', 'signature', 'output_hash', 'schema_hash', 'rules_hash', 'request_hash'];
    const good = newReceiptTrace();
    expect(verifyReceiptPortable(text, { agentCard: card }, { request: requests[1], trace: good })).toEqual({ valid: true, keyVersion: 'k1' });
    expect(good.steps.map((st) => [st.check, st.ok])).toEqual(full.map((c) => [c, true]));
    expect(good.keyVersion).toBe('k1');
    const stated = JSON.parse(text) as Record<string, string>;
    for (const h of ['output_hash', 'schema_hash', 'rules_hash', 'request_hash'] as const) {
      expect(good.hashes[h]).toEqual({ receipt: stated[h], computed: stated[h] });
    }

    // No request: the signature is the last check, the hashes are only the receipt's.
    const noRequest = newReceiptTrace();
    verifyReceipt(text, { agentCard: card }, { trace: noRequest });
    expect(noRequest.steps.map((st) => st.check)).toEqual(full.slice(0, 5));
    expect(noRequest.hashes.output_hash).toEqual({ receipt: stated.output_hash });

    // A failure ends the trace with the failing check, whose detail is the message.
    const wrong = newReceiptTrace();
    const outcome = verifyReceiptPortable(text, { agentCard: card }, { request: requests[0], trace: wrong });
    expect(outcome).toMatchObject({ valid: false, failedCheck: 'output_hash' });
    const last = wrong.steps[wrong.steps.length - 1];
    expect(last).toEqual({ check: 'output_hash', ok: false, detail: outcome.valid ? '' : outcome.message });
    expect(wrong.steps.slice(0, -1).every((st) => st.ok)).toBe(true);
    expect(wrong.hashes.output_hash?.computed).not.toBe(stated.output_hash);

    // On tampered receipts the answer is the one given without a trace, and the trace ends where it failed.
    fc.assert(
      fc.property(fc.nat({ max: text.length - 1 }), fc.constantFrom('0', 'a', 'A', '+', '"', '9'), (at, ch) => {
        const tampered = text.slice(0, at) + ch + text.slice(at + 1);
        const trace = newReceiptTrace();
        const traced = verifyReceiptPortable(tampered, { agentCard: card }, { request: requests[1], trace });
        expect(traced).toEqual(verifyReceiptPortable(tampered, { agentCard: card }, { request: requests[1] }));
        const end = trace.steps[trace.steps.length - 1];
        expect(end?.ok).toBe(traced.valid);
        if (!traced.valid) expect(end?.check).toBe(traced.failedCheck);
      }),
      { numRuns: 200 },
    );
  });
});
