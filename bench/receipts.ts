/**
 * @module Receipt issuing throughput vs a bare Ed25519 signature, on the
 * invoice example (docs/protocol.md#worked-example) with a precomputed verdict: per receipt, the four hashes, the
 * response assembly, its JCS canonicalization and the signature. The bar is
 * ≥ 0.6× of the bare `crypto.sign` rate on the same key in the same run, i.e.
 * hashing and canonicalizing may add at most two thirds of a signature's cost.
 *
 * Run: npx tsx bench/receipts.ts [slices]   (default 20 slices of 100 ms CPU per contender)
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
import { VERSION } from '../src/version.js';

const root = path.resolve(import.meta.dirname, '..');
const parsed = parseVerificationRequest(readFileSync(path.join(root, 'test', 'fixtures', 'invoice.request.json'), 'utf8'));
const verdict = createVerifier({ engine: createSchemaEngine() }).evaluate(parsed);

const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const key = createPrivateKey(pem);
const keyRing = createStaticKeyRing(pem, { keyVersion: 'k-20260101-bench0001', notBefore: '2026-01-01T00:00:00Z' });
const attestor = createAttestor({ keyRing, serviceName: 'agent-output-verifier', baseUrl: 'https://verifier.example' });
const verifiedAt = '2026-01-15T12:00:00Z';

const meta = (hashes: ReturnType<typeof computeHashes>) => ({
  verification_id: '00000000-0000-4000-8000-000000000001',
  ...hashes,
  verified_at: verifiedAt,
  verifier_version: VERSION,
});
const prebuilt = buildResponse(verdict, meta(computeHashes(parsed)), 'full');

/** What the bar measures: the four hashes, the response's canonical form and the signature. */
function signOnly(): unknown {
  computeHashes(parsed);
  return attestor.attach(prebuilt, { context: 'verify', timestamp: verifiedAt });
}

/** The whole issue path after verification: hashes, response assembly (core), signing, wire text. */
function receipt(): string {
  const response = buildResponse(verdict, meta(computeHashes(parsed)), 'full');
  return JSON.stringify(attestor.attach(response, { context: 'verify', timestamp: verifiedAt }));
}

// The bare loop signs a message of the same size as a receipt's signing input.
const sample = JSON.parse(receipt()) as Record<string, unknown>;
delete sample.attestation;
const data = Buffer.from(signingInput(sample, 'verify', 'k-20260101-bench0001', verifiedAt), 'utf8');

/**
 * Operations per second of CPU time (user + system of this process), not wall
 * time: on a shared machine wall time mostly measures the neighbours.
 */
const SLICE_MS = 100;

/**
 * Operations per second of CPU time (user + system of this process) over one
 * slice, not wall time: on a shared machine wall time mostly measures the neighbours.
 */
function rate(fn: () => unknown): number {
  let n = 0;
  const start = process.cpuUsage();
  let used = 0;
  while (used < SLICE_MS * 1000) {
    for (let i = 0; i < 20; i++) fn();
    n += 20;
    const u = process.cpuUsage(start);
    used = u.user + u.system;
  }
  return n / (used / 1e6);
}

// Short interleaved slices, ratio taken per slice pair: on a shared machine the
// speed drifts between slices, and a ratio of neighbours cancels most of the drift.
for (let i = 0; i < 3; i++) {
  rate(receipt);
  rate(signOnly);
  rate(() => sign(null, data, key));
}
const slices = Math.max(5, Number(process.argv[2] ?? 20));
const bare: number[] = [];
const signing: number[] = [];
const full: number[] = [];
for (let i = 0; i < slices; i++) {
  bare.push(rate(() => sign(null, data, key)));
  signing.push(rate(signOnly));
  full.push(rate(receipt));
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const ratios = (xs: number[]) => xs.map((x, i) => x / bare[i]);
const quartiles = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return `${s[Math.floor(s.length / 4)].toFixed(3)}–${s[Math.floor((3 * s.length) / 4)].toFixed(3)}`;
};
console.log(`signing input: ${data.length} bytes; receipt text: ${Buffer.byteLength(receipt())} bytes; ${slices} interleaved slices of ${SLICE_MS} ms CPU`);
console.log(`${'bare crypto.sign (same key, same message size)'.padEnd(56)} ${median(bare).toFixed(0).padStart(6)}/s`);
for (const [label, xs] of [
  ['receipts: 4 hashes + response JCS + Ed25519 (the bar)', signing],
  ['full issue: + buildResponse (core) + JSON text', full],
] as const) {
  console.log(`${label.padEnd(56)} ${median(xs).toFixed(0).padStart(6)}/s  ratio ${median(ratios(xs)).toFixed(3)}× (IQR ${quartiles(ratios(xs))})`);
}
const ratio = median(ratios(signing));
console.log(`bar ≥ 0.6×: ${ratio >= 0.6 ? 'OK' : 'BELOW BAR'} (${ratio.toFixed(3)}×)`);
