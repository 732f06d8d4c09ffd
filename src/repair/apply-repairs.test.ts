import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createSchemaEngine } from '../core/schema/index.js';
import { parseVerificationRequest } from '../core/request.js';
import { createVerifier } from '../core/verify.js';
import { computeHashes } from '../receipts/hashes.js';
import { applyRepairs, outputHash, RepairError, type RepairableVerdict } from './apply-repairs.js';

const verifier = createVerifier({ engine: createSchemaEngine() });
const INVOICE = JSON.parse(readFileSync(new URL('../../test/fixtures/invoice-pass.request.json', import.meta.url), 'utf8')) as {
  submitted_output: Record<string, unknown> & { line_items: Array<Record<string, unknown>> };
  [k: string]: unknown;
};

function withOutput(output: unknown) {
  return { ...INVOICE, submitted_output: output };
}
function resultOf(request: unknown): 'pass' | 'fail' {
  return verifier.evaluate(parseVerificationRequest(JSON.stringify(request))).result;
}

// A failing invoice: qty "3" (numeric string), currency "usd" (case), an extra field, and a wrong total.
const broken = {
  ...INVOICE.submitted_output,
  currency: 'usd',
  line_items: [{ ...INVOICE.submitted_output.line_items[0], qty: '3' }, INVOICE.submitted_output.line_items[1]],
  total: 130,
};
const verdict: RepairableVerdict = {
  result: 'fail',
  output_hash: outputHash(broken),
  hints: [
    { check: 'schema:type', path: '$.line_items[0].qty', repair: { certainty: 'determined', patch: [{ op: 'replace', path: '/line_items/0/qty', value: 3 }], note: 'the number the string spells' } },
    { check: 'schema:enum', path: '$.currency', repair: { certainty: 'determined', patch: [{ op: 'replace', path: '/currency', value: 'USD' }], note: 'the one enum member equal up to case' } },
    {
      check: 'consistency:sum_equals',
      path: '/total',
      repair: {
        certainty: 'candidate',
        note: 'which value is wrong cannot be known from the data',
        options: [
          { patch: [{ op: 'replace', path: '/total', value: 129.5 }], note: 'set the total to the sum of the lines' },
          { patch: [{ op: 'replace', path: '/line_items/0/line_total', value: 87.5 }], note: 'change a line' },
        ],
      },
    },
    { check: 'schema:required', path: '/invoice_id' },
  ],
  hints_omitted: 0,
};

describe('applyRepairs', () => {
  it('applies determined patches only by default; the candidate is listed as skipped; the input is unchanged', () => {
    const request = withOutput(broken);
    const before = JSON.stringify(request);
    const { request: patched, applied, skipped } = applyRepairs(request, verdict);
    expect(JSON.stringify(request)).toBe(before);
    expect(applied.map((r) => r.check)).toEqual(['schema:type', 'schema:enum']);
    expect(skipped).toMatchObject([{ check: 'consistency:sum_equals', reason: 'candidate', note: 'set the total to the sum of the lines' }]);
    expect(patched.submitted_output).toMatchObject({ currency: 'USD', total: 130 });
    expect((patched.submitted_output as typeof broken).line_items[0].qty).toBe(3);
    // Still failing on the total: the determined patches fixed only what they are for.
    expect(resultOf(patched)).toBe('fail');
  });

  it('with candidates: true the first option of each candidate applies too, and the invoice then passes the real verifier', () => {
    const { request: patched, applied, skipped } = applyRepairs(withOutput(broken), verdict, { candidates: true });
    expect(applied.map((r) => r.certainty)).toEqual(['determined', 'determined', 'candidate']);
    expect(skipped).toEqual([]);
    expect(patched.submitted_output).toEqual(INVOICE.submitted_output);
    expect(resultOf(patched)).toBe('pass');
    expect(computeHashes(parseVerificationRequest(JSON.stringify(patched))).output_hash).toBe(outputHash(INVOICE.submitted_output));
  });

  it('refuses a verdict about another output', () => {
    expect(() => applyRepairs(withOutput(INVOICE.submitted_output), verdict)).toThrow(RepairError);
    try {
      applyRepairs(withOutput(INVOICE.submitted_output), verdict);
    } catch (e) {
      expect((e as RepairError).code).toBe('verdict_mismatch');
    }
  });

  it('a patch that would push the body over the limit fails with body_limit and names the repair', () => {
    const big: RepairableVerdict = {
      result: 'fail',
      hints: [{ check: 'schema:default', path: '/note', repair: { certainty: 'determined', patch: [{ op: 'add', path: '/note', value: 'x'.repeat(5000) }], note: 'the default' } }],
    };
    const request = withOutput(broken);
    const size = JSON.stringify(request).length;
    let err: unknown;
    try {
      applyRepairs(request, big, { maxBodyBytes: size + 100 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RepairError);
    expect((err as RepairError).code).toBe('body_limit');
    expect((err as Error).message).toMatch(/schema:default at '\/note'.*over the limit of \d+/);
    // Under a limit that fits, the same patch applies.
    expect(applyRepairs(request, big, { maxBodyBytes: size + 6000 }).applied).toHaveLength(1);
  });

  it('a duplicate patch applies once; one whose target is gone is skipped as does_not_apply', () => {
    const output = { ...INVOICE.submitted_output, extra: 1 };
    const remove = { certainty: 'determined' as const, patch: [{ op: 'remove' as const, path: '/extra' }], note: 'not allowed' };
    const stale = { certainty: 'determined' as const, patch: [{ op: 'replace' as const, path: '/extra', value: 2 }], note: 'stale' };
    const v: RepairableVerdict = {
      result: 'fail',
      hints: [
        { check: 'schema:additionalProperties', path: '/extra', repair: remove },
        { check: 'content:undeclared_fields', path: '/extra', repair: remove },
        { check: 'schema:type', path: '/extra', repair: stale },
      ],
    };
    const { request, applied, skipped } = applyRepairs(withOutput(output), v);
    expect(applied).toHaveLength(1);
    expect(skipped.map((s) => s.reason)).toEqual(['duplicate', 'does_not_apply']);
    expect(skipped[1].detail).toMatch(/does not exist/);
    expect(request.submitted_output).toEqual(INVOICE.submitted_output);
  });

  it('a verdict without hints (pass, or the compact form) changes nothing', () => {
    const request = withOutput(broken);
    const out = applyRepairs(request, { result: 'fail' });
    expect(out.request).toBe(request);
    expect(out.applied).toEqual([]);
  });
});
