/**
 * @module Offline receipt verification (docs/protocol.md#signature, #command-line), on injected primitives:
 * given a signed response and either a raw public key or the service's agent
 * card, check the format, key, algorithm, key validity window and Ed25519
 * signature, and — given the original request — recompute the hashes (all four
 * for a full receipt; for a compact one, the three it has plus the request
 * fields it carries). Needs no network and no secret; a third party can run
 * exactly this. No platform API is used here: Node supplies its native crypto
 * (./verify-receipt.ts), browsers (the receipt page) and the client a pure-JS one
 * (./verify-receipt-portable.ts), so all run the same checks. An optional trace records
 * each check as it runs, for a display that shows the steps.
 */
import { isApiError } from '../errors.js';
import { parseVerificationRequest, validateRequestValue } from '../core/request.js';
import { parseStrictJson } from '../core/strict-json.js';
import type { ParsedRequest } from '../core/types.js';
import { ATTESTATION_EXTENSION_PREFIX } from './agent-card-extension.js';
import { computeHashesWith, type ReceiptHashes } from './canonical-request.js';
import { JcsError } from './jcs.js';
import { parseRfc3339 } from './time.js';
import { signingInput, SIGNATURE_ALGORITHM, type AttestationContext } from './v1/attestation.js';

/** The cryptographic primitives the verifier needs; K is the platform's imported public key. */
export interface ReceiptCrypto<K> {
  /** SHA-256 of the UTF-8 bytes of `text`, lowercase hex. */
  sha256Hex(text: string): string;
  /** Import a raw 32-byte Ed25519 public key; undefined when it is not a valid key. */
  importPublicKey(raw: Uint8Array): K | undefined;
  /** Ed25519 verification of the UTF-8 bytes of `message`. */
  verify(message: string, signature: Uint8Array, key: K): boolean;
}

/** A check of receipt verification; the one that failed is `failedCheck` (docs/protocol.md#command-line). */
export type ReceiptCheck =
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

/**
 * What verifying a receipt found: valid with the key version that signed it, or the first
 * check that failed and why.
 *
 * @example
 * ```ts
 * import { verifyReceipt, type ReceiptVerification } from 'agent-output-verifier';
 *
 * const check: ReceiptVerification = verifyReceipt(receiptText, { publicKey });
 * console.log(check.valid ? `signed by ${check.keyVersion}` : `${check.failedCheck}: ${check.message}`);
 * ```
 */
export type ReceiptVerification =
  | { valid: true; keyVersion: string }
  | { valid: false; failedCheck: ReceiptCheck; message: string };

/**
 * The keys to check a receipt with: either the raw Ed25519 public key (standard base64 of
 * its 32 bytes), or the service's agent card (`/.well-known/agent-card.json`), whose
 * attestation extension lists every key version with its validity window.
 *
 * @example
 * ```ts
 * import type { ReceiptKeys } from 'agent-output-verifier';
 *
 * const byKey: ReceiptKeys = { publicKey: '11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=' }; // as `aov keys list` prints it
 * const byCard: ReceiptKeys = { agentCard: await (await fetch(`${baseUrl}/.well-known/agent-card.json`)).json() };
 * ```
 */
export type ReceiptKeys = { publicKey: string } | { agentCard: unknown };

/**
 * Options of verifyReceipt.
 *
 * @example
 * ```ts
 * import { verifyReceipt, type VerifyReceiptOptions } from 'agent-output-verifier';
 *
 * // Given the request that was verified, the receipt's hashes are recomputed and compared too.
 * const options: VerifyReceiptOptions = { request: requestText };
 * verifyReceipt(receiptText, { agentCard }, options);
 * ```
 */
export interface VerifyReceiptOptions {
  /** The original request: its JSON text (parsed strictly) or an already-parsed value. */
  request?: unknown;
  /** Default: `score` when the response has no output_hash, else `verify`. */
  context?: AttestationContext;
  /** When given, filled in with every check that ran and the hashes compared (for a display, such as the receipt page). */
  trace?: ReceiptTrace;
}

/** The name of one of a receipt's hashes: `output_hash`, `schema_hash`, `rules_hash` or `request_hash`. */
export type ReceiptHashName = keyof ReceiptHashes;

/** One check that ran, in order: passed (with what it found) or failed (with why). */
export interface ReceiptCheckStep {
  check: ReceiptCheck;
  ok: boolean;
  detail: string;
}

