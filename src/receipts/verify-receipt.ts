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
 * Verifies a receipt offline (docs/protocol.md#signature): a signed response (object, or
 * its JSON text parsed strictly: a receipt with duplicate keys is malformed) against the
 * service's public keys: format, key, algorithm, key validity window, Ed25519 signature,
 * and, given the original request, its hashes. Needs no network and no secret. Never
 * throws for anything wrong with the receipt or the request (the answer names the failed
 * check); throws ReceiptKeyError for a bad `keys`. Runs on Node's crypto; the same checks
 * run in browsers from `agent-output-verifier/receipts`.
 *
 * @example
 * ```ts
 * import { verifyReceipt } from 'agent-output-verifier';
 *
 * const agentCard = await (await fetch('http://127.0.0.1:8080/.well-known/agent-card.json')).json();
 * const check = verifyReceipt(receiptText, { agentCard }, { request: requestText }); // request optional
 * if (!check.valid) console.error(check.failedCheck, check.message);
 * ```
 */
export const verifyReceipt: VerifyReceipt = createReceiptVerifier(nodeReceiptCrypto);
