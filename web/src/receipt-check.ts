/**
 * @module Receipt verification that runs in the browser: the same checks, in
 * the same order, as the service's offline verifier (src/receipts/verify-receipt.ts),
 * with Ed25519 and SHA-256 from @noble instead of Node's crypto. WebCrypto is
 * not used because browsers offer it only in secure contexts, and these pages
 * must also work over plain HTTP on a LAN host. The canonical forms, the
 * strict JSON parser and the request defaults are the service's own modules,
 * so the page computes exactly what the service signs and hashes.
 */
import * as ed from '@noble/ed25519';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { parseVerificationRequest } from '../../src/core/request.js';
import { parseStrictJson, StrictJsonError } from '../../src/core/strict-json.js';
import { isApiError } from '../../src/errors.js';
import { canonicalRulesAndBounds, spliceRequest } from '../../src/receipts/canonical-request.js';
import { canonicalize, JcsError } from '../../src/receipts/jcs.js';
import { parseRfc3339 } from '../../src/receipts/time.js';
import { signingInput, SIGNATURE_ALGORITHM, type AttestationContext } from '../../src/receipts/v1/attestation.js';

ed.hashes.sha512 = sha512;

/** The attestation extension of the agent card (the key list lives in its params). */
const ATTESTATION_EXTENSION_PREFIX = 'urn:json-schema-verifier:extension:attestation:';

export type CheckName =
  | 'format'
  | 'key_not_found'
  | 'algorithm'
  | 'key_validity'
  | 'signature'
  | 'output_hash'
  | 'schema_hash'
  | 'rules_hash'
  | 'request_hash'
  | 'request_mismatch'
  | 'request_invalid';

export interface CheckStep {
  check: CheckName;
  ok: boolean;
  detail: string;
}

export type HashName = 'output_hash' | 'schema_hash' | 'rules_hash' | 'request_hash';
export const HASH_NAMES: HashName[] = ['output_hash', 'schema_hash', 'rules_hash', 'request_hash'];

export interface ReceiptCheckResult {
  valid: boolean;
  /** The first check that failed (absent when valid). */
  failedCheck?: CheckName;
  message: string;
  keyVersion?: string;
  /** Every check that ran, in order; the last one is the failing one when invalid. */
  steps: CheckStep[];
  /** The hashes the receipt states, and those recomputed from the request when one was given. */
  hashes: Partial<Record<HashName, { receipt: string; computed?: string }>>;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const utf8 = new TextEncoder();

function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8.encode(text)));
}