/**
 * What a verification did, step by step. The last step is the failing one when the receipt is invalid;
 * `hashes` holds each hash the receipt states and, when a request was given, the one recomputed from it.
 */
export interface ReceiptTrace {
  steps: ReceiptCheckStep[];
  hashes: Partial<Record<ReceiptHashName, { receipt: string; computed?: string }>>;
  /** attestation.key_version, once it has been read. */
  keyVersion?: string;
}

/**
 * An empty trace to pass as `options.trace`; after the call it holds every check that ran.
 *
 * @example
 * ```ts
 * import { newReceiptTrace, verifyReceipt } from 'agent-output-verifier/receipts';
 *
 * const trace = newReceiptTrace();
 * verifyReceipt(receiptText, { agentCard }, { trace });
 * trace.keyVersion; // the attestation's key_version, once read
 * ```
 */
export function newReceiptTrace(): ReceiptTrace {
  return { steps: [], hashes: {} };
}

/**
 * Thrown by verifyReceipt for a bad `keys` argument (the caller's configuration, not the
 * receipt: a receipt's faults are answers, never exceptions).
 *
 * @example
 * ```ts
 * import { ReceiptKeyError, verifyReceipt } from 'agent-output-verifier';
 *
 * try {
 *   verifyReceipt(receiptText, { publicKey: 'not base64' });
 * } catch (e) {
 *   if (e instanceof ReceiptKeyError) console.error('configure the public key:', e.message);
 * }
 * ```
 */
export class ReceiptKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReceiptKeyError';
  }
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

interface KeyCandidate<K> {
  key: K;
  algorithm: unknown;
  notBefore?: unknown;
  notAfter?: unknown;
  windowed: boolean;
  /** Where the key came from, for the trace. */
  source: string;
}

/** The attestation extension's key list, or a reason there is none. */
function cardKeys(card: unknown): unknown[] | string {
  if (!isObject(card)) return 'the agent card is not a JSON object';
  const caps = card.capabilities;
  const exts = isObject(caps) ? caps.extensions : undefined;
  if (!Array.isArray(exts)) return 'the agent card has no capabilities.extensions';
  const ext = exts.find((e) => isObject(e) && typeof e.uri === 'string' && e.uri.startsWith(ATTESTATION_EXTENSION_PREFIX));
  if (!isObject(ext)) return 'the agent card has no attestation extension';
  const params = ext.params;
  const keys = isObject(params) ? params.publicKeys : undefined;
  if (!Array.isArray(keys)) return 'the attestation extension lists no publicKeys';
  return keys;
}

function findKey<K>(crypto: ReceiptCrypto<K>, keys: ReceiptKeys, keyVersion: string): KeyCandidate<K> | string {
  if ('publicKey' in keys) {
    const key = importBase64Key(crypto, keys.publicKey);
    if (!key) throw new ReceiptKeyError('the public key must be standard base64 of the raw 32-byte Ed25519 key');
    return { key, algorithm: SIGNATURE_ALGORITHM, windowed: false, source: 'the public key given' };
  }
  if (!('agentCard' in keys)) throw new ReceiptKeyError('give either publicKey or agentCard');
  const list = cardKeys(keys.agentCard);
  if (typeof list === 'string') return list;
  const entry = list.find((k) => isObject(k) && k.keyVersion === keyVersion);
  if (!isObject(entry)) return `key version '${keyVersion}' is not listed in the agent card`;
  const key = importBase64Key(crypto, entry.publicKey);
  if (!key) return `the agent card's key '${keyVersion}' is not base64 of a raw 32-byte Ed25519 key`;
  return { key, algorithm: entry.algorithm, notBefore: entry.notBefore, notAfter: entry.notAfter, windowed: true, source: `key '${keyVersion}' found in the agent card` };
}

/** A public key given as standard base64 of its raw 32 bytes (canonical encoding only); undefined when malformed. */
function importBase64Key<K>(crypto: ReceiptCrypto<K>, text: unknown): K | undefined {
  const raw = decodeBase64(text, 32);
  return raw ? crypto.importPublicKey(raw) : undefined;
}

const BASE64_RE: Record<number, RegExp> = { 32: /^[A-Za-z0-9+/]{43}=$/, 64: /^[A-Za-z0-9+/]{86}==$/ };

