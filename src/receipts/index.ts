/** @module The receipts public surface: hashes, keys, signatures and offline verification (docs/protocol.md#hashes, #signature, #keys). */
export { canonicalize, serializeNumber, JcsError } from './jcs.js';
export { computeHashes, canonicalRequest, canonicalRulesAndBounds, sha256Hex, type ReceiptHashes } from './hashes.js';
export {
  createKeyRing,
  createStaticKeyRing,
  type KeyRing,
  type KeyRingOptions,
  type KeyMeta,
  type KeyStatus,
  type PublicKeyInfo,
  type SigningKey,
  type StaticKeyMeta,
} from './key-ring.js';
export { PUBLIC_KEY_ENCODING, privateKeyPemFromSeed, publicKeyFromBase64, rawPublicKeyBase64 } from './ed25519.js';
export {
  ATTESTATION_CONTEXTS,
  CANONICALIZATION,
  HASH_ALGORITHM,
  SIGNATURE_ALGORITHM,
  createAttestor,
  signingInput,
  type AttachOptions,
  type AttestationBlock,
  type AttestationContext,
  type Attestor,
  type AttestorOptions,
  type SignedResponse,
  type VerifyBlock,
} from './v1/attestation.js';
export { requestHashVectors, requestHashVectorTexts, type RequestHashVector } from './v1/request-hash-vectors.js';
export {
  ATTESTATION_EXTENSION_PREFIX,
  ATTESTATION_EXTENSION_URI,
  attestationExtension,
  type AttestationExtension,
} from './agent-card-extension.js';
export {
  ReceiptKeyError,
  verifyReceipt,
  type ReceiptCheck,
  type ReceiptKeys,
  type ReceiptVerification,
  type VerifyReceiptOptions,
} from './verify-receipt.js';
export { rfc3339Seconds } from './time.js';
export {
  createReceiptIssuer,
  type IssuedReceipt,
  type ReceiptIssuer,
  type ReceiptIssuerOptions,
} from './issue-receipt.js';
