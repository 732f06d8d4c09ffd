import { describe, it, expect } from 'vitest';
import { verify } from 'node:crypto';
import { attestationExtension } from './agent-card-extension.js';
import { privateKeyPemFromSeed, publicKeyFromBase64 } from './ed25519.js';
import { computeHashes } from './hashes.js';
import { canonicalize } from './jcs.js';
import { createStaticKeyRing, type KeyRing } from './key-ring.js';
import { createAttestor, signingInput } from './v1/attestation.js';
import { requestHashVectorTexts } from './v1/request-hash-vectors.js';
import { ReceiptKeyError, verifyReceipt } from './verify-receipt.js';
import { parseVerificationRequest } from '../core/request.js';

const SEED = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
const ring = createStaticKeyRing(privateKeyPemFromSeed(SEED), { keyVersion: 'k-20260101-0001', notBefore: '2026-01-01T00:00:00Z' });
const attestor = createAttestor({ keyRing: ring, serviceName: 'agent-output-verifier', baseUrl: 'https://v.example/' });
const card = (r: KeyRing = ring) => ({ name: 'x', capabilities: { extensions: [attestationExtension(r)] } });

const requestText = requestHashVectorTexts()[1].request;
function receiptFor(text = requestText, at = '2026-02-03T04:05:06Z') {
  const parsed = parseVerificationRequest(text);
  const hashes = computeHashes(parsed);
  const response = {
    summary: { result: 'pass', blocking_checks: [] },
    result: 'pass',
    verification_id: '00000000-0000-4000-8000-000000000000',
    task_id: parsed.request.task_id,
    ...hashes,
    verified_at: at,
    verifier_version: '0.1.0',
    flags: [{ check: 'x', field: 'ü', severity: 'warning', detail: '1e21 = 1e+21' }],
  };
  return attestor.attach(response, { context: 'verify', timestamp: at });
}

describe('attestation v1', () => {
  it('appends verify then attestation; signature is Ed25519 over JCS of the envelope', () => {
    const r = receiptFor();
    const keys = Object.keys(r);
    expect(keys.slice(-2)).toEqual(['verify', 'attestation']);
    expect(r.verify).toEqual({
      public_key_url: 'https://v.example/.well-known/agent-card.json',
      key_version: 'k-20260101-0001',
      canonicalization: 'RFC 8785 (JCS)',
      hash_algorithm: 'SHA-256',
      service: 'agent-output-verifier',
      mcp: 'https://v.example/mcp',
    });
    expect(r.attestation).toMatchObject({ algorithm: 'Ed25519', key_version: 'k-20260101-0001', timestamp: '2026-02-03T04:05:06Z' });
    const { attestation, ...unsigned } = r;
    // Independent construction of the signed text with the plain canonicalizer.
    const envelope = canonicalize({
      context: 'json-schema-verifier/verify-schema-attestation/v1',
      algorithm: 'Ed25519',
      key_version: attestation.key_version,
      attested_at: attestation.timestamp,
      response: unsigned,
    });
    expect(signingInput(unsigned, 'verify', attestation.key_version, attestation.timestamp)).toBe(envelope);
    const pub = publicKeyFromBase64(ring.active().publicKey)!;
    expect(verify(null, Buffer.from(envelope, 'utf8'), pub, Buffer.from(attestation.signature, 'base64'))).toBe(true);
  });

  it('refuses a verified_at that differs from the timestamp', () => {
    expect(() => attestor.attach({ verified_at: '2026-02-03T04:05:06Z' }, { context: 'verify', timestamp: '2026-02-03T04:05:07Z' })).toThrow(
      /verified_at/,
    );
  });

  it('score context signs under the trust-score context', () => {
    const r = attestor.attach({ agent_id: 'a', score: 71 }, { context: 'score', timestamp: '2026-02-03T04:05:06Z' });
    expect(verifyReceipt(r, { agentCard: card() })).toEqual({ valid: true, keyVersion: 'k-20260101-0001' });
    expect(verifyReceipt(r, { agentCard: card() }, { context: 'verify' })).toMatchObject({ valid: false });
  });
});

