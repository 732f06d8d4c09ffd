/**
 * @module The REST side of x402 for the paid routes, used by the HTTP server
 * when payments are on. Order of admission: validate the request (an invalid
 * one is a 422 — never a 402, never charged, even with a payment attached);
 * a request carrying PAYMENT-SIGNATURE takes the paid path; a body over the
 * free size limit needs payment; otherwise the free allowance; once it is spent,
 * 402. A POST without a body is the x402 discovery probe and gets the 402.
 * A paid call's receipt is handed to the gate unstored: it becomes visible only
 * once the payment is settled (a pending settlement answers 202, never "not charged").
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { isTestAgent } from '../core/trust-score.js';
import { takeAllowanceUnit } from '../http/admission.js';
import type { AllowanceInfo, ClientContext, SignedResult, VerifierService } from '../service/types.js';
import type { ReceiptRecord } from '../store/store.js';
import type { PaidRoute } from './config.js';
import type { PaymentGate, ResourceDescription } from './gate.js';
import {
  PAYMENT_SIGNATURE_HEADER,
  paymentRequiredBody,
  paymentRequiredHeaders,
  paymentResponseHeaders,
  readPaymentSignature,
  settlementPendingBody,
  SETTLEMENT_PENDING_STATUS,
  unpaidCode,
  type PaymentRequiredCode,
} from './transport.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export interface PaidRestContext {
  gate: PaymentGate;
  service: VerifierService;
  clientKey(request: FastifyRequest): string;
  /** Public base URL, for PaymentRequired.resource.url. */
  baseUrl: string;
  /** Sets the Free-Allowance-* headers. */
  setAllowanceHeaders(reply: FastifyReply, info: AllowanceInfo): void;
  /** Called with each verification that was produced (free or paid), e.g. for metrics. */
  onVerified?(signed: SignedResult): void;
  /** The MCP URL and how clients are identified, for the 402 body's `free_trial` object. */
  freeTrial?: { mcpUrl: string; client: string };
}

function rawBody(request: FastifyRequest): Buffer | string | null {
  const body = request.body as unknown;
  if (Buffer.isBuffer(body)) return body.length === 0 ? null : body;
  if (typeof body === 'string') return body.length === 0 ? null : body;
  return null;
}

function resourceOf(ctx: PaidRestContext, request: FastifyRequest, route: PaidRoute): ResourceDescription {
  const path = (request.url.split('?')[0] ?? '/').replace(/\/+$/, '') || '/';
  return {
    url: `${ctx.baseUrl}${path}`,
    description: route === 'verify' ? 'Verify an agent output and get an Ed25519-signed receipt' : 'Signed 0-100 trust score of an agent',
    mimeType: 'application/json',
    transport: 'http',
    method: route === 'verify' ? 'POST' : 'GET',
    routePattern: route === 'verify' ? undefined : '/score/:agent_id',
  };
}

async function send402(
  reply: FastifyReply,
  paymentRequired: PaymentRequired,
  code: PaymentRequiredCode,
  message: string,
  allowance: AllowanceInfo,
  ctx: PaidRestContext,
  settlement?: SettleResponse | null,
): Promise<FastifyReply> {
  ctx.setAllowanceHeaders(reply, allowance);
  for (const [k, v] of Object.entries(paymentRequiredHeaders(paymentRequired))) reply.header(k, v);
  return reply.code(402).type(JSON_TYPE).send(JSON.stringify(paymentRequiredBody(paymentRequired, { code, message, allowance, settlement, freeTrial: ctx.freeTrial })));
}

function sendPending(reply: FastifyReply, pending: Parameters<typeof settlementPendingBody>[0]): FastifyReply {
  reply.header('Retry-After', String(pending.retryAfter)).header('Cache-Control', 'no-store');
  return reply.code(SETTLEMENT_PENDING_STATUS).type(JSON_TYPE).send(JSON.stringify(settlementPendingBody(pending)));
}

const UNPAID_MESSAGES: Record<string, string> = {
  free_trial_exhausted: 'The free daily allowance for this client is used up; pay per call with x402 (see PAYMENT-REQUIRED).',
  payment_required: 'This request needs payment (x402, see PAYMENT-REQUIRED).',
};

/**
 * Run a paid call: verify + reserve, do the work (its receipt not stored yet), then let
 * the gate store it pending, settle, and publish it only if the money moved. Work errors
 * release the reservation and propagate (errors are never charged).
 */