/** Standard base64 (with padding) of exactly `length` bytes, or undefined. */
function fromBase64(text: unknown, length: number): Uint8Array | undefined {
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  let bin: string;
  try {
    bin = atob(text);
  } catch {
    return undefined;
  }
  // Canonical only (unused low bits zero), as the service's verifier requires: otherwise two different
  // texts would carry the same signature and a changed character could go unnoticed.
  if (bin.length !== length || btoa(bin) !== text) return undefined;
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** The agent card's key list, or why there is none. */
export function cardKeys(card: unknown): unknown[] | string {
  if (!isObject(card)) return 'the agent card is not a JSON object';
  const caps = card.capabilities;
  const exts = isObject(caps) ? caps.extensions : undefined;
  if (!Array.isArray(exts)) return 'the agent card has no capabilities.extensions';
  const ext = exts.find((e) => isObject(e) && typeof e.uri === 'string' && e.uri.startsWith(ATTESTATION_EXTENSION_PREFIX));
  if (!isObject(ext)) return 'the agent card has no attestation extension';
  const keys = isObject(ext.params) ? ext.params.publicKeys : undefined;
  if (!Array.isArray(keys)) return 'the attestation extension lists no publicKeys';
  return keys;
}

/** Where a parse error is, as 1-based line and column of a UTF-16 offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** Strict JSON (the service's parser); a readable error with line and column when it is not JSON. */
export function parseJsonText(text: string): { ok: true; value: unknown; duplicateKeys: number } | { ok: false; message: string; line: number; column: number } {
  try {
    const parsed = parseStrictJson(text, { maxDepth: 1000 });
    return { ok: true, value: parsed.value, duplicateKeys: parsed.duplicateKeys.length };
  } catch (e) {
    if (e instanceof StrictJsonError) {
      const { line, column } = lineColumn(text, e.offset);
      return { ok: false, message: e.message, line, column };
    }
    throw e;
  }
}

/**
 * Check a receipt (its JSON text) against the agent card, and — when the
 * request text is given — recompute the hashes from it. Never throws.
 */
export function checkReceipt(receiptText: string, agentCard: unknown, requestText?: string): ReceiptCheckResult {
  const steps: CheckStep[] = [];
  const hashes: ReceiptCheckResult['hashes'] = {};
  const pass = (check: CheckName, detail: string) => steps.push({ check, ok: true, detail });
  const fail = (check: CheckName, message: string, keyVersion?: string): ReceiptCheckResult => {
    steps.push({ check, ok: false, detail: message });
    return { valid: false, failedCheck: check, message, keyVersion, steps, hashes };
  };

  const parsed = parseJsonText(receiptText);
  if (!parsed.ok) return fail('format', `the receipt is not valid JSON (line ${parsed.line}, column ${parsed.column}: ${parsed.message})`);
  if (parsed.duplicateKeys > 0) return fail('format', 'the receipt has an object with a duplicated key');
  const receipt = parsed.value;
  if (!isObject(receipt)) return fail('format', 'the receipt is not a JSON object');
  for (const h of HASH_NAMES) if (typeof receipt[h] === 'string') hashes[h] = { receipt: receipt[h] as string };
  const att = receipt.attestation;
  if (!isObject(att)) return fail('format', 'the receipt has no attestation object');
  const { algorithm, key_version: keyVersion, timestamp } = att;
  if (typeof keyVersion !== 'string' || keyVersion === '') return fail('format', 'attestation.key_version is missing');
  if (typeof algorithm !== 'string') return fail('format', 'attestation.algorithm is missing');
  const signedAt = parseRfc3339(timestamp);
  if (signedAt === undefined) return fail('format', 'attestation.timestamp is not an RFC 3339 date-time');
  const signature = fromBase64(att.signature, 64);
  if (!signature) return fail('format', 'attestation.signature is not standard base64 of 64 bytes');
  const verifyBlock = receipt.verify;
  if (!isObject(verifyBlock)) return fail('format', 'the receipt has no verify block');
  if (verifyBlock.key_version !== keyVersion) return fail('format', 'verify.key_version differs from attestation.key_version');
  const context: AttestationContext = 'output_hash' in receipt ? 'verify' : 'score';
  if (context === 'verify') {
    if (receipt.verified_at !== timestamp) return fail('format', 'verified_at differs from attestation.timestamp');
    for (const f of ['output_hash', 'schema_hash', 'rules_hash'] as const) {
      if (typeof receipt[f] !== 'string') return fail('format', `a verification receipt needs ${f}`);
    }
  }
  pass('format', `a ${context === 'verify' ? 'verification receipt' : 'trust score'} with an Ed25519 attestation`);

  if (algorithm !== SIGNATURE_ALGORITHM) return fail('algorithm', `unsupported signature algorithm '${algorithm}'`, keyVersion);
  const keys = cardKeys(agentCard);
  if (typeof keys === 'string') return fail('key_not_found', keys, keyVersion);
  const entry = keys.find((k) => isObject(k) && k.keyVersion === keyVersion);
  if (!isObject(entry)) return fail('key_not_found', `key version '${keyVersion}' is not listed in the agent card`, keyVersion);
  const publicKey = fromBase64(entry.publicKey, 32);
  if (!publicKey) return fail('key_not_found', `the agent card's key '${keyVersion}' is not base64 of a raw 32-byte Ed25519 key`, keyVersion);
  pass('key_not_found', `key '${keyVersion}' found in the agent card`);
  if (entry.algorithm !== SIGNATURE_ALGORITHM) {
    return fail('algorithm', `key '${keyVersion}' is listed for algorithm '${String(entry.algorithm)}', not Ed25519`, keyVersion);
  }
  pass('algorithm', 'Ed25519');
  const notBefore = parseRfc3339(entry.notBefore);
  const notAfter = entry.notAfter === null || entry.notAfter === undefined ? null : parseRfc3339(entry.notAfter);
  if (notBefore === undefined || notAfter === undefined) return fail('key_validity', `key '${keyVersion}' has no readable validity window`, keyVersion);
  if (signedAt < notBefore || (notAfter !== null && signedAt > notAfter)) {
    return fail(
      'key_validity',
      `the receipt was signed at ${String(timestamp)}, outside the validity of key '${keyVersion}' (${String(entry.notBefore)} .. ${String(entry.notAfter ?? 'open')})`,
      keyVersion,
    );
  }
  pass('key_validity', `signed at ${String(timestamp)}, inside the key's validity window`);

  const unsigned: Obj = { ...receipt };
  delete unsigned.attestation;
  let input: string;
  try {
    input = signingInput(unsigned, context, keyVersion, timestamp as string);
  } catch (e) {
    if (e instanceof JcsError) return fail('format', `the receipt holds a value without a canonical JSON form (${e.message})`, keyVersion);
    throw e;
  }
  let good = false;
  try {
    good = ed.verify(signature, utf8.encode(input), publicKey, { zip215: false });
  } catch {
    good = false;
  }
  if (!good) return fail('signature', `the Ed25519 signature does not match the receipt (context ${context}, key '${keyVersion}')`, keyVersion);
  pass('signature', `Ed25519 signature over the RFC 8785 form verified with key '${keyVersion}'`);

  if (requestText !== undefined && requestText.trim() !== '') {
    let parsedRequest;
    try {
      parsedRequest = parseVerificationRequest(requestText);
    } catch (e) {
      if (isApiError(e)) {
        const fields = e.fields.map((f) => `${f.field} ${f.problem}`).join('; ');
        return fail('request_invalid', `the request is not a valid verification request${fields ? `: ${fields}` : ''}`, keyVersion);
      }
      throw e;
    }
    const { request } = parsedRequest;
    let computed: Record<HashName, string>;
    try {
      const outputCanonical = canonicalize(request.submitted_output);
      const schemaCanonical = canonicalize(request.expected_schema);
      computed = {
        output_hash: sha256Hex(outputCanonical),
        schema_hash: sha256Hex(schemaCanonical),
        rules_hash: sha256Hex(canonicalRulesAndBounds(parsedRequest.suppliedBounds, parsedRequest.suppliedRules)),
        request_hash: sha256Hex(spliceRequest(request, schemaCanonical, outputCanonical)),
      };
    } catch (e) {
      if (e instanceof JcsError) return fail('request_invalid', `the request holds a value without a canonical JSON form (${e.message})`, keyVersion);
      throw e;
    }
    for (const f of HASH_NAMES) {
      if (!(f in receipt)) continue;
      hashes[f] = { receipt: String(receipt[f]), computed: computed[f] };
    }
    for (const f of HASH_NAMES) {
      if (!(f in receipt)) continue;
      if (receipt[f] !== computed[f]) {
        return fail(f, `${f} does not match the request: receipt has ${String(receipt[f])}, request gives ${computed[f]}`, keyVersion);
      }
      pass(f, `${f} recomputed from the request`);
    }
    if (context === 'verify' && !('request_hash' in receipt)) {
      for (const f of ['task_id', 'agent_id', 'enforce_rules', 'strict_content_check'] as const) {
        if (receipt[f] !== request[f]) {
          return fail(
            'request_mismatch',
            `${f} does not match the request: receipt has ${JSON.stringify(receipt[f])}, request gives ${JSON.stringify(request[f])}`,
            keyVersion,
          );
        }
      }
      pass('request_mismatch', 'the compact receipt names the same task, agent and options as the request');
    }
  }
  return { valid: true, message: 'signature valid', keyVersion, steps, hashes };
}
