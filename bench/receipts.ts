/**
 * @module Receipt issuing throughput vs a bare Ed25519 signature, on the SPEC
 * §8 invoice with a precomputed verdict: per receipt, the four hashes, the
 * response assembly, its JCS canonicalization and the signature. The bar is
 * ≥ 0.6× of the bare `crypto.sign` rate on the same key in the same run, i.e.
 * hashing and canonicalizing must cost less than the signature itself.
 *
 * Run: npx tsx bench/receipts.ts [seconds-per-round]
 */
import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseVerificationRequest } from '../src/core/request.js';
import { buildResponse } from '../src/core/response.js';
import { createSchemaEngine } from '../src/core/schema/index.js';
import { createVerifier } from '../src/core/verify.js';
import { computeHashes } from '../src/receipts/hashes.js';
import { createStaticKeyRing } from '../src/receipts/key-ring.js';
import { createAttestor, signingInput } from '../src/receipts/v1/attestation.js';

const seconds = Number(process.argv[2] ?? 1.5);
const root = path.resolve(import.meta.dirname, '..');
const parsed = parseVerificationRequest(readFileSync(path.join(root, 'test', 'fixtures', 'invoice.request.json'), 'utf8'));
const verdict = createVerifier({ engine: createSchemaEngine() }).verify(parsed);

const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const key = createPrivateKey(pem);
const keyRing = createStaticKeyRing(pem, { keyVersion: 'k-20260101-bench0001', notBefore: '2026-01-01T00:00:00Z' });
const attestor = createAttestor({ keyRing, serviceName: 'agent-output-verifier', baseUrl: 'https://verifier.example' });
const verifiedAt = '2026-01-15T12:00:00Z';

function receipt(): string {
  const hashes = computeHashes(parsed);
  const response = buildResponse(
    verdict,
    { verification_id: '00000000-0000-4000-8000-000000000001', ...hashes, verified_at: verifiedAt, verifier_version: '0.1.0' },
    'full',
  );
  return JSON.stringify(attestor.attach(response, { context: 'verify', timestamp: verifiedAt }));
}

// The bare loop signs a message of the same size as a receipt's signing input.
const sample = JSON.parse(receipt()) as Record<string, unknown>;
delete sample.attestation;
const data = Buffer.from(signingInput(sample, 'verify', 'k-20260101-bench0001', verifiedAt), 'utf8');

function rate(fn: () => unknown): number {
  const deadline = performance.now() + seconds * 1000;
  let n = 0;
  const start = performance.now();
  while (performance.now() < deadline) {
    for (let i = 0; i < 50; i++) fn();
    n += 50;
  }
  return n / ((performance.now() - start) / 1000);
}

rate(receipt);
rate(() => sign(null, data, key)); // warm-up
const receipts: number[] = [];
const bare: number[] = [];
for (let round = 0; round < 3; round++) {
  receipts.push(rate(receipt));
  bare.push(rate(() => sign(null, data, key)));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const r = median(receipts);
const b = median(bare);
const ratio = r / b;
console.log(`signing input: ${data.length} bytes; receipt text: ${Buffer.byteLength(receipt())} bytes`);
console.log(`receipts/sec (4 hashes + response + JCS + Ed25519): ${r.toFixed(0)}  rounds ${receipts.map((x) => x.toFixed(0)).join(', ')}`);
console.log(`bare crypto.sign/sec (same key, same size):        ${b.toFixed(0)}  rounds ${bare.map((x) => x.toFixed(0)).join(', ')}`);
console.log(`ratio: ${ratio.toFixed(3)}× (bar ≥ 0.6×) ${ratio >= 0.6 ? 'OK' : 'BELOW BAR'}`);
