/**
 * @module Admission of a free verification (payments off): validation first (an
 * invalid request is never charged nor counted), then one unit of the free
 * allowance. The x402 handlers (src/payments/rest.ts) take the unit through the
 * same `takeAllowanceUnit`, so both paths refund and report alike.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { ParsedRequest } from '../core/types.js';
import type { AllowanceInfo, ClientContext, VerifierService } from '../service/types.js';
import { allowanceExhaustedError } from '../service/verifier-service.js';

export interface AdmissionContext {
  service: VerifierService;
  clientKey(request: FastifyRequest): string;
}

export interface Admission {
  parsed: ParsedRequest;
  client: ClientContext;
  allowance: AllowanceInfo;
  /** Undo the admission (give the allowance unit back) when the work fails. */
  release(): Promise<void>;
}

/** Set the Free-Allowance-* headers of SPEC §6 on a reply. */
export function setAllowanceHeaders(reply: FastifyReply, info: AllowanceInfo): void {
  reply.header('Free-Allowance-Remaining', String(info.remaining));
  reply.header('Free-Allowance-Limit', String(info.limit));
  reply.header('Free-Allowance-Resets', info.resetsAt);
}

/** One free-allowance unit taken for a request (or refused, when `allowance.allowed` is false). */
export interface AllowanceUnit {
  allowance: AllowanceInfo;
  /** Give the unit back when the work fails, and refresh the headers so the client sees it back. Idempotent. */
  release(): Promise<void>;
}

/**
 * Take one unit of the client's free allowance and set the Free-Allowance-*
 * headers. Shared by the free path (payments off) and the x402 path's free
 * branch, so both refund and report the same way.
 */
export async function takeAllowanceUnit(
  service: Pick<VerifierService, 'consumeAllowance' | 'refundAllowance' | 'peekAllowance'>,
  client: ClientContext,
  reply: FastifyReply,
  setHeaders: (reply: FastifyReply, info: AllowanceInfo) => void = setAllowanceHeaders,
): Promise<AllowanceUnit> {
  const allowance = await service.consumeAllowance(client);
  setHeaders(reply, allowance);
  let released = !allowance.allowed;
  return {
    allowance,
    async release() {
      if (released) return;
      released = true;
      await service.refundAllowance(client);
      // The headers were set when the unit was taken; tell the client it got it back.
      setHeaders(reply, await service.peekAllowance(client));
    },
  };
}

function bodyOf(request: FastifyRequest): Buffer | string | null {
  const body = request.body as unknown;
  if (body === undefined || body === null) return null;
  if (Buffer.isBuffer(body)) return body.length === 0 ? null : body;
  if (typeof body === 'string') return body.length === 0 ? null : body;
  return null;
}

export async function admitVerification(ctx: AdmissionContext, request: FastifyRequest, reply: FastifyReply): Promise<Admission> {
  const body = bodyOf(request);
  if (body === null) {
    // With payments off there is no discovery probe to answer: an empty POST is simply invalid.
    throw new ApiError('invalid_request', {
      message: 'The request body is empty.',
      fields: [{ field: 'body', problem: 'empty', fix: 'send a JSON verification request (see /openapi.json)' }],
    });
  }
  const parsed = ctx.service.parseRequest(body);

  const client: ClientContext = { clientKey: ctx.clientKey(request) };
  const { allowance, release } = await takeAllowanceUnit(ctx.service, client, reply);
  if (!allowance.allowed) {
    reply.header('Retry-After', String(allowance.retryAfter));
    throw allowanceExhaustedError(allowance);
  }
  return { parsed, client, allowance, release };
}