describe('verifyReceipt', () => {
  const publicKey = ring.active().publicKey;

  it('accepts a good receipt with a raw key, with the agent card, as text, with the request', () => {
    const r = receiptFor();
    expect(verifyReceipt(r, { publicKey })).toEqual({ valid: true, keyVersion: 'k-20260101-0001' });
    expect(verifyReceipt(JSON.stringify(r), { agentCard: card() }, { request: requestText })).toEqual({ valid: true, keyVersion: 'k-20260101-0001' });
    expect(verifyReceipt(r, { agentCard: card() }, { request: JSON.parse(requestText) })).toMatchObject({ valid: true });
  });

  const cases: Array<[string, (r: any) => unknown, string]> = [
    ['changed result', (r) => ({ ...r, result: 'fail' }), 'signature'],
    ['changed nested flag', (r) => ({ ...r, flags: [{ ...r.flags[0], detail: 'x' }] }), 'signature'],
    ['extra field', (r) => ({ ...r, extra: 1 }), 'signature'],
    ['removed field', (r) => { const { verifier_version: _v, ...rest } = r; return rest; }, 'signature'],
    ['changed output_hash', (r) => ({ ...r, output_hash: '0'.repeat(64) }), 'signature'],
    ['changed verify.service', (r) => ({ ...r, verify: { ...r.verify, service: 'other' } }), 'signature'],
    ['no attestation', (r) => { const { attestation: _a, ...rest } = r; return rest; }, 'format'],
    ['bad signature encoding', (r) => ({ ...r, attestation: { ...r.attestation, signature: 'abc' } }), 'format'],
    ['flipped signature', (r) => ({ ...r, attestation: { ...r.attestation, signature: flip(r.attestation.signature) } }), 'signature'],
    ['timestamp ≠ verified_at', (r) => ({ ...r, attestation: { ...r.attestation, timestamp: '2026-02-03T04:05:07Z' } }), 'format'],
    ['other algorithm', (r) => ({ ...r, attestation: { ...r.attestation, algorithm: 'ES256' } }), 'algorithm'],
    ['unknown key version', (r) => ({ ...r, verify: { ...r.verify, key_version: 'k-x' }, attestation: { ...r.attestation, key_version: 'k-x' } }), 'key_not_found'],
    ['lone surrogate', (r) => ({ ...r, task_id: '\ud800' }), 'format'],
    ['not an object', () => [1], 'format'],
  ];
  function flip(sig: string): string {
    const b = Buffer.from(sig, 'base64');
    b[10] ^= 1;
    return b.toString('base64');
  }
  for (const [name, mutate, check] of cases) {
    it(`fails ${check} for: ${name}`, () => {
      const res = verifyReceipt(mutate(receiptFor()), { agentCard: card() });
      expect(res).toMatchObject({ valid: false, failedCheck: check });
    });
  }

  it('text with a duplicated key or invalid JSON is a format failure', () => {
    const text = JSON.stringify(receiptFor());
    expect(verifyReceipt(text.replace('{', '{"result":"fail",'), { publicKey })).toMatchObject({ failedCheck: 'format' });
    expect(verifyReceipt(text.slice(0, -1), { publicKey })).toMatchObject({ failedCheck: 'format' });
  });

  it('checks the key validity window from the agent card', () => {
    const retired = createStaticKeyRing(privateKeyPemFromSeed(SEED), {
      keyVersion: 'k-20260101-0001',
      notBefore: '2026-01-01T00:00:00Z',
      notAfter: '2026-02-01T00:00:00Z',
      status: 'retired',
    });
    expect(verifyReceipt(receiptFor(requestText, '2026-01-31T23:59:59Z'), { agentCard: card(retired) })).toMatchObject({ valid: true });
    expect(verifyReceipt(receiptFor(requestText, '2026-02-01T00:00:00Z'), { agentCard: card(retired) })).toMatchObject({ valid: true });
    expect(verifyReceipt(receiptFor(requestText, '2026-02-01T00:00:01Z'), { agentCard: card(retired) })).toMatchObject({
      valid: false,
      failedCheck: 'key_validity',
    });
    expect(verifyReceipt(receiptFor(requestText, '2025-12-31T23:59:59Z'), { agentCard: card() })).toMatchObject({
      valid: false,
      failedCheck: 'key_validity',
    });
  });

  it('a card without the attestation extension or with the wrong key → key_not_found / signature', () => {
    const r = receiptFor();
    expect(verifyReceipt(r, { agentCard: { capabilities: { extensions: [] } } })).toMatchObject({ failedCheck: 'key_not_found' });
    const other = createStaticKeyRing(privateKeyPemFromSeed(Buffer.alloc(32, 7)), { keyVersion: 'k-20260101-0001', notBefore: '2026-01-01T00:00:00Z' });
    expect(verifyReceipt(r, { agentCard: card(other) })).toMatchObject({ failedCheck: 'signature' });
    expect(verifyReceipt(r, { publicKey: other.active().publicKey })).toMatchObject({ failedCheck: 'signature' });
    expect(() => verifyReceipt(r, { publicKey: 'nope' })).toThrow(ReceiptKeyError);
  });

  it('given the request, recomputes every hash and names the first that differs', () => {
    const r = receiptFor();
    const req = JSON.parse(requestText);
    const variants: Array<[string, unknown]> = [
      ['output_hash', { ...req, submitted_output: { ...req.submitted_output, total: 31 } }],
      ['schema_hash', { ...req, expected_schema: { ...req.expected_schema, title: 't' } }],
      ['rules_hash', { ...req, rules: req.rules.slice(0, 1) }],
      ['rules_hash', { ...req, rules: [...req.rules.slice(0, 1), { ...req.rules[1], if_present: false }] }],
      ['request_hash', { ...req, task_id: 'tv-other' }],
      ['request_hash', { ...req, enforce_rules: false }],
      ['request_hash', { ...req, agent_id: 'seller-8' }],
      ['request_hash', { ...req, strict_content_check: true }],
    ];
    for (const [check, request] of variants) {
      expect(verifyReceipt(r, { publicKey }, { request })).toMatchObject({ valid: false, failedCheck: check });
    }
    // detail is not hashed: a compact request verifies the same receipt.
    expect(verifyReceipt(r, { publicKey }, { request: { ...req, detail: 'compact' } })).toMatchObject({ valid: true });
    expect(verifyReceipt(r, { publicKey }, { request: '{"task_id":' })).toMatchObject({ failedCheck: 'request_invalid' });
    expect(verifyReceipt(r, { publicKey }, { request: { ...req, bogus: 1 } })).toMatchObject({ failedCheck: 'request_invalid' });
  });

  it('a compact receipt (no request_hash) checks its three hashes and the request fields it carries', () => {
    const req = JSON.parse(requestText);
    const parsed = parseVerificationRequest(requestText);
    const full = receiptFor();
    const { request_hash: _h, verify: _v, attestation: _a, flags: _f, ...rest } = full;
    const compact = {
      ...rest,
      agent_id: parsed.request.agent_id,
      enforce_rules: parsed.request.enforce_rules,
      strict_content_check: parsed.request.strict_content_check,
    };
    const signed = attestor.attach(compact, { context: 'verify', timestamp: full.verified_at });
    expect(verifyReceipt(signed, { publicKey }, { request: { ...req, task_id: 'tv-2' } })).toMatchObject({ valid: true });
    expect(verifyReceipt(signed, { publicKey }, { request: { ...req, detail: 'compact' } })).toMatchObject({ valid: true });

    const variants: Array<[string, unknown]> = [
      ['task_id', { ...req, task_id: 'tv-other' }],
      ['agent_id', { ...req, agent_id: 'seller-8' }],
      ['agent_id', { ...req, agent_id: null }],
      ['enforce_rules', { ...req, enforce_rules: !parsed.request.enforce_rules }],
      ['strict_content_check', { ...req, strict_content_check: !parsed.request.strict_content_check }],
    ];
    for (const [field, request] of variants) {
      const result = verifyReceipt(signed, { publicKey }, { request });
      expect(result).toMatchObject({ valid: false, failedCheck: 'request_mismatch' });
      expect((result as { message: string }).message).toMatch(new RegExp(`^${field} does not match the request`));
    }
    // The hashes are still checked first.
    expect(verifyReceipt(signed, { publicKey }, { request: { ...req, task_id: 'tv-other', submitted_output: {} } })).toMatchObject({
      failedCheck: 'output_hash',
    });
    // Defaults count as sent: omitting a field equal to its default still matches.
    expect('strict_content_check' in req).toBe(false);
    expect(verifyReceipt(signed, { publicKey }, { request: { ...req, strict_content_check: false } })).toMatchObject({ valid: true });
  });

  it('a compact receipt that lacks a request field it should carry does not match', () => {
    const full = receiptFor();
    const { request_hash: _h, verify: _v, attestation: _a, ...compact } = full;
    const signed = attestor.attach(compact, { context: 'verify', timestamp: full.verified_at });
    expect(verifyReceipt(signed, { publicKey })).toMatchObject({ valid: true });
    expect(verifyReceipt(signed, { publicKey }, { request: JSON.parse(requestText) })).toMatchObject({ valid: false, failedCheck: 'request_mismatch' });
  });
});
