/**
 * @module Golden receipts: the invoice example (docs/protocol.md#worked-example) (fail and pass) issued with the
 * RFC 8032 test-1 key (deterministic Ed25519 signatures), a fixed clock and
 * fixed verification ids, so the exact bytes are stable and any change to the
 * response shape, hashing, canonicalization or signing shows up as a diff.
 * Regenerate deliberately with `npx tsx test/golden/generate.ts`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseVerificationRequest } from '../../src/core/request.js';
import { createSchemaEngine } from '../../src/core/schema/index.js';
import { createVerifier } from '../../src/core/verify.js';
import { attestationExtension } from '../../src/receipts/agent-card-extension.js';
import { privateKeyPemFromSeed } from '../../src/receipts/ed25519.js';
import { createReceiptIssuer } from '../../src/receipts/issue-receipt.js';
import { createStaticKeyRing } from '../../src/receipts/key-ring.js';
import { createAttestor } from '../../src/receipts/v1/attestation.js';

export const GOLDEN_DIR = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.resolve(GOLDEN_DIR, '..', 'fixtures');

/** RFC 8032 §7.1 TEST 1 secret key. Public test data, never a real signing key. */
export const RFC8032_TEST1_SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
export const RFC8032_TEST1_PUBLIC_KEY = Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex').toString('base64');
export const GOLDEN_KEY_VERSION = 'k-20260101-00000001';
export const GOLDEN_TIME = '2026-01-15T12:00:00Z';

export interface GoldenCase {
  /** File name under test/golden. */
  file: string;
  /** The request fixture it is issued for. */
  requestFile: string;
  verificationId: string;
}

export const GOLDEN_CASES: GoldenCase[] = [
  { file: 'receipt-fail.json', requestFile: path.join(FIXTURES, 'invoice.request.json'), verificationId: '00000000-0000-4000-8000-000000000001' },
  { file: 'receipt-pass.json', requestFile: path.join(FIXTURES, 'invoice-pass.request.json'), verificationId: '00000000-0000-4000-8000-000000000002' },
];

export function goldenKeyRing() {
  return createStaticKeyRing(privateKeyPemFromSeed(Buffer.from(RFC8032_TEST1_SEED, 'hex')), {
    keyVersion: GOLDEN_KEY_VERSION,
    notBefore: '2026-01-01T00:00:00Z',
  });
}

/** The agent card fragment a verifier needs for the golden receipts. */
export function goldenAgentCard(): Record<string, unknown> {
  return { name: 'agent-output-verifier (golden)', capabilities: { extensions: [attestationExtension(goldenKeyRing())] } };
}

/** Issues every golden receipt afresh; returns file → exact response text. */
export function issueGoldenReceipts(): Map<string, string> {
  const keyRing = goldenKeyRing();
  const attestor = createAttestor({ keyRing, serviceName: 'agent-output-verifier', baseUrl: 'https://verifier.example' });
  const verifier = createVerifier({ engine: createSchemaEngine() });
  const out = new Map<string, string>();
  for (const c of GOLDEN_CASES) {
    const issuer = createReceiptIssuer({
      verifier,
      attestor,
      clock: () => new Date(GOLDEN_TIME),
      newId: () => c.verificationId,
      verifierVersion: '0.1.0',
    });
    out.set(c.file, issuer.issue(parseVerificationRequest(readFileSync(c.requestFile, 'utf8'))).text);
  }
  return out;
}
