/**
 * @module Pure-JS primitives for offline receipt verification (no Node API, no
 * WebCrypto): Ed25519 from @noble/curves, SHA-256 from @noble/hashes, both
 * synchronous, so the same verifier runs unchanged in browsers, Node and other
 * runtimes. Ed25519 is checked strictly (RFC 8032 / FIPS 186-5, not ZIP-215),
 * the same signatures Node's OpenSSL accepts.
 */
import { ed25519 } from '@noble/curves/ed25519';
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex } from '@noble/hashes/utils';
import { createReceiptVerifier, type ReceiptCrypto, type VerifyReceipt } from './receipt-verifier.js';

const utf8 = new TextEncoder();

export const portableReceiptCrypto: ReceiptCrypto<Uint8Array> = {
  sha256Hex: (text) => bytesToHex(sha256(utf8.encode(text))),
  importPublicKey(raw) {
    try {
      ed25519.Point.fromBytes(raw, false);
      return raw;
    } catch {
      return undefined;
    }
  },
  verify(message, signature, key) {
    try {
      return ed25519.verify(signature, utf8.encode(message), key, { zip215: false });
    } catch {
      return false;
    }
  },
};

/** verifyReceipt on the pure-JS primitives (same checks, same answers). */
export const verifyReceiptPortable: VerifyReceipt = createReceiptVerifier(portableReceiptCrypto);
