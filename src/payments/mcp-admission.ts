/**
 * @module The MCP side of x402 (there is no official MCP package, so this small
 * adapter sits on the same gate as REST): plugs into the MCP adapter's `admit`
 * seam. A payment rides in `params._meta["x402/payment"]`; without one,
 * `verify_schema` spends the shared free allowance and, once it is spent, the
 * call is refused with an isError result carrying PaymentRequired (plus the
 * free-trial state and code in `_meta`). The trust score tool is always paid.
 * After the work, the settlement goes to `result._meta["x402/payment-response"]`.
 * A paid call's receipt is not stored by the work: the gate stores it pending and
 * publishes it only once the payment is settled; a failed settlement answers
 * PaymentRequired (`settlement_failed`, no receipt), an unknown outcome answers
 * `settlement_pending` (retry with the same payment; never "not charged").
 */
import { FREE_ALLOWANCE_META, type AdmitToolCall, type Admission, type Refused, type ToolCallContext } from '../mcp/admission.js';
import type { AllowanceInfo, VerifierService } from '../service/types.js';
import type { PaidRoute } from './config.js';
import type { PaymentGate, ResourceDescription } from './gate.js';
import { MCP_PAYMENT_RESPONSE_META, mcpPaymentRequiredMeta, readMcpPayment, settlementPendingBody, type PaymentRequiredCode } from './transport.js';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';

export interface PaymentAdmissionOptions {
  gate: PaymentGate;
  service: VerifierService;
  /** Public base URL; the resource is `${baseUrl}/mcp`. */
  baseUrl: string;
  /** The MCP URL and how clients are identified, for the `free_trial` object. */
  freeTrial?: { mcpUrl: string; client: string };
}

function pendingResult(pending: Parameters<typeof settlementPendingBody>[0]): Refused {
  const body = settlementPendingBody(pending);
  return { admitted: false, structuredContent: body, meta: { code: 'settlement_pending', retry_after: pending.retryAfter } };
}

/** An `admit` gate for the MCP adapter with payments on. */
export function createPaymentAdmission(options: PaymentAdmissionOptions): AdmitToolCall {
  const { gate, service } = options;
  const resourceFor = (tool: string): ResourceDescription => ({
    url: `${options.baseUrl}/mcp`,
    description: `MCP tool ${tool}`,
    mimeType: 'application/json',
    transport: 'mcp',
  });

  function refused(paymentRequired: PaymentRequired, code: PaymentRequiredCode, message: string, allowance: AllowanceInfo, settlement?: SettleResponse | null): Refused {
    return {
      admitted: false,
      structuredContent: paymentRequired as unknown as Record<string, unknown>,
      meta: mcpPaymentRequiredMeta({ code, message, allowance, freeTrial: options.freeTrial, settlement }),
    };
  }

  return async (ctx: ToolCallContext): Promise<Admission> => {
    const route: PaidRoute = ctx.tool === 'verify_schema' ? 'verify' : 'score';
    const client = { clientKey: ctx.clientKey };
    const resource = resourceFor(ctx.tool);
    const payment = readMcpPayment(ctx.meta);

    if (payment.present) {
      const auth = await gate.authorize(route, resource, payment.payload);
      if (!auth.ok) {
        if (auth.reason === 'paid_receipt') {
          // A retry after a pending settlement that went through: the receipt that payment bought.
          const answer = { response: JSON.parse(auth.receipt) as Record<string, unknown>, text: auth.receipt };
          return { admitted: true, answer, complete: async () => ({ [MCP_PAYMENT_RESPONSE_META]: auth.settlement }), release: async () => undefined };
        }
        if (auth.reason === 'settlement_pending') return pendingResult(auth.pending);
        return refused(auth.paymentRequired, 'payment_invalid', auth.message, await service.peekAllowance(client));
      }
      return {
        admitted: true,
        deferStore: route === 'verify',
        async complete(outcome) {
          const settled = await gate.settle(auth.ticket, outcome?.record ?? null);
          if (!settled.ok) {
            if (settled.pending) return pendingResult(settled.pending);
            // The charge did not go through: nothing was charged and the receipt was voided.
            return refused(settled.paymentRequired, 'settlement_failed', settled.message, await service.peekAllowance(client), settled.settlement);
          }
          return { [MCP_PAYMENT_RESPONSE_META]: settled.settlement };
        },
        release: () => gate.cancel(auth.ticket, 'work_failed'),
      };
    }

    if (route === 'verify') {
      const allowance = await service.consumeAllowance(client);
      if (allowance.allowed) {
        return {
          admitted: true,
          complete: async () => ({
            [FREE_ALLOWANCE_META]: { limit: allowance.limit, remaining: allowance.remaining, resets_at: allowance.resetsAt },
          }),
          release: () => service.refundAllowance(client),
        };
      }
      const message = 'The free daily allowance for this client is used up; pay per call with x402 in params._meta["x402/payment"].';
      return refused(await gate.paymentRequired(route, resource, message), 'free_trial_exhausted', message, allowance);
    }
    const message = 'get_verification_record is a paid tool; pay per call with x402 in params._meta["x402/payment"].';
    return refused(await gate.paymentRequired(route, resource, message), 'payment_required', message, await service.peekAllowance(client));
  };
}
