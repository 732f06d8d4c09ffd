/**
 * @module The package's public surface. Everything a library user needs to verify
 * outputs in-process, issue receipts, or check a receipt offline is exported here
 * by name; everything else is internal and may change.
 */

// Verification core (pure).
export { createSchemaEngine, createSchemaCache, SchemaCompileError } from './core/schema/index.js';
export type { SchemaEngine, CompiledSchema, SchemaEvaluation, SchemaFailure } from './core/schema/engine.js';
export { parseVerificationRequest, validateRequestValue } from './core/request.js';
export { createVerifier } from './core/verify.js';
export type { Verifier, VerifierOptions } from './core/verify.js';
export { buildResponse } from './core/response.js';
export { computeTrustScore, isTestAgent } from './core/trust-score.js';
export type * from './core/types.js';
export { applyPatch, JsonPatchError, parseJsonPointer, toJsonPointer } from './core/json-patch.js';
export type { JsonPatchOperation } from './core/json-patch.js';

// Receipts: canonical form, hashes, keys, attestation, offline verification.
export {
  canonicalize,
  computeHashes,
  canonicalRequest,
  sha256Hex,
  createKeyRing,
  createStaticKeyRing,
  createAttestor,
  createReceiptIssuer,
  attestationExtension,
  verifyReceipt,
  ReceiptKeyError,
} from './receipts/index.js';
export type { ReceiptVerification, ReceiptKeys, VerifyReceiptOptions } from './receipts/verify-receipt.js';

// Repairs: apply a failing verdict's patches to the request, then verify again.
export { applyRepairs, RepairError } from './repair/apply-repairs.js';
export type { ApplyRepairsOptions, RepairRecord, RepairResult, RepairableVerdict } from './repair/apply-repairs.js';

// Errors: the one table of codes and the wire shape.
export { ApiError, ERROR_TABLE, errorBody } from './errors.js';
export type { ErrorBody, ErrorCode, FieldProblem } from './errors.js';
