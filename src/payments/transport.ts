/**
 * @module Transport helpers around the gate: the REST headers (PAYMENT-REQUIRED,
 * PAYMENT-SIGNATURE, PAYMENT-RESPONSE, encoded and decoded with @x402/core's
 * http utilities), the 402 body with the caller's live free-trial state, and the
 * MCP equivalents (`params._meta["x402/payment"]` in, `result._meta
 * ["x402/payment-response"]` out, an isError tool result carrying PaymentRequired).
 */
import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from '@x402/core/http';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import type { AllowanceInfo } from '../service/types.js';

const PAYMENT_REQUIRED_HEADER = 'PAYMENT-REQUIRED';
const PAYMENT_RESPONSE_HEADER = 'PAYMENT-RESPONSE';
const MCP_PAYMENT_META = 'x402/payment';
export const MCP_PAYMENT_RESPONSE_META = 'x402/payment-response';

/**
 * Why a 402 was sent. `free_trial_exhausted` once the daily allowance is spent;
 * `payment_required` when the request needs payment although free calls remain
 * (large body, discovery probe); `payment_invalid` when a payment was sent and
 * refused; `settlement_failed` when the work ran but the charge did not go through.
 */
export type PaymentRequiredCode = 'free_trial_exhausted' | 'payment_required' | 'payment_invalid' | 'settlement_failed';

export interface FreeTrialState {
  available: boolean;
  remaining_calls_today: number;
  resets_at: string;
  limit: number;
}

function freeTrialState(allowance: AllowanceInfo): FreeTrialState {
  return {
    available: allowance.remaining > 0,
    remaining_calls_today: allowance.remaining,
    resets_at: allowance.resetsAt,
    limit: allowance.limit,
  };
}

/** The code of a 402 that is not about a rejected payment. */
export function unpaidCode(allowance: AllowanceInfo): PaymentRequiredCode {
  return allowance.remaining > 0 ? 'payment_required' : 'free_trial_exhausted';
}

/** Read PAYMENT-SIGNATURE: absent → `present: false`; present but undecodable → `payload: null`. */
export function readPaymentSignature(header: string | string[] | undefined): { present: boolean; payload: unknown } {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return { present: false, payload: null };
  try {
    return { present: true, payload: decodePaymentSignatureHeader(value.trim()) };
  } catch {
    return { present: true, payload: null };
  }
}

/** Headers of a 402. */
export function paymentRequiredHeaders(paymentRequired: PaymentRequired): Record<string, string> {
  return { [PAYMENT_REQUIRED_HEADER]: encodePaymentRequiredHeader(paymentRequired), 'Cache-Control': 'no-store' };
}

/** Headers of a paid (settled) response. */
export function paymentResponseHeaders(settlement: SettleResponse): Record<string, string> {
  return { [PAYMENT_RESPONSE_HEADER]: encodePaymentResponseHeader(settlement), 'Cache-Control': 'private, no-store' };
}

export interface PaymentRequiredBodyOptions {
  code: PaymentRequiredCode;
  message: string;
  allowance: AllowanceInfo;
  settlement?: SettleResponse | null;
  /** Where the free calls are and how the caller is told apart: adds the `free_trial` object. */
  freeTrial?: { mcpUrl: string; client: string };
}

/**
 * The `free_trial` object of a 402 body, in the shape clients of the hosted original
 * read: where the free calls are (the MCP tool, also REST), how many remain today,
 * when they reset, and how this client is identified.
 */
function freeTrialObject(allowance: AllowanceInfo, where: { mcpUrl: string; client: string }): Record<string, unknown> {
  const available = allowance.remaining > 0;
  return {
    available,
    via: 'mcp+rest',
    transport: 'streamable-http',
    url: where.mcpUrl,
    tool: 'verify_schema',
    calls_per_client_per_day: allowance.limit,
    remaining_calls_today: allowance.remaining,
    resets_at: allowance.resetsAt,
    client: where.client,
    message: available
      ? `${allowance.remaining} of ${allowance.limit} free verifications left today for this client (MCP tool verify_schema or the REST verify routes, without payment).`
      : `The ${allowance.limit} free verifications of today are used up for this client; they reset at ${allowance.resetsAt}.`,
    code: available ? 'free_trial_available' : 'free_trial_exhausted',
  };
}

/** The JSON body of a 402: the PaymentRequired object plus the live free-trial state and a stable code. */
export function paymentRequiredBody(paymentRequired: PaymentRequired, options: PaymentRequiredBodyOptions): Record<string, unknown> {
  return {
    ...paymentRequired,
    code: options.code,
    message: options.message,
    charged: false,
    ...freeTrialState(options.allowance),
    ...(options.freeTrial ? { free_trial: freeTrialObject(options.allowance, options.freeTrial) } : {}),
    ...(options.settlement ? { settlement: options.settlement } : {}),
  };
}

