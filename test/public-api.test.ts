/** @module The package root exports what the README promises: an offline receipt check with only public keys. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

const golden = (name: string) => readFileSync(new URL(`./golden/${name}`, import.meta.url), 'utf8');

describe('package root', () => {
  it('verifies a golden receipt against its agent card, and rejects a tampered one', () => {
    const card = JSON.parse(golden('agent-card.json'));
    const receipt = golden('receipt-fail.json');
    const request = JSON.parse(readFileSync(new URL('./fixtures/invoice.request.json', import.meta.url), 'utf8'));
    expect(api.verifyReceipt(receipt, { agentCard: card }, { request })).toMatchObject({ valid: true });
    const tampered = receipt.replace('"result":"fail"', '"result":"pass"');
    expect(tampered).not.toBe(receipt);
    expect(api.verifyReceipt(tampered, { agentCard: card })).toMatchObject({ valid: false, failedCheck: 'signature' });
  });

  it('verifies in-process with the exported engine and verifier', () => {
    const verifier = api.createVerifier({ engine: api.createSchemaEngine() });
    const body = readFileSync(new URL('./fixtures/invoice.request.json', import.meta.url), 'utf8');
    const verdict = verifier.evaluate(api.parseVerificationRequest(body));
    expect(verdict.result).toBe('fail');
    expect(verdict.blocking_checks).toEqual(['consistency:sum_equals']);
    expect(verdict.schema_compliance).toEqual({ ratio: 1, passed: 22, total: 22 });
    // The old name of evaluate stays as a deprecated alias, detached use included.
    const { verify } = verifier;
    expect(verify(api.parseVerificationRequest(body))).toEqual(verdict);
  });

  it('applies the determined repairs of a verdict to a request (applyRepairs)', () => {
    const request = JSON.parse(readFileSync(new URL('./fixtures/invoice-pass.request.json', import.meta.url), 'utf8'));
    const broken = { ...request, submitted_output: { ...request.submitted_output, currency: 'usd' } };
    const verdict = {
      result: 'fail' as const,
      hints: [{ check: 'schema:enum', path: '/currency', repair: { certainty: 'determined' as const, patch: [{ op: 'replace' as const, path: '/currency', value: 'USD' }], note: 'case' } }],
    };
    const { request: patched, applied } = api.applyRepairs(broken, verdict);
    expect(applied).toHaveLength(1);
    expect(patched).toEqual(request);
    expect(() => api.applyRepairs(broken, verdict, { maxBodyBytes: 10 })).toThrow(api.RepairError);
  });
});
