/**
 * @module The MCP side of x402 (there is no official MCP package, so this small
 * adapter sits on the same gate as REST): plugs into the MCP adapter's `admit`
 * seam. A payment rides in `params._meta["x402/payment"]`; without one,
 * `verify_schema` spends the shared free allowance and, once it is spent, the
 * call is refused with an isError result carrying PaymentRequired (plus the
 * free-trial state and code in `_meta`). The trust score tool is always paid.
 * After the work, the settlement goes to `result._meta["x402/payment-response"]`.
 */
import { ApiError } from '../errors.js';
import { FREE_ALLOWANCE_META, type AdmitToolCall, type Admission, type ToolCallContext } from '../mcp/admission.js';
import type { AllowanceInfo, VerifierService } from '../service/types.js';
import type { PaidRoute } from './config.js';
import type { PaymentGate, ResourceDescription } from './gate.js';
import { MCP_PAYMENT_RESPONSE_META, mcpPaymentRequiredMeta, readMcpPayment, type PaymentRequiredCode } from './transport.js';
import type { PaymentRequired } from '@x402/core/types';

export interface PaymentAdmissionOptions {
  gate: PaymentGate;
  service: VerifierService;
  /** Public base URL; the resource is `${baseUrl}/mcp`. */
  baseUrl: string;
}

function refused(paymentRequired: PaymentRequired, code: PaymentRequiredCode, message: string, allowance: AllowanceInfo): Admission {
  return {
    admitted: false,
    structuredContent: paymentRequired as unknown as Record<string, unknown>,
    meta: mcpPaymentRequiredMeta({ code, message, allowance }),
  };
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

  return async (ctx: ToolCallContext): Promise<Admission> => {
    const route: PaidRoute = ctx.tool === 'verify_schema' ? 'verify' : 'score';
    const client = { clientKey: ctx.clientKey };
    const resource = resourceFor(ctx.tool);
    const payment = readMcpPayment(ctx.meta);

    if (payment.present) {
      const auth = await gate.authorize(route, resource, payment.payload);
      if (!auth.ok) return refused(auth.paymentRequired, 'payment_invalid', auth.message, await service.peekAllowance(client));
      return {
        admitted: true,
        async complete(outcome) {
          const settled = await gate.settle(auth.ticket, outcome?.verificationId ?? null);
          if (!settled.ok) {
            // The charge did not go through; nothing was charged. Retryable.
            throw new ApiError('unavailable', { message: settled.message, retryAfter: 1 });
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
