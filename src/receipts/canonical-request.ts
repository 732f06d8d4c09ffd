/**
 * @module The canonical (RFC 8785) forms behind rules_hash and request_hash:
 * the request with every default filled in, and the rules/bounds exactly as
 * supplied. Free of Node built-ins so that a browser can recompute the hashes
 * of a receipt with the same code the service uses.
 *
 * The output and schema are usually the largest parts of a request, so their
 * canonical strings are computed once and spliced into the canonical request
 * instead of canonicalizing them twice. This is exact JCS because the eight
 * request keys are written in UTF-16 code-unit order.
 */
import type { Bound, Json, ParsedRequest, Rule, VerificationRequest } from '../core/types.js';
import { DEFAULT_TOLERANCE } from '../core/request-rules.js';
import { canonicalize, sortKeys } from './jcs.js';

/**
 * A rule with exactly the keys of docs/protocol.md#hashes, defaults filled in, written straight
 * in JCS key order (no intermediate object to build and sort: this runs per request).
 */
function canonicalRule(rule: Rule): string {
  return (
    `{"equals":${canonicalize(rule.equals ?? null)}` +
    `,"equals_field":${canonicalize(rule.equals_field ?? null)}` +
    `,"field":${canonicalize(rule.field)}` +
    `,"if_present":${rule.if_present === true}` +
    `,"in_field":${canonicalize(rule.in_field ?? null)}` +
    `,"other_field":${canonicalize(rule.other_field ?? null)}` +
    `,"tolerance":${canonicalize(rule.tolerance ?? DEFAULT_TOLERANCE)}` +
    `,"type":${canonicalize(rule.type)}` +
    `,"value":${canonicalize(rule.value ?? null)}` +
    `,"values":${canonicalize(rule.values ?? null)}}`
  );
}

function canonicalBound(bound: Bound): string {
  return `{"if_present":${bound.if_present === true},"max":${canonicalize(bound.max ?? null)},"min":${canonicalize(bound.min ?? null)}}`;
}

function canonicalRules(rules: Rule[] | null): string {
  if (!rules || rules.length === 0) return 'null';
  let out = '[';
  for (let i = 0; i < rules.length; i++) out += (i > 0 ? ',' : '') + canonicalRule(rules[i]);
  return `${out}]`;
}

function canonicalBounds(bounds: Record<string, Bound> | null): string {
  if (!bounds) return 'null';
  const keys = Object.keys(bounds);
  if (keys.length === 0) return 'null';
  sortKeys(keys);
  let out = '{';
  for (let i = 0; i < keys.length; i++) out += `${i > 0 ? ',' : ''}${canonicalize(keys[i])}:${canonicalBound(bounds[keys[i]])}`;
  return `${out}}`;
}

export function spliceRequest(request: VerificationRequest, schemaCanonical: string, outputCanonical: string): string {
  // Keys in UTF-16 code-unit order: agent_id < bounds < enforce_rules < expected_schema
  // < rules < strict_content_check < submitted_output < task_id.
  return (
    `{"agent_id":${canonicalize(request.agent_id ?? null)}` +
    `,"bounds":${canonicalBounds(request.bounds)}` +
    `,"enforce_rules":${request.enforce_rules === true}` +
    `,"expected_schema":${schemaCanonical}` +
    `,"rules":${canonicalRules(request.rules)}` +
    `,"strict_content_check":${request.strict_content_check === true}` +
    `,"submitted_output":${outputCanonical}` +
    `,"task_id":${canonicalize(request.task_id)}}`
  );
}

/**
 * The canonical (JCS) form of a request with every default filled in: exactly
 * the eight hashed fields, `detail` excluded (docs/protocol.md#hashes). Its SHA-256 is the
 * request_hash.
 */
export function canonicalRequest(request: VerificationRequest): string {
  return spliceRequest(request, canonicalize(request.expected_schema), canonicalize(request.submitted_output));
}

/** The canonical form hashed into rules_hash: bounds and rules exactly as supplied. */
export function canonicalRulesAndBounds(suppliedBounds: Json | undefined, suppliedRules: Json | undefined): string {
  return `{"bounds":${canonicalize(suppliedBounds ?? null)},"rules":${canonicalize(suppliedRules ?? null)}}`;
}

export interface ReceiptHashes {
  output_hash: string;
  schema_hash: string;
  rules_hash: string;
  request_hash: string;
}

/**
 * All four hashes of a parsed request (docs/protocol.md#hashes), given a SHA-256
 * of the UTF-8 bytes of a string in lowercase hex: Node's native one on the
 * server (./hashes.ts), a pure-JS one in browsers (./verify-receipt-portable.ts).
 * The output and schema are canonicalized once each and reused for both their
 * own hash and the request's.
 */
export function computeHashesWith(parsed: ParsedRequest, sha256Hex: (text: string) => string): ReceiptHashes {
  const { request } = parsed;
  const outputCanonical = canonicalize(request.submitted_output);
  const schemaCanonical = canonicalize(request.expected_schema);
  return {
    output_hash: sha256Hex(outputCanonical),
    schema_hash: sha256Hex(schemaCanonical),
    rules_hash: sha256Hex(canonicalRulesAndBounds(parsed.suppliedBounds, parsed.suppliedRules)),
    request_hash: sha256Hex(spliceRequest(request, schemaCanonical, outputCanonical)),
  };
}