/** Standard base64 of exactly `length` bytes (32 or 64), canonical encoding only; atob exists in Node ≥ 16 and browsers. */
function decodeBase64(text: unknown, length: 32 | 64): Uint8Array | undefined {
  if (typeof text !== 'string' || !BASE64_RE[length].test(text)) return undefined;
  const binary = atob(text);
  if (binary.length !== length) return undefined;
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = binary.charCodeAt(i);
  // Non-canonical encodings (stray bits in the last character) decode to the same bytes: refuse them.
  return btoa(binary) === text ? bytes : undefined;
}

function parseRequest(request: unknown): ParsedRequest | string {
  try {
    return typeof request === 'string' || request instanceof Uint8Array
      ? parseVerificationRequest(request)
      : validateRequestValue(request);
  } catch (e) {
    if (isApiError(e)) {
      const fields = e.fields.map((f) => `${f.field} ${f.problem}`).join('; ');
      return `the request is not a valid verification request${fields ? `: ${fields}` : ''}`;
    }
    throw e;
  }
}

/**
 * The four hashes a full receipt states, in the order they are checked.
 *
 * @example
 * ```ts
 * import { HASH_FIELDS, newReceiptTrace, verifyReceipt } from 'agent-output-verifier/receipts';
 *
 * const trace = newReceiptTrace();
 * verifyReceipt(receiptText, { agentCard }, { request: requestText, trace });
 * for (const name of HASH_FIELDS) console.log(name, trace.hashes[name]?.receipt, trace.hashes[name]?.computed);
 * ```
 */
export const HASH_FIELDS: readonly ReceiptHashName[] = ['output_hash', 'schema_hash', 'rules_hash', 'request_hash'];

/**
 * Request fields a compact receipt carries in the clear. Its three hashes leave
 * them out (request_hash, which covers them, is full form only), so they are
 * compared one by one.
 */
const COMPACT_REQUEST_FIELDS = ['task_id', 'agent_id', 'enforce_rules', 'strict_content_check'] as const;

/** Verifies a receipt; see createReceiptVerifier. */
export type VerifyReceipt = (response: unknown, keys: ReceiptKeys, options?: VerifyReceiptOptions) => ReceiptVerification;

/**
 * The offline receipt verifier on the given primitives. The returned function
 * verifies a signed response (object, or its JSON text parsed strictly: a
 * receipt with duplicate keys is malformed). It never throws for anything wrong
 * with the receipt or the request; it throws ReceiptKeyError for a bad `keys`.
 */
export function createReceiptVerifier<K>(crypto: ReceiptCrypto<K>): VerifyReceipt {
  return (response, keys, options = {}) => verifyWith(crypto, response, keys, options);
}

