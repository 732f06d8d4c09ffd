/**
 * @module `agent-output-verifier/receipts`: offline receipt verification for any runtime
 * (browsers, workers, Node), on pure-JS Ed25519 and SHA-256: no Node API, no WebCrypto
 * (which browsers offer only in secure contexts). The checks and answers are those of the
 * root entry's verifyReceipt and of `aov receipt verify`; a trace records each check as it
 * runs, for a display that shows the steps (the service's receipt page uses it).
 */
export { verifyReceiptPortable as verifyReceipt } from './verify-receipt-portable.js';
export {
  HASH_FIELDS,
  newReceiptTrace,
  ReceiptKeyError,
  type ReceiptCheck,
  type ReceiptCheckStep,
  type ReceiptHashName,
  type ReceiptKeys,
  type ReceiptTrace,
  type ReceiptVerification,
  type VerifyReceipt,
  type VerifyReceiptOptions,
} from './receipt-verifier.js';
