/**
 * @module End-to-end over a real socket: the invoice example (docs/protocol.md#worked-example) through
 * POST /verify/schema, checked independently of our own hashing/signing code
 * (the `canonicalize` package + node:crypto), then the stored receipt, the
 * reputation and the signed trust score.
 */
import { createHash, createPublicKey, verify as edVerify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import canonicalizeImport from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../src/receipts/index.js';
import { postJson, projectRoot, startApp, tempDir } from './http-helpers.js';
import type { Running } from './http-helpers.js';

const canonicalize = canonicalizeImport as unknown as (v: unknown) => string;
const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
const invoiceText = readFileSync(path.join(projectRoot, 'test/fixtures/invoice.request.json'), 'utf8');
const invoice = JSON.parse(invoiceText) as Record<string, any>;

/** The request with defaults filled (docs/protocol.md#hashes), written out here rather than taken from src/. */
function filledRequest(req: Record<string, any>): Record<string, unknown> {
  const rules = Array.isArray(req.rules) && req.rules.length
    ? req.rules.map((r: Record<string, unknown>) => ({
        equals_field: null, equals: null, other_field: null, value: null, in_field: null, values: null,
        tolerance: 1e-9, if_present: false, ...r,
      }))
    : null;
  const bounds = req.bounds && Object.keys(req.bounds).length
    ? Object.fromEntries(Object.entries(req.bounds as Record<string, object>).map(([k, b]) => [k, { min: null, max: null, if_present: false, ...b }]))
    : null;
  return {
    task_id: req.task_id,
    agent_id: req.agent_id ?? null,
    expected_schema: req.expected_schema,
    submitted_output: req.submitted_output,
    strict_content_check: req.strict_content_check ?? false,
    bounds,
    rules,
    enforce_rules: req.enforce_rules ?? false,
  };
}

function attestationKeys(card: any): Array<{ keyVersion: string; publicKey: string }> {
  const ext = card.capabilities.extensions.find((e: any) => String(e.uri).startsWith('urn:json-schema-verifier:extension:attestation:'));
  return ext.params.publicKeys;
}

function nodeVerify(response: Record<string, any>, card: any, context: string): boolean {
  const { attestation, ...rest } = response;
  const key = attestationKeys(card).find((k) => k.keyVersion === attestation.key_version);
  if (!key) return false;
  const x = Buffer.from(key.publicKey, 'base64').toString('base64url');
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  const envelope = { context, algorithm: 'Ed25519', key_version: attestation.key_version, attested_at: attestation.timestamp, response: rest };
  return edVerify(null, Buffer.from(canonicalize(envelope), 'utf8'), publicKey, Buffer.from(attestation.signature, 'base64'));
}

describe('HTTP: the invoice example end to end', () => {
  const tmp = tempDir();
  let srv: Running;
  let card: any;
  let text: string;
  let receipt: Record<string, any>;

  beforeAll(async () => {
    srv = await startApp(tmp.dir);
    const res = await postJson(srv.base, '/verify/schema', invoiceText);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    text = await res.text();
    receipt = JSON.parse(text);
    card = (await (await fetch(`${srv.base}/.well-known/agent-card.json`)).json()) as any;
  });
  afterAll(async () => {
    await srv?.close();
    tmp.cleanup();
  });

  it('gives the documented verdict', () => {
    expect(receipt.result).toBe('fail');
    expect(receipt.summary.blocking_checks).toEqual(['consistency:sum_equals']);
    expect(receipt.schema_compliance).toEqual({ ratio: 1, passed: 22, total: 22 });
    expect(receipt.verified_at).toBe(receipt.attestation.timestamp);
  });

  it('hashes equal an independent JCS + SHA-256 computation', () => {
    expect(receipt.output_hash).toBe(sha256(canonicalize(invoice.submitted_output)));
    expect(receipt.schema_hash).toBe(sha256(canonicalize(invoice.expected_schema)));
    expect(receipt.rules_hash).toBe(sha256(canonicalize({ bounds: invoice.bounds ?? null, rules: invoice.rules ?? null })));
    expect(receipt.request_hash).toBe(sha256(canonicalize(filledRequest(invoice))));
  });

  it('signature verifies with the key from the agent card, by node:crypto and by verifyReceipt', () => {
    expect(receipt.verify.public_key_url).toBe(`${srv.base}/.well-known/agent-card.json`);
    expect(nodeVerify(receipt, card, 'json-schema-verifier/verify-schema-attestation/v1')).toBe(true);
    // A flipped verdict must not verify.
    expect(nodeVerify({ ...receipt, result: 'pass' }, card, 'json-schema-verifier/verify-schema-attestation/v1')).toBe(false);
    expect(verifyReceipt(receipt, { agentCard: card }, { request: invoiceText })).toEqual({ valid: true, keyVersion: receipt.attestation.key_version });
  });

  it('GET /verifications/{id} returns the identical bytes', async () => {
    const res = await fetch(`${srv.base}/verifications/${receipt.verification_id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(text, 'utf8'))).toBe(true);
  });

  it('reputation and the signed score reflect the verifications', async () => {
    const agent = 'seller-invoice-1';
    const failing = { ...invoice, agent_id: agent };
    const passing = { ...invoice, agent_id: agent, submitted_output: { ...invoice.submitted_output, total: 129.5 } };
    const r1 = (await (await postJson(srv.base, '/verify/schema', JSON.stringify(failing))).json()) as any;
    const r2 = (await (await postJson(srv.base, '/verify/deliverable', JSON.stringify(passing))).json()) as any;
    expect(r1.result).toBe('fail');
    expect(r2.result).toBe('pass');

    const rep = (await (await fetch(`${srv.base}/reputation/${agent}`)).json()) as any;
    expect(rep).toMatchObject({ agent_id: agent, verifications: 2, passes: 1, fails: 1, pass_rate: 0.5 });
    // Newest first (both may share one second; then the order is the store's tie-break).
    expect(rep.history.map((h: any) => h.verification_id).sort()).toEqual([r1.verification_id, r2.verification_id].sort());
    expect(rep.history[0].verified_at >= rep.history[1].verified_at).toBe(true);
    const page1 = (await (await fetch(`${srv.base}/reputation/${agent}?limit=1`)).json()) as any;
    expect(page1.history).toHaveLength(1);
    expect(page1.history[0].verification_id).toBe(rep.history[0].verification_id);
    expect(page1.next_cursor).toEqual(expect.any(String));
    const page2 = (await (await fetch(`${srv.base}/reputation/${agent}?limit=1&cursor=${encodeURIComponent(page1.next_cursor)}`)).json()) as any;
    expect(page2.history.map((h: any) => h.verification_id)).toEqual([rep.history[1].verification_id]);
    expect(page2.next_cursor).toBeNull();

    const scoreRes = await fetch(`${srv.base}/score/${agent}`);
    expect(scoreRes.status).toBe(200);
    const score = (await scoreRes.json()) as any;
    expect(score.agent_id).toBe(agent);
    expect(score.score).toBeGreaterThanOrEqual(0);
    expect(score.score).toBeLessThanOrEqual(100);
    expect(score.inputs).toBeTypeOf('object');
    expect(score.scored_at).toBe(score.attestation.timestamp);
    expect(nodeVerify(score, card, 'json-schema-verifier/trust-score-attestation/v1')).toBe(true);
    expect(nodeVerify(score, card, 'json-schema-verifier/verify-schema-attestation/v1')).toBe(false);
    expect(verifyReceipt(score, { agentCard: card }).valid).toBe(true);

    // An agent with more passing history scores higher than one with a single failure.
    const other = 'seller-invoice-2';
    await postJson(srv.base, '/verify/schema', JSON.stringify({ ...failing, agent_id: other }));
    const otherScore = (await (await fetch(`${srv.base}/score/${other}`)).json()) as any;
    expect(otherScore.score).toBeLessThanOrEqual(score.score);

    const testAgent = await fetch(`${srv.base}/score/test-example`);
    expect(testAgent.status).toBe(422);
  });
});
