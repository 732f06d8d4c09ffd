/**
 * @module `agent-output-verifier/client`: the typed client for agents and
 * browsers. Nothing server-side is reachable from here (no Fastify, no
 * database, no Node API); the browser-bundle test in test/client.test.ts holds that line.
 */
export {
  createVerifierClient,
  type BatchResult,
  VerifierError,
  type CheckReceiptOptions,
  type Paid,
  type Payer,
  type ReceiptVerification,
  type RetryOptions,
  type VerifierClient,
  type VerifierClientOptions,
} from './verifier-client.js';
export {
  feedbackText,
  RepairLoopError,
  type RegenerateFeedback,
  type Regenerate,
  type RepairAttempt,
  type RepairLoopErrorCode,
  type VerifyAndRepairOptions,
  type VerifyAndRepairResult,
} from './repair-loop.js';
export { applyRepairs, RepairError, type ApplyRepairsOptions, type RepairRecord, type RepairResult } from '../repair/apply-repairs.js';
export type {
  AllowanceState,
  ApiErrorBody,
  Attestation,
  BatchItem,
  BatchVerificationRequest,
  BatchVerificationResponse,
  Bound,
  ErrorDetail,
  ErrorField,
  Flag,
  Hint,
  HistoryEntry,
  JsonPatchOperation,
  JsonValue,
  LogCheckpointRef,
  Receipt,
  Repair,
  RepairOption,
  Reputation,
  Rule,
  RuleType,
  Score,
  TrustScore,
  VerificationRequest,
  VerifyBlock,
} from './types.js';