function verifyWith<K>(crypto: ReceiptCrypto<K>, response: unknown, keys: ReceiptKeys, options: VerifyReceiptOptions): ReceiptVerification {
  const trace = options.trace;
  const fail = (failedCheck: ReceiptCheck, message: string): ReceiptVerification => {
    trace?.steps.push({ check: failedCheck, ok: false, detail: message });
    return { valid: false, failedCheck, message };
  };
  const pass = (check: ReceiptCheck, detail: string): void => {
    trace?.steps.push({ check, ok: true, detail });
  };
  let receipt: unknown = response;
  if (typeof response === 'string' || response instanceof Uint8Array) {
    try {
      const parsed = parseStrictJson(response, { maxDepth: 1000 });
      if (parsed.duplicateKeys.length > 0) return fail('format', 'the receipt has an object with a duplicated key');
      receipt = parsed.value;
    } catch {
      return fail('format', 'the receipt is not valid JSON');
    }
  }
  if (!isObject(receipt)) return fail('format', 'the receipt is not a JSON object');
  if (trace) {
    for (const f of HASH_FIELDS) if (typeof receipt[f] === 'string') trace.hashes[f] = { receipt: receipt[f] as string };
  }
  const att = receipt.attestation;
  if (!isObject(att)) return fail('format', 'the receipt has no attestation object');
  const { algorithm, key_version: keyVersion, timestamp } = att;
  if (typeof keyVersion !== 'string' || keyVersion === '') return fail('format', 'attestation.key_version is missing');
  if (trace) trace.keyVersion = keyVersion;
  if (typeof algorithm !== 'string') return fail('format', 'attestation.algorithm is missing');
  const signedAt = parseRfc3339(timestamp);
  if (signedAt === undefined) return fail('format', 'attestation.timestamp is not an RFC 3339 date-time');
  const signature = decodeBase64(att.signature, 64);
  if (!signature) return fail('format', 'attestation.signature is not standard base64 of 64 bytes');
  const verifyBlock = receipt.verify;
  if (!isObject(verifyBlock)) return fail('format', 'the receipt has no verify block');
  if (verifyBlock.key_version !== keyVersion) return fail('format', 'verify.key_version differs from attestation.key_version');

  const context: AttestationContext = options.context ?? ('output_hash' in receipt ? 'verify' : 'score');
  if (context === 'verify') {
    if (receipt.verified_at !== timestamp) return fail('format', 'verified_at differs from attestation.timestamp');
    for (const f of ['output_hash', 'schema_hash', 'rules_hash'] as const) {
      if (typeof receipt[f] !== 'string') return fail('format', `a verification receipt needs ${f}`);
    }
  }
  pass('format', `a ${context === 'verify' ? 'verification receipt' : 'trust score'} with an Ed25519 attestation`);

  if (algorithm !== SIGNATURE_ALGORITHM) return fail('algorithm', `unsupported signature algorithm '${algorithm}'`);
  const found = findKey(crypto, keys, keyVersion);
  if (typeof found === 'string') return fail('key_not_found', found);
  pass('key_not_found', found.source);
  if (found.algorithm !== SIGNATURE_ALGORITHM) {
    return fail('algorithm', `key '${keyVersion}' is listed for algorithm '${String(found.algorithm)}', not Ed25519`);
  }
  pass('algorithm', SIGNATURE_ALGORITHM);
  if (found.windowed) {
    const notBefore = parseRfc3339(found.notBefore);
    const notAfter = found.notAfter === null || found.notAfter === undefined ? null : parseRfc3339(found.notAfter);
    if (notBefore === undefined || notAfter === undefined) {
      return fail('key_validity', `key '${keyVersion}' has no readable validity window`);
    }
    if (signedAt < notBefore || (notAfter !== null && signedAt > notAfter)) {
      return fail(
        'key_validity',
        `the receipt was signed at ${String(timestamp)}, outside the validity of key '${keyVersion}' (${String(found.notBefore)} .. ${found.notAfter ?? 'open'})`,
      );
    }
    pass('key_validity', `signed at ${String(timestamp)}, inside the key's validity window`);
  }

  const unsigned: Obj = { ...receipt };
  delete unsigned.attestation;
  let input: string;
  try {
    input = signingInput(unsigned, context, keyVersion, timestamp as string);
  } catch (e) {
    if (e instanceof JcsError) return fail('format', `the receipt holds a value without a canonical JSON form (${e.message})`);
    throw e;
  }
  if (!crypto.verify(input, signature, found.key)) {
    return fail('signature', `the Ed25519 signature does not match the receipt (context ${context}, key '${keyVersion}')`);
  }
  pass('signature', `Ed25519 signature over the RFC 8785 form verified with key '${keyVersion}'`);

  if (options.request !== undefined) {
    const parsed = parseRequest(options.request);
    if (typeof parsed === 'string') return fail('request_invalid', parsed);
    let hashes: ReceiptHashes;
    try {
      hashes = computeHashesWith(parsed, crypto.sha256Hex);
    } catch (e) {
      // A request the parser accepts but whose canonical form does not exist (nested past JCS's depth limit).
      if (e instanceof JcsError) return fail('request_invalid', `the request holds a value without a canonical JSON form (${e.message})`);
      throw e;
    }
    if (trace) {
      for (const f of HASH_FIELDS) if (f in receipt) trace.hashes[f] = { receipt: String(receipt[f]), computed: hashes[f] };
    }
    for (const f of HASH_FIELDS) {
      // request_hash is only in full-form receipts; score receipts carry no hashes.
      if (!(f in receipt)) continue;
      if (receipt[f] !== hashes[f]) {
        return fail(f, `${f} does not match the request: receipt has ${String(receipt[f])}, request gives ${hashes[f]}`);
      }
      pass(f, `${f} recomputed from the request`);
    }
    if (context === 'verify' && !('request_hash' in receipt)) {
      for (const f of COMPACT_REQUEST_FIELDS) {
        if (receipt[f] !== parsed.request[f]) {
          return fail(
            'request_mismatch',
            `${f} does not match the request: receipt has ${String(JSON.stringify(receipt[f]))}, request gives ${JSON.stringify(parsed.request[f])}`,
          );
        }
      }
      pass('request_mismatch', 'the compact receipt names the same task, agent and options as the request');
    }
  }
  return { valid: true, keyVersion };
}
