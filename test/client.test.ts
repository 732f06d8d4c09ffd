/**
 * @module The typed client against a live server (createApp on a loopback
 * socket): every method, errors as VerifierError with the service's error body,
 * retries honouring retry_after, a 402 paid through the in-memory Base chain with
 * the settlement returned, checkReceipt accepting a receipt and refusing it with
 * one byte changed, the wire types checked against the published schemas, and
 * the browser bundle of the client running where neither Buffer nor process exist.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as esbuild from 'esbuild';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifierClient, VerifierError, type VerifierClient } from '../src/client/index.js';
import type { ApiErrorBody, Receipt, Reputation, TrustScore, VerificationRequest } from '../src/client/index.js';
import { ERROR_SCHEMA, RECEIPT_SCHEMA, VERIFICATION_REQUEST_SCHEMA } from '../src/service/wire-schemas.js';
import { logCheckpointRefSchema, reputationSchema, trustScoreSchema } from '../src/http/schemas.js';
import { BASE_USDC } from '../src/payments/config.js';
import { projectRoot, startApp, tempDir, type Running } from './http-helpers.js';
import { createPaymentFixture, PAY_TO_EVM, PAY_TO_SOLANA, type PaymentFixture } from './payments-helpers.js';

const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as VerificationRequest;
const invoice = (taskId: string, agentId: string, extra: Partial<VerificationRequest> = {}): VerificationRequest => ({ ...INVOICE, task_id: taskId, agent_id: agentId, ...extra });

// The schemas as /openapi.json serves them (with their shared $ref targets).
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(logCheckpointRefSchema);
const validReceipt = ajv.compile(RECEIPT_SCHEMA);
const validScore = ajv.compile(trustScoreSchema);
const validError = ajv.compile(ERROR_SCHEMA);
const validReputation = ajv.compile(reputationSchema);

/** `text` with the one character at `index` replaced by another (an ASCII digit or letter, so the JSON stays valid). */
function oneByteChanged(text: string, index: number): string {
  const c = text[index];
  const replacement = c === '0' ? '1' : c === 'a' ? 'b' : c === 'A' ? 'B' : '0';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

describe('client against a live server (payments off)', () => {
  let srv: Running;
  let tmp: ReturnType<typeof tempDir>;
  let client: VerifierClient;
  beforeAll(async () => {
    tmp = tempDir('aov-client-');
    srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '1000' });
    client = createVerifierClient({ baseUrl: `${srv.base}/` });
  });
  afterAll(async () => {
    await srv?.close();
    tmp?.cleanup();
  });

  it('verify: the invoice passes; the receipt matches the published schema; checkReceipt accepts it and refuses it with one byte changed', async () => {
    const request = invoice('client-inv-1', 'seller-client');
    const res = await client.verify(request);
    expect(res.body.result).toBe('pass');
    expect(res.body.task_id).toBe('client-inv-1');
    expect(validReceipt(res.body), JSON.stringify(validReceipt.errors)).toBe(true);
    expect(res.settlement).toBeNull();
    expect(res.allowance).toMatchObject({ limit: 1000, remaining: expect.any(Number) as number });
    expect(res.allowance!.resetsAt).toMatch(/T00:00:00Z$/);

    expect(await client.checkReceipt(res.body, { request })).toEqual({ valid: true, keyVersion: res.body.attestation.key_version });
    expect(await client.checkReceipt(res.text, { request: JSON.stringify(request) })).toMatchObject({ valid: true });
    // One byte of the signed text changed, in the output hash: the signature no longer matches.
    const at = res.text.indexOf('"output_hash":"') + '"output_hash":"'.length + 5;
    expect(await client.checkReceipt(oneByteChanged(res.text, at), { request })).toMatchObject({ valid: false, failedCheck: 'signature' });
    // The genuine receipt, shown with another request: a hash mismatch.
    expect(await client.checkReceipt(res.text, { request: { ...request, submitted_output: { ...(request.submitted_output as object), total: 1 } } })).toMatchObject({
      valid: false,
      failedCheck: 'output_hash',
    });
  });

  it('verify: a failing invoice is a fail receipt, not an error', async () => {
    const failing = invoice('client-inv-2', 'seller-client', { submitted_output: { ...(INVOICE.submitted_output as object), total: 999 } });
    const res = await client.verify(failing);
    expect(res.body.result).toBe('fail');
    expect(res.body.summary.blocking_checks).toEqual(['consistency:sum_equals']);
    expect(await client.checkReceipt(res.body, { request: failing })).toMatchObject({ valid: true });
  });

  it('getReceipt returns the stored receipt byte-identical; reputation pages with the cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.verify(invoice(`page-${i}`, 'paged-agent'))).body.verification_id);
    const stored = await client.getReceipt(ids[1]);
    expect(stored.verification_id).toBe(ids[1]);
    expect(await client.checkReceipt(stored)).toMatchObject({ valid: true });

    const first: Reputation = await client.reputation('paged-agent', { limit: 2 });
    expect(validReputation(first), JSON.stringify(validReputation.errors)).toBe(true);
    expect(first).toMatchObject({ agent_id: 'paged-agent', verifications: 3, passes: 3, fails: 0 });
    expect(first.history).toHaveLength(2);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await client.reputation('paged-agent', { limit: 2, cursor: first.next_cursor });
    expect(second.history).toHaveLength(1);
    expect(second.next_cursor).toBeNull();
    expect([...first.history, ...second.history].map((h) => h.verification_id).sort()).toEqual([...ids].sort());
  });

  it('score: the signed trust score matches the published schema and verifies offline', async () => {
    await client.verify(invoice('scored-1', 'scored-agent'));
    const res = await client.score('scored-agent');
    const score: TrustScore = res.body;
    expect(validScore(score), JSON.stringify(validScore.errors)).toBe(true);
    expect(score.agent_id).toBe('scored-agent');
    expect(score.score).toBeGreaterThan(0);
    expect(res.settlement).toBeNull();
    expect(await client.checkReceipt(res.text)).toEqual({ valid: true, keyVersion: score.attestation.key_version });
    expect(await client.checkReceipt(oneByteChanged(res.text, res.text.indexOf('"signature":"') + 15))).toMatchObject({ valid: false });
  });

  it('errors are VerifierError carrying the error body: code, fields[].fix, retryable', async () => {
    const bad = { task_id: '', expected_schema: { type: 'object' }, submitted_output: {} } as VerificationRequest;
    const err = await client.verify(bad).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(VerifierError);
    const e = err as VerifierError;
    expect(e.status).toBe(422);
    expect(e.code).toBe('invalid_request');
    expect(e.retryable).toBe(false);
    expect(e.retryAfter).toBeUndefined();
    expect(validError(e.body), JSON.stringify(validError.errors)).toBe(true);
    expect(e.fields.find((f) => f.field === 'task_id')?.fix).toEqual(expect.any(String));

    const missing = await client.getReceipt('00000000-0000-4000-8000-000000000000').catch((x: unknown) => x);
    expect(missing).toBeInstanceOf(VerifierError);
    expect((missing as VerifierError).code).toBe('not_found');
  });

  it('retries a retryable error after its retry_after, and not without the option', async () => {
    const unavailable: ApiErrorBody = { code: 'unavailable', message: 'busy', status: 503, retryable: true, charged: false, next_actions: [], fields: [], retry_after: 1 };
    const calls: number[] = [];
    const flaky: typeof fetch = async (input, init) => {
      calls.push(Date.now());
      if (calls.length === 1) return new Response(JSON.stringify(unavailable), { status: 503, headers: { 'content-type': 'application/json' } });
      return fetch(input, init);
    };
    const retrying = createVerifierClient({ baseUrl: srv.base, fetch: flaky, retry: { attempts: 1 } });
    const res = await retrying.verify(invoice('retry-1', 'seller-client'));
    expect(res.body.result).toBe('pass');
    expect(calls).toHaveLength(2);
    expect(calls[1] - calls[0]).toBeGreaterThanOrEqual(950);

    calls.length = 0;
    const once = createVerifierClient({ baseUrl: srv.base, fetch: flaky });
    const err = (await once.verify(invoice('retry-2', 'seller-client')).catch((x: unknown) => x)) as VerifierError;
    expect(err).toBeInstanceOf(VerifierError);
    expect([err.status, err.code, err.retryable, err.retryAfter]).toEqual([503, 'unavailable', true, 1]);
    expect(calls).toHaveLength(1);
  });

  it('the wire types name exactly the properties of the published schemas', () => {
    // Each record must list every key of its type (the compiler checks both directions through `satisfies`).
    const requestKeys = { task_id: 1, agent_id: 1, expected_schema: 1, submitted_output: 1, strict_content_check: 1, bounds: 1, rules: 1, enforce_rules: 1, detail: 1, strict_schema: 1 } satisfies Record<keyof VerificationRequest, 1>;
    const receiptKeys = {
      summary: 1, next_actions: 1, result: 1, verification_id: 1, task_id: 1, agent_id: 1, output_hash: 1, schema_hash: 1, rules_hash: 1,
      request_hash: 1, verified_at: 1, verifier_version: 1, enforce_rules: 1, strict_content_check: 1, errors: 1, errors_total: 1,
      errors_omitted: 1, errors_detail: 1, errors_detail_total: 1, errors_detail_omitted: 1, flags: 1, flags_total: 1, flags_omitted: 1,
      hints: 1, hints_total: 1, hints_omitted: 1, schema_compliance: 1, integrity_checks: 1, overall: 1, verify: 1, attestation: 1,
    } satisfies Record<keyof Receipt, 1>;
    const scoreKeys = { agent_id: 1, score: 1, inputs: 1, scored_at: 1, log_checkpoint: 1, verify: 1, attestation: 1 } satisfies Record<keyof TrustScore, 1>;
    const errorKeys = { code: 1, message: 1, status: 1, retryable: 1, charged: 1, next_actions: 1, fields: 1, retry_after: 1 } satisfies Record<keyof ApiErrorBody, 1>;
    const reputationKeys = {
      agent_id: 1, verifications: 1, passes: 1, fails: 1, pass_rate: 1, first_seen: 1, last_seen: 1, history: 1, next_cursor: 1, log_checkpoint: 1,
    } satisfies Record<keyof Reputation, 1>;
    const sorted = (o: object) => Object.keys(o).sort();
    expect(sorted(requestKeys)).toEqual(sorted(VERIFICATION_REQUEST_SCHEMA.properties));
    expect(sorted(scoreKeys)).toEqual(sorted(trustScoreSchema.properties));
    expect(sorted(errorKeys)).toEqual(sorted(ERROR_SCHEMA.properties));
    expect(sorted(reputationKeys)).toEqual(sorted(reputationSchema.properties));
    // The receipt schema lists the fields every form shares; the type adds the full form's lists.
    expect(sorted(receiptKeys)).toEqual(expect.arrayContaining(sorted(RECEIPT_SCHEMA.properties)));
    expect(sorted(receiptKeys)).toEqual(expect.arrayContaining([...RECEIPT_SCHEMA.required].sort()));
  });

  it('a full receipt carries exactly the fields the Receipt type names', async () => {
    const res = await client.verify(invoice('keys-1', 'seller-client'));
    const typed: Record<keyof Receipt, true> = Object.fromEntries(Object.keys(res.body).map((k) => [k, true])) as Record<keyof Receipt, true>;
    expect(Object.keys(typed)).toHaveLength(31);
    const compact = await client.verify(invoice('keys-2', 'seller-client', { detail: 'compact' }));
    expect(validReceipt(compact.body)).toBe(true);
    expect(compact.body.request_hash).toBeUndefined();
  });

  it('the browser bundle (esbuild, platform browser) runs without Buffer, process or require and verifies a receipt', async () => {
    const built = await esbuild.build({
      entryPoints: [path.join(projectRoot, 'src/client/index.ts')],
      bundle: true,
      platform: 'browser',
      format: 'iife',
      globalName: 'VerifierClientBundle',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(built.metafile.inputs);
    // Nothing server-side reaches the client: no web server, database, store, HTTP, service or payment-server code.
    expect(inputs.filter((i) => /fastify|better-sqlite3|node_modules\/pg\/|src\/(store|http|service|payments|mcp|cli)\//.test(i))).toEqual([]);
    const sandbox = vm.createContext({ fetch, atob, btoa, URL, URLSearchParams, setTimeout, clearTimeout, console });
    // The sandbox is its own realm: its typed arrays must come from its own Uint8Array, as they would in a
    // browser, so TextEncoder/TextDecoder are defined inside it (UTF-8 through the URI functions).
    vm.runInContext(
      `globalThis.TextEncoder = class { encode(s) { return Uint8Array.from(unescape(encodeURIComponent(s)), (c) => c.charCodeAt(0)); } };
       globalThis.TextDecoder = class { constructor() {} decode(b) { return decodeURIComponent(escape(String.fromCharCode(...(b ?? [])))); } };`,
      sandbox,
    );
    vm.runInContext(built.outputFiles[0].text, sandbox);
    expect(vm.runInContext('typeof Buffer + typeof process + typeof require', sandbox)).toBe('undefinedundefinedundefined');
    const bundle = vm.runInContext('VerifierClientBundle', sandbox) as typeof import('../src/client/index.js');
    const browserClient = bundle.createVerifierClient({ baseUrl: srv.base });
    const request = invoice('browser-1', 'seller-client');
    const res = await browserClient.verify(request);
    // Objects made in this realm are foreign to the sandbox's; the request goes over as JSON text, as it would arrive.
    const checked = await browserClient.checkReceipt(res.text, { request: JSON.stringify(request) });
    expect(checked, JSON.stringify(checked)).toMatchObject({ valid: true });
    expect(await browserClient.checkReceipt(oneByteChanged(res.text, res.text.indexOf('"schema_hash":"') + 20), { request: JSON.stringify(request) })).toMatchObject({
      valid: false,
      failedCheck: 'signature',
    });
  });
});

describe('client with a payer (x402 on the in-memory Base chain)', () => {
  let f: PaymentFixture;
  let srv: Running;
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    f = await createPaymentFixture();
    tmp = tempDir('aov-client-pay-');
    srv = await startApp(tmp.dir, {
      FREE_ALLOWANCE_PER_DAY: '1',
      X402_ENABLED: 'true',
      X402_FACILITATOR_URL: f.facilitatorUrl,
      X402_PAY_TO_EVM: PAY_TO_EVM,
      X402_PAY_TO_SOLANA: PAY_TO_SOLANA,
    });
  });
  afterAll(async () => {
    await srv?.close();
    await f?.close();
    tmp?.cleanup();
  });

  it('without a payer a 402 is a VerifierError; with a viem account it is paid and the settlement returned', async () => {
    const unpaid = createVerifierClient({ baseUrl: srv.base });
    const free = await unpaid.verify(invoice('free-1', 'paying-agent'));
    expect(free.body.result).toBe('pass');
    expect(free.settlement).toBeNull();
    const refused = (await unpaid.verify(invoice('unpaid-1', 'paying-agent')).catch((x: unknown) => x)) as VerifierError;
    expect(refused).toBeInstanceOf(VerifierError);
    expect([refused.status, refused.code]).toEqual([402, 'free_trial_exhausted']);
    expect(refused.paymentRequired).toMatchObject({ paymentRequired: { x402Version: 2 } });

    const before = f.chain.balanceOf(BASE_USDC, f.buyer.address);
    const payer = createVerifierClient({ baseUrl: srv.base, payer: f.buyer });
    const request = invoice('paid-1', 'paying-agent');
    const paid = await payer.verify(request);
    expect(paid.body.result).toBe('pass');
    expect(paid.settlement).toMatchObject({ success: true, network: 'eip155:8453', payer: f.buyer.address });
    expect(paid.settlement!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(before - f.chain.balanceOf(BASE_USDC, f.buyer.address)).toBe(20000n);
    expect(await payer.checkReceipt(paid.body, { request })).toMatchObject({ valid: true });

    // An x402 client built by the caller works the same way; a buyer with no funds gets the refusal as an error.
    const poor = createVerifierClient({ baseUrl: srv.base, payer: privateKeyToAccount(generatePrivateKey()) });
    const broke = await poor.verify(invoice('poor-1', 'paying-agent')).catch((x: unknown) => x);
    expect(broke).toBeInstanceOf(VerifierError);
    expect((broke as VerifierError).status).toBe(402);
  });

  it('score is paid per call too, with its settlement', async () => {
    const payer = createVerifierClient({ baseUrl: srv.base, payer: f.buyerClient });
    const res = await payer.score('paying-agent');
    expect(res.body.agent_id).toBe('paying-agent');
    expect(res.settlement).toMatchObject({ success: true });
    expect(await payer.checkReceipt(res.body)).toMatchObject({ valid: true });
  });
});
