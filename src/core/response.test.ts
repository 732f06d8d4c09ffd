import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { createSchemaEngine } from './schema/index.js';
import { parseVerificationRequest } from './request.js';
import { createVerifier } from './verify.js';
import { buildResponse } from './response.js';

const FULL_KEYS = [
  'summary', 'next_actions', 'result', 'verification_id', 'task_id', 'agent_id', 'output_hash', 'schema_hash',
  'rules_hash', 'request_hash', 'verified_at', 'verifier_version', 'enforce_rules', 'strict_content_check',
  'errors', 'errors_total', 'errors_omitted', 'errors_detail', 'errors_detail_total', 'errors_detail_omitted',
  'flags', 'flags_total', 'flags_omitted', 'hints', 'hints_total', 'hints_omitted', 'schema_compliance',
  'integrity_checks', 'overall',
];
const COMPACT_KEYS = [
  'summary', 'next_actions', 'result', 'verification_id', 'task_id', 'agent_id', 'output_hash', 'schema_hash',
  'rules_hash', 'verified_at', 'verifier_version', 'enforce_rules', 'strict_content_check',
];
const meta = {
  verification_id: '00000000-0000-4000-8000-000000000000',
  output_hash: 'o'.repeat(64),
  schema_hash: 's'.repeat(64),
  rules_hash: 'r'.repeat(64),
  request_hash: 'q'.repeat(64),
  verified_at: '2026-11-30T05:50:00Z',
  verifier_version: '0.1.0',
};

describe('buildResponse', () => {
  const parsed = parseVerificationRequest(readFileSync(new URL('../../test/fixtures/invoice.request.json', import.meta.url)));
  const verdict = createVerifier({ engine: createSchemaEngine() }).evaluate(parsed);

  it('keeps the documented key order (docs/protocol.md#response) in full form (verify/attestation are appended by the signer)', () => {
    const r = buildResponse(verdict, meta, 'full');
    expect(Object.keys(r)).toEqual(FULL_KEYS);
    if (!('request_hash' in r)) throw new Error('expected the full form');
    expect(r.summary).toEqual({ result: 'fail', blocking_checks: ['consistency:sum_equals'] });
    expect(r.result).toBe('fail');
    expect(r.request_hash).toBe(meta.request_hash);
    expect(r.verified_at).toBe(meta.verified_at);
    expect(r.schema_compliance).toEqual({ ratio: 1, passed: 22, total: 22 });
  });

  it('keeps exactly the compact keys in compact form', () => {
    const r = buildResponse(verdict, meta, 'compact');
    expect(Object.keys(r)).toEqual(COMPACT_KEYS);
    expect(r).not.toHaveProperty('request_hash');
    expect(r.summary).toEqual({ result: 'fail', blocking_checks: ['consistency:sum_equals'], warnings: 0 });
  });

  it('counts warnings in the compact summary, so a compact pass cannot hide a failed bound or a schema typo', () => {
    const request = {
      task_id: 't', expected_schema: { type: 'object', requried: ['total'] }, submitted_output: { total: -5, items: [{ price: 500 }, { price: 600 }] },
      bounds: { 'items[].price': { min: 0, max: 100 }, total: { min: 0 } }, enforce_rules: false, detail: 'compact',
    };
    const v = createVerifier({ engine: createSchemaEngine() }).evaluate(parseVerificationRequest(JSON.stringify(request)));
    const r = buildResponse(v, meta, 'compact');
    expect(r.result).toBe('pass');
    // Two failing prices under one bound, the negative total under the other, and the "requried" typo.
    expect(r.summary).toEqual({ result: 'pass', blocking_checks: [], warnings: 4, schema_warnings: 1 });
    const enforced = createVerifier({ engine: createSchemaEngine() }).evaluate(parseVerificationRequest(JSON.stringify({ ...request, enforce_rules: true })));
    expect(buildResponse(enforced, meta, 'compact').summary).toEqual({ result: 'fail', blocking_checks: ['bounds:range'], warnings: 1, schema_warnings: 1 });
  });
});
