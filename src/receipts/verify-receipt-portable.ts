/**
 * @module Pure-JS primitives for offline receipt verification (no Node API, no
 * WebCrypto, which browsers offer only in secure contexts): Ed25519 from
 * @noble/ed25519, SHA-256 and SHA-512 from @noble/hashes, all
 * synchronous, so the same verifier runs unchanged in browsers, Node and other
 * runtimes. Ed25519 is checked strictly (RFC 8032 / FIPS 186-5, not ZIP-215),
 * the same signatures Node's OpenSSL accepts.
 */
import * as ed from '@noble/ed25519';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { createReceiptVerifier, type ReceiptCrypto, type VerifyReceipt } from './receipt-verifier.js';

// Synchronous verification needs a synchronous SHA-512.
ed.hashes.sha512 = sha512;
const utf8 = new TextEncoder();

export const portableReceiptCrypto: ReceiptCrypto<Uint8Array> = {
  sha256Hex: (text) => bytesToHex(sha256(utf8.encode(text))),
  importPublicKey(raw) {
    try {
      ed.Point.fromBytes(raw, false);
      return raw;
    } catch {
      return undefined;
    }
  },
  verify(message, signature, key) {
    try {
      return ed.verify(signature, utf8.encode(message), key, { zip215: false });
    } catch {
      return false;
    }
  },
};

/**
 * verifyReceipt on pure-JS primitives (same checks, same answers as on Node's crypto), for
 * browsers and other runtimes. Published as `verifyReceipt` of `agent-output-verifier/receipts`.
 *
 * @example
 * ```ts
 * import { newReceiptTrace, verifyReceipt } from 'agent-output-verifier/receipts';
 *
 * const agentCard = await (await fetch('/.well-known/agent-card.json')).json();
 * const trace = newReceiptTrace();
 * const check = verifyReceipt(receiptText, { agentCard }, { request: requestText, trace });
 * for (const step of trace.steps) console.log(step.ok ? '✓' : '✗', step.check, step.detail);
 * ```
 */
export const verifyReceiptPortable: VerifyReceipt = createReceiptVerifier(portableReceiptCrypto);
