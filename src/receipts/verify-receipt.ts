/**
 * @module Offline receipt verification in Node (docs/protocol.md#signature): the checks of
 * ./receipt-verifier.ts on Node's native Ed25519 and SHA-256. The CLI and the
 * library use this one; the browser-safe client uses ./verify-receipt-portable.ts.
 */
import { verify as edVerify, type KeyObject } from 'node:crypto';
import { publicKeyFromRaw } from './ed25519.js';
import { sha256Hex } from './hashes.js';
import { createReceiptVerifier, type ReceiptCrypto, type VerifyReceipt } from './receipt-verifier.js';

export {
  ReceiptKeyError,
  createReceiptVerifier,
  type ReceiptCheck,
  type ReceiptCrypto,
  type ReceiptKeys,
  type ReceiptVerification,
  type VerifyReceipt,
  type VerifyReceiptOptions,
} from './receipt-verifier.js';

/** Node's primitives: OpenSSL Ed25519 and SHA-256. */
const nodeReceiptCrypto: ReceiptCrypto<KeyObject> = {
  sha256Hex,
  importPublicKey: publicKeyFromRaw,
  verify: (message, signature, key) => edVerify(null, Buffer.from(message, 'utf8'), key, signature),
};

/**
 * Verify a signed response (object, or its JSON text parsed strictly: a
 * receipt with duplicate keys is malformed). Never throws for anything wrong
 * with the receipt or the request; throws ReceiptKeyError for a bad `keys`.
 */
export const verifyReceipt: VerifyReceipt = createReceiptVerifier(nodeReceiptCrypto);