async function runPaid(
  ctx: PaidRestContext,
  request: FastifyRequest,
  reply: FastifyReply,
  route: PaidRoute,
  payment: unknown,
  client: ClientContext,
  work: () => Promise<{ signed: SignedResult; record: ReceiptRecord | null }>,
): Promise<FastifyReply> {
  const resource = resourceOf(ctx, request, route);
  const auth = await ctx.gate.authorize(route, resource, payment);
  if (!auth.ok) {
    if (auth.reason === 'paid_receipt') {
      // A retry after a pending settlement that went through: the receipt that payment bought.
      for (const [k, v] of Object.entries(paymentResponseHeaders(auth.settlement))) reply.header(k, v);
      return reply.code(200).type(JSON_TYPE).send(auth.receipt);
    }
    if (auth.reason === 'settlement_pending') return sendPending(reply, auth.pending);
    const allowance = await ctx.service.peekAllowance(client);
    return send402(reply, auth.paymentRequired, 'payment_invalid', auth.message, allowance, ctx);
  }
  let done: { signed: SignedResult; record: ReceiptRecord | null };
  try {
    done = await work();
  } catch (err) {
    await ctx.gate.cancel(auth.ticket, 'work_failed').catch((e: unknown) => request.log.error({ err: e }, 'payment release failed'));
    throw err;
  }
  const settled = await ctx.gate.settle(auth.ticket, done.record);
  if (!settled.ok) {
    if (settled.pending) return sendPending(reply, settled.pending);
    const allowance = await ctx.service.peekAllowance(client);
    return send402(reply, settled.paymentRequired, 'settlement_failed', settled.message, allowance, ctx, settled.settlement);
  }
  if (route === 'verify') ctx.onVerified?.(done.signed);
  for (const [k, v] of Object.entries(paymentResponseHeaders(settled.settlement))) reply.header(k, v);
  return reply.code(200).type(JSON_TYPE).send(done.signed.text);
}

/** POST /verify/schema and /verify/deliverable with payments on. */
export async function handlePaidVerify(ctx: PaidRestContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const client: ClientContext = { clientKey: ctx.clientKey(request) };
  const body = rawBody(request);
  if (body === null) {
    // The x402 discovery probe.
    const allowance = await ctx.service.peekAllowance(client);
    const code = unpaidCode(allowance);
    const pr = await ctx.gate.paymentRequired('verify', resourceOf(ctx, request, 'verify'), UNPAID_MESSAGES[code]);
    return send402(reply, pr, code, UNPAID_MESSAGES[code], allowance, ctx);
  }
  // Validation first: an invalid request is a 422 even when it carries a payment.
  const parsed = ctx.service.parseRequest(body);
  const payment = readPaymentSignature(request.headers[PAYMENT_SIGNATURE_HEADER.toLowerCase()]);
  if (payment.present) {
    return runPaid(ctx, request, reply, 'verify', payment.payload, client, () => ctx.service.issue(parsed));
  }
  const size = Buffer.isBuffer(body) ? body.length : Buffer.byteLength(body);
  if (size > ctx.gate.config.freeMaxBodyBytes) {
    const allowance = await ctx.service.peekAllowance(client);
    const message = `Bodies over ${ctx.gate.config.freeMaxBodyBytes} bytes are not covered by the free allowance; pay per call with x402 (see PAYMENT-REQUIRED).`;
    const pr = await ctx.gate.paymentRequired('verify', resourceOf(ctx, request, 'verify'), message);
    return send402(reply, pr, unpaidCode(allowance), message, allowance, ctx);
  }
  const { allowance, release } = await takeAllowanceUnit(ctx.service, client, reply, ctx.setAllowanceHeaders);
  if (!allowance.allowed) {
    const pr = await ctx.gate.paymentRequired('verify', resourceOf(ctx, request, 'verify'), UNPAID_MESSAGES.free_trial_exhausted);
    return send402(reply, pr, 'free_trial_exhausted', UNPAID_MESSAGES.free_trial_exhausted, allowance, ctx);
  }
  let signed: SignedResult;
  try {
    signed = await ctx.service.verify(parsed);
  } catch (err) {
    await release().catch((e: unknown) => request.log.error({ err: e }, 'allowance refund failed'));
    throw err;
  }
  ctx.onVerified?.(signed);
  return reply.code(200).type(JSON_TYPE).send(signed.text);
}

/** GET /score/{agent_id} with payments on: always paid. */
export async function handlePaidScore(ctx: PaidRestContext, request: FastifyRequest, reply: FastifyReply, agentId: string): Promise<FastifyReply> {
  // Test agents are never scored: that 422 comes before any payment question.
  if (isTestAgent(agentId)) await ctx.service.score(agentId);
  const client: ClientContext = { clientKey: ctx.clientKey(request) };
  const payment = readPaymentSignature(request.headers[PAYMENT_SIGNATURE_HEADER.toLowerCase()]);
  if (payment.present) {
    return runPaid(ctx, request, reply, 'score', payment.payload, client, async () => ({ signed: await ctx.service.score(agentId), record: null }));
  }
  const allowance = await ctx.service.peekAllowance(client);
  const pr = await ctx.gate.paymentRequired('score', resourceOf(ctx, request, 'score'), UNPAID_MESSAGES.payment_required);
  return send402(reply, pr, 'payment_required', 'The trust score is a paid route; pay per call with x402 (see PAYMENT-REQUIRED).', allowance, ctx);
}
