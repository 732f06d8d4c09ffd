/**
 * @module Admission of an MCP tool call: the single gate between "the arguments
 * are valid" and "do the work". The default gate spends the free allowance shared
 * with the REST verify routes. The x402 payment adapter wraps or replaces it
 * (payment in `params._meta["x402/payment"]`, settlement returned as `_meta`
 * entries merged into `result._meta`), without touching the tool handlers.
 */
import type { FastifyRequest } from 'fastify';
import type { SignedResult, VerifierService } from '../service/types.js';
import type { ReceiptRecord } from '../store/store.js';
import { allowanceExhaustedError } from '../service/verifier-service.js';
import type { ToolName } from './tool-definitions.js';

/** Everything a gate may look at. */
export interface ToolCallContext {
  tool: ToolName;
  /** Client address, resolved exactly like the REST routes resolve it. */
  clientKey: string;
  /** `params._meta` of the tools/call request (where an x402 payment rides). */
  meta: Record<string, unknown> | undefined;
  /** The HTTP request that carried the call (headers, ip). */
  request: FastifyRequest;
}

/** What the work produced, for the gate's bookkeeping (e.g. a settlement that references the receipt). */
export interface WorkOutcome {
  /** The receipt's verification_id (verify_schema); null for the score. */
  verificationId: string | null;
  /** The receipt, still unstored, when the admission asked for `deferStore` (verify_schema). */
  record?: ReceiptRecord | null;
}

/** A call allowed to proceed. Exactly one of `complete` / `release` is called afterwards. */
export interface Admitted {
  admitted: true;
  /**
   * The work succeeded: finish (e.g. settle a payment); returns entries for `result._meta`.
   * Throwing an ApiError turns the result into that error (release is not called then).
   */
  complete(outcome?: WorkOutcome): Promise<Record<string, unknown> | undefined | Refused>;
  /** The work failed: undo (refund the allowance, release a payment reservation). */
  release(): Promise<void>;
  /**
   * The receipt must not be stored by the work: `complete` gets it and stores it (a paid call
   * publishes its receipt only once the payment is settled).
   */
  deferStore?: boolean;
  /** Already answered (a paid receipt fetched on retry): no work runs; `complete` is still called. */
  answer?: SignedResult;
}

/**
 * A call refused with a non-§6 result, e.g. x402 PaymentRequired. Coded refusals
 * (allowance exhausted) are thrown as ApiError instead.
 */
export interface Refused {
  admitted: false;
  /** Becomes `structuredContent` and the JSON text content of an `isError` result. */
  structuredContent: Record<string, unknown>;
  /** Optional `result._meta`. */
  meta?: Record<string, unknown>;
}

export type Admission = Admitted | Refused;

/** Decide whether a validated tool call may run. Throw ApiError for a coded refusal. */
export type AdmitToolCall = (ctx: ToolCallContext) => Promise<Admission>;

/** `result._meta` key of the free-allowance state after a verify_schema call. */
export const FREE_ALLOWANCE_META = 'agent-output-verifier/free-allowance';

const FREE: Admitted = { admitted: true, complete: async () => undefined, release: async () => undefined };

/**
 * The default gate: `verify_schema` takes one unit of the free daily allowance
 * (429 free_allowance_exhausted when none is left; refunded if the work fails);
 * `get_verification_record` is free.
 */
export function createAllowanceAdmission(service: VerifierService): AdmitToolCall {
  return async (ctx) => {
    if (ctx.tool !== 'verify_schema') return FREE;
    const client = { clientKey: ctx.clientKey };
    const allowance = await service.consumeAllowance(client);
    if (!allowance.allowed) {
      throw allowanceExhaustedError(allowance);
    }
    return {
      admitted: true,
      // MCP clients rarely surface HTTP headers, so the allowance state REST sends as
      // Free-Allowance-* headers rides in result._meta instead.
      complete: async () => ({
        [FREE_ALLOWANCE_META]: { limit: allowance.limit, remaining: allowance.remaining, resets_at: allowance.resetsAt },
      }),
      release: () => service.refundAllowance(client),
    };
  };
}
