/**
 * @module The package's root entry, `agent-output-verifier`: verify outputs in-process,
 * check a receipt offline with only the service's public keys, apply a verdict's repairs,
 * and the error type all of these throw. Each name is exported by name (no wildcard), and
 * etc/index.api.md records the whole surface: `npm run api:check` fails on any change to
 * it. Everything else in the package is internal and may change; the other public entries
 * are `./client`, `./receipts`, `./json`, `./ai-sdk` and `./langchain` (docs/library.md).
 */

// Verify in-process: parse a request, compile its schema, get the verdict.
export { createVerifier } from './core/verify.js';
export type { Verifier, VerifierOptions } from './core/verify.js';
export { createSchemaEngine, SchemaCompileError } from './core/schema/index.js';
export type { SchemaEngine } from './core/schema/engine.js';
export { parseVerificationRequest, validateRequestValue } from './core/request.js';
export type { ParsedRequest, Verdict } from './core/types.js';

// Check a receipt offline, with the public key or the agent card that lists it.
export { verifyReceipt, ReceiptKeyError } from './receipts/verify-receipt.js';
export type { ReceiptKeys, ReceiptVerification, VerifyReceiptOptions } from './receipts/verify-receipt.js';

// Repairs: apply a failing verdict's patches to the request, then verify again.
export { applyRepairs, RepairError } from './repair/apply-repairs.js';
export type { ApplyRepairsOptions, RepairResult } from './repair/apply-repairs.js';
export { applyPatch, JsonPatchError } from './core/json-patch.js';
export type { JsonPatchOperation } from './core/json-patch.js';

// Errors: what parsing and verifying throw, with its wire form.
export { ApiError } from './errors.js';
export type { ErrorCode } from './errors.js';