/** The settlement of a paid call is under way with an unknown outcome (not a refusal, not an error). */
const SETTLEMENT_PENDING_STATUS = 202;

/**
 * Body of a pending settlement: retryable, names the receipt it will publish and the
 * transaction, and never claims that nothing was charged (the charge may have gone through).
 */
export function settlementPendingBody(pending: {
  verificationId: string | null;
  transaction: string | null;
  message: string;
  retryAfter: number;
}): Record<string, unknown> {
  return {
    code: 'settlement_pending',
    message: pending.message,
    status: SETTLEMENT_PENDING_STATUS,
    retryable: true,
    retry_after: pending.retryAfter,
    payment_status: 'pending',
    verification_id: pending.verificationId,
    transaction: pending.transaction,
    next_actions: [
      { action: 'retry_with_same_payment', after_seconds: pending.retryAfter },
      ...(pending.verificationId ? [{ action: 'get_receipt', url: `/verifications/${pending.verificationId}` }] : []),
    ],
  };
}

/** Read `params._meta["x402/payment"]` of an MCP request. */
export function readMcpPayment(meta: unknown): { present: boolean; payload: unknown } {
  if (typeof meta !== 'object' || meta === null) return { present: false, payload: null };
  const value = (meta as Record<string, unknown>)[MCP_PAYMENT_META];
  if (value === undefined || value === null) return { present: false, payload: null };
  if (typeof value === 'string') {
    // Some clients send the header encoding; accept it too.
    try {
      return { present: true, payload: decodePaymentSignatureHeader(value) };
    } catch {
      return { present: true, payload: null };
    }
  }
  return { present: true, payload: value };
}

export interface McpToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** `result._meta` of an MCP tool result asking for payment: the code, the live free-trial state, any settlement. */
export function mcpPaymentRequiredMeta(options: PaymentRequiredBodyOptions): Record<string, unknown> {
  return {
    code: options.code,
    message: options.message,
    charged: false,
    free_trial: options.freeTrial ? { ...freeTrialState(options.allowance), ...freeTrialObject(options.allowance, options.freeTrial) } : freeTrialState(options.allowance),
    ...(options.settlement ? { [MCP_PAYMENT_RESPONSE_META]: options.settlement } : {}),
  };
}

/** An MCP tool result asking for payment: isError, PaymentRequired as structured and text content. */
export function mcpPaymentRequiredResult(paymentRequired: PaymentRequired, options: PaymentRequiredBodyOptions): McpToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(paymentRequired) }],
    structuredContent: paymentRequired as unknown as Record<string, unknown>,
    _meta: mcpPaymentRequiredMeta(options),
  };
}

/** Attach the settlement to a successful tool result. */
export function withMcpPaymentResponse<T extends { _meta?: Record<string, unknown> }>(result: T, settlement: SettleResponse): T {
  return { ...result, _meta: { ...(result._meta ?? {}), [MCP_PAYMENT_RESPONSE_META]: settlement } };
}

/**
 * The x402 encodings the transports need, handed to the HTTP and MCP adapters
 * when payments are on: they never import this module themselves, so the x402
 * stack is loaded only when it is used. The `free_trial` object's MCP URL and
 * client description are bound in once.
 */
export interface PaymentEncoding {
  readPaymentSignature: typeof readPaymentSignature;
  readMcpPayment: typeof readMcpPayment;
  paymentRequiredHeaders: typeof paymentRequiredHeaders;
  paymentResponseHeaders: typeof paymentResponseHeaders;
  paymentRequiredBody(paymentRequired: PaymentRequired, options: Omit<PaymentRequiredBodyOptions, 'freeTrial'>): Record<string, unknown>;
  mcpPaymentRequiredMeta(options: Omit<PaymentRequiredBodyOptions, 'freeTrial'>): Record<string, unknown>;
  settlementPendingBody: typeof settlementPendingBody;
  settlementPendingStatus: typeof SETTLEMENT_PENDING_STATUS;
  mcpPaymentResponseMeta: typeof MCP_PAYMENT_RESPONSE_META;
}

export function createPaymentEncoding(freeTrial?: { mcpUrl: string; client: string }): PaymentEncoding {
  return {
    readPaymentSignature,
    readMcpPayment,
    paymentRequiredHeaders,
    paymentResponseHeaders,
    paymentRequiredBody: (paymentRequired, options) => paymentRequiredBody(paymentRequired, { ...options, freeTrial }),
    mcpPaymentRequiredMeta: (options) => mcpPaymentRequiredMeta({ ...options, freeTrial }),
    settlementPendingBody,
    settlementPendingStatus: SETTLEMENT_PENDING_STATUS,
    mcpPaymentResponseMeta: MCP_PAYMENT_RESPONSE_META,
  };
}
