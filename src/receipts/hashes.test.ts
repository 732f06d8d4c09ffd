import { describe, it, expect } from 'vitest';
import type { Bound, Json, JsonObject, ParsedRequest, Rule } from '../core/types.js';
import { canonicalRequest, computeHashes, sha256Hex } from './hashes.js';
import { canonicalize } from './jcs.js';
import { requestHashVectors, requestHashVectorTexts } from './v1/request-hash-vectors.js';
import { parseVerificationRequest, validateRequestValue } from '../core/request.js';

/** A minimal default-filler, independent of the core parser, written from docs/protocol.md#request, #rules, #hashes. */
function fillDefaults(body: JsonObject): ParsedRequest {
  const rawRules = (body.rules ?? null) as JsonObject[] | null;
  const rawBounds = (body.bounds ?? null) as Record<string, JsonObject> | null;
  const rules: Rule[] | null =
    rawRules && rawRules.length > 0
      ? rawRules.map((r) => ({
          type: r.type as Rule['type'],
          field: r.field as string,
          equals_field: (r.equals_field ?? null) as string | null,
          equals: (r.equals ?? null) as number | null,
          other_field: (r.other_field ?? null) as string | null,
          value: (r.value ?? null) as number | null,
          in_field: (r.in_field ?? null) as string | null,
          values: (r.values ?? null) as Json[] | null,
          tolerance: (r.tolerance ?? 1e-9) as number,
          if_present: (r.if_present ?? false) as boolean,
        }))
      : null;
  let bounds: Record<string, Bound> | null = null;
  if (rawBounds && Object.keys(rawBounds).length > 0) {
    bounds = {};
    for (const [k, b] of Object.entries(rawBounds)) {
      bounds[k] = { min: (b.min ?? null) as number | null, max: (b.max ?? null) as number | null, if_present: (b.if_present ?? false) as boolean };
    }
  }
  return {
    request: {
      task_id: body.task_id as string,
      agent_id: (body.agent_id ?? null) as string | null,
      expected_schema: body.expected_schema,
      submitted_output: body.submitted_output,
      strict_content_check: (body.strict_content_check ?? false) as boolean,
      bounds,
      rules,
      enforce_rules: (body.enforce_rules ?? false) as boolean,
      detail: 'full',
    },
    suppliedBounds: body.bounds ?? null,
    suppliedRules: body.rules ?? null,
    integrity: { duplicateKeys: [], unsafeIntegers: [] },
  };
}

describe('request_hash test vectors (docs/protocol.md#hashes)', () => {
  for (const [i, v] of requestHashVectors().entries()) {
    it(`vector ${i + 1}: canonical form and request_hash`, () => {
      const parsed = fillDefaults(v.request);
      expect(canonicalRequest(parsed.request)).toBe(v.canonical);
      expect(sha256Hex(v.canonical)).toBe(v.request_hash);
      const hashes = computeHashes(parsed);
      expect(hashes.request_hash).toBe(v.request_hash);
      expect(hashes.output_hash).toBe(sha256Hex(canonicalize(v.request.submitted_output)));
      expect(hashes.schema_hash).toBe(sha256Hex(canonicalize(v.request.expected_schema)));
      expect(hashes.rules_hash).toBe(
        sha256Hex(canonicalize({ bounds: v.request.bounds ?? null, rules: v.request.rules ?? null })),
      );
    });
  }

  it('detail is not part of request_hash', () => {
    const v = requestHashVectors()[1];
    const a = fillDefaults(v.request);
    const b = fillDefaults(v.request);
    b.request.detail = 'compact';
    expect(computeHashes(a)).toEqual(computeHashes(b));
  });

  it('strict_schema is not part of request_hash: every vector hashes the same with it set', () => {
    for (const v of requestHashVectorTexts()) {
      const plain = parseVerificationRequest(v.request);
      const strict = parseVerificationRequest(`${v.request.slice(0, -1)},"strict_schema":true}`);
      expect(strict.request.strict_schema).toBe(true);
      expect(computeHashes(plain).request_hash).toBe(v.request_hash);
      expect(computeHashes(strict)).toEqual(computeHashes(plain));
    }
  });

  it('rules_hash covers bounds/rules exactly as supplied (defaults not filled)', () => {
    const v = requestHashVectors()[1];
    const parsed = fillDefaults(v.request);
    expect(computeHashes(parsed).rules_hash).toBe(
      sha256Hex(
        '{"bounds":{"items[].price":{"max":100,"min":0}},"rules":[{"equals_field":"total","field":"items[].price","tolerance":0.01,"type":"sum_equals"},{"field":"items[].id","type":"unique"}]}',
      ),
    );
    // Spelling out a default changes rules_hash but not request_hash.
    const explicit = fillDefaults({ ...v.request, rules: [...(v.request.rules as JsonObject[]).slice(0, 1), { type: 'unique', field: 'items[].id', if_present: false }] });
    expect(computeHashes(explicit).rules_hash).not.toBe(computeHashes(parsed).rules_hash);
    expect(computeHashes(explicit).request_hash).toBe(computeHashes(parsed).request_hash);
  });

  it('empty bounds and rules hash as null in request_hash', () => {
    const v = requestHashVectors()[0];
    const parsed = fillDefaults({ ...v.request, bounds: {}, rules: [] });
    expect(canonicalRequest(parsed.request)).toBe(v.canonical);
  });

  it('the canonical request carries exactly the eight fields even when extra properties sneak in', () => {
    const v = requestHashVectors()[2];
    const parsed = fillDefaults(v.request);
    (parsed.request as unknown as Record<string, unknown>).extra = 1;
    (parsed.request.rules![0] as unknown as Record<string, unknown>).note = 'x';
    expect(canonicalRequest(parsed.request)).toBe(v.canonical);
  });
});

describe('request_hash test vectors through the core parser', () => {
  it('parseVerificationRequest (the original text) + computeHashes reproduce every vector', () => {
    for (const v of requestHashVectorTexts()) {
      const parsed = parseVerificationRequest(v.request);
      expect(canonicalRequest(parsed.request)).toBe(v.canonical);
      expect(computeHashes(parsed).request_hash).toBe(v.request_hash);
    }
  });
  it('validateRequestValue (an in-memory value) agrees', () => {
    for (const v of requestHashVectors()) {
      expect(computeHashes(validateRequestValue(v.request)).request_hash).toBe(v.request_hash);
    }
  });
});
