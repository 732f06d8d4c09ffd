/**
 * @module REST adapter of the admission pipeline: POST /verify/schema and its
 * alias /verify/deliverable, and GET /score/{agent_id}. It only translates:
 * raw body bytes in, PAYMENT-SIGNATURE in, and the pipeline's outcome out as a
 * status code, Free-Allowance-* headers, a 402 with PAYMENT-REQUIRED, a
 * PAYMENT-RESPONSE header, or the signed text.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PaymentEncoding } from '../payments/transport.js';
import {
  outcomeError,
  type AdmitContext,
  type Completion,
  type Failed,
  type Operation,
  type Outcome,
  type PaidResource,
  type Pipeline,
  type Refused,
  type SingleSource,
} from '../service/pipeline.js';
import type { AllowanceInfo } from '../service/types.js';
import { paymentRequiredResponse } from './payment-schemas.js';
import { allowanceHeaders, agentIdParams, errorResponses } from './schemas.js';

export interface VerifyRoutesOptions {
  pipeline: Pipeline;
  clientKey(request: FastifyRequest): string;
  bodyLimit: number;
  /** Public base URL, for PaymentRequired.resource.url. */
  baseUrl: string;
  /** The x402 encodings when payments are on. */
  payments: PaymentEncoding | null;
}

const VERIFY_ROUTES = ['/verify/schema', '/verify/deliverable'] as const;
const JSON_TYPE = 'application/json; charset=utf-8';

/** Set the Free-Allowance-* headers on a reply. */
export function setAllowanceHeaders(reply: FastifyReply, info: AllowanceInfo): void {
  reply.header('Free-Allowance-Remaining', String(info.remaining));
  reply.header('Free-Allowance-Limit', String(info.limit));
  reply.header('Free-Allowance-Resets', info.resetsAt);
}

function rawBody(request: FastifyRequest): Buffer | null {
  const body: unknown = request.body;
  return Buffer.isBuffer(body) && body.length > 0 ? body : null;
}

function resourceOf(baseUrl: string, request: FastifyRequest, operation: Operation): PaidResource {
  const path = (request.url.split('?')[0] ?? '/').replace(/\/+$/, '') || '/';
  return {
    url: `${baseUrl}${path}`,
    description: operation === 'verify' ? 'Verify an agent output and get an Ed25519-signed receipt' : 'Signed 0-100 trust score of an agent',
    mimeType: 'application/json',
    transport: 'http',
    method: operation === 'verify' ? 'POST' : 'GET',
    routePattern: operation === 'verify' ? undefined : '/score/:agent_id',
  };
}

/**
 * The admission context of a REST request. Only a payment policy reads `resource`, so it is
 * built on first read rather than for every request (a class: an object literal with a getter
 * would cost more than building the resource).
 */
class RestAdmitContext implements AdmitContext {
  readonly transport = 'rest';
  readonly client: { clientKey: string };
  private built: PaidResource | undefined = undefined;
  constructor(
    clientKey: string,
    readonly payment: AdmitContext['payment'],
    private readonly baseUrl: string,
    private readonly request: FastifyRequest,
    private readonly operation: Operation,
  ) {
    this.client = { clientKey };
  }
  get resource(): PaidResource {
    this.built ??= resourceOf(this.baseUrl, this.request, this.operation);
    return this.built;
  }
}

/**
 * Answer a request that got no answer: a failure as its coded error (through the server's error
 * handler, as every error reply); a refusal with 202 for a settlement still pending, 402 with
 * PAYMENT-REQUIRED and the free-trial state when payments are on, else the coded error (429).
 * Shared with the batch route.
 */
export function sendRefusalReply(reply: FastifyReply, refused: Refused | Failed, payments: PaymentEncoding | null): FastifyReply {
  if (refused.kind === 'failed') return reply.send(outcomeError(refused));
  setAllowanceHeaders(reply, refused.allowance);
  const { code, paymentRequired, pending } = refused;
  if (pending && payments) {
    // Not a refusal: the outcome is unknown; the buyer must retry with the same payment, not pay again.
    reply.header('Retry-After', String(pending.retryAfter)).header('Cache-Control', 'no-store');
    return reply.code(payments.settlementPendingStatus).type(JSON_TYPE).send(JSON.stringify(payments.settlementPendingBody(pending)));
  }
  if (code !== 'free_allowance_exhausted' && code !== 'settlement_pending' && paymentRequired && payments) {
    for (const [k, v] of Object.entries(payments.paymentRequiredHeaders(paymentRequired))) reply.header(k, v);
    const body = payments.paymentRequiredBody(paymentRequired, { code, message: refused.message, allowance: refused.allowance, settlement: refused.settlement });
    return reply.code(402).type(JSON_TYPE).send(JSON.stringify(body));
  }
  return reply.send(outcomeError(refused));
}

/** Answer a completed request: allowance headers, PAYMENT-RESPONSE of a paid one, the signed text. */
export function sendCompletedReply(reply: FastifyReply, completion: Completion, text: string, payments: PaymentEncoding | null): FastifyReply {
  if (completion.allowance) setAllowanceHeaders(reply, completion.allowance);
  if (completion.settlement && payments) {
    for (const [k, v] of Object.entries(payments.paymentResponseHeaders(completion.settlement))) reply.header(k, v);
  }
  return reply.code(200).type(JSON_TYPE).send(text);
}

export async function verifyRoutes(app: FastifyInstance, options: VerifyRoutesOptions): Promise<void> {
  const { pipeline, payments } = options;

  function admitContext(request: FastifyRequest, operation: Operation): AdmitContext {
    const header = request.headers['payment-signature'];
    return new RestAdmitContext(options.clientKey(request), payments ? payments.readPaymentSignature(header) : undefined, options.baseUrl, request, operation);
  }

  const send = (reply: FastifyReply, outcome: Outcome) =>
    outcome.kind === 'answer' ? sendCompletedReply(reply, outcome.completion, outcome.text, payments) : sendRefusalReply(reply, outcome, payments);

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // The strict I-JSON parser needs the exact bytes: hashes and signatures cover what it parses.
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

    scope.addHook('onSend', (request, reply, payload, done) => {
      // Every verify response carries the allowance headers, also errors that came before the count.
      if (reply.hasHeader('Free-Allowance-Limit')) return done(null, payload);
      let peek;
      try {
        peek = pipeline.peekAllowance({ clientKey: options.clientKey(request) });
      } catch {
        return done(null, payload);
      }
      peek.then(
        (info) => {
          setAllowanceHeaders(reply, info);
          done(null, payload);
        },
        // Headers are advisory; a failing store already shows in the status code.
        () => done(null, payload),
      );
    });

    for (const url of VERIFY_ROUTES) {
      scope.post(
        url,
        {
          bodyLimit: options.bodyLimit,
          // The declared body schema is documentation; the strict parser validates.
          validatorCompiler: () => () => true,
          schema: {
            summary: url === '/verify/schema' ? 'Verify an output and get a signed receipt' : 'Alias of POST /verify/schema',
            tags: ['verify'],
            body: { $ref: 'VerificationRequest#' },
            response: {
              200: { description: 'Signed receipt (pass or fail).', headers: allowanceHeaders, content: { 'application/json': { schema: { $ref: 'Receipt#' } } } },
              ...errorResponses(413, 415, 422, 429, 500, 503),
              ...(payments ? paymentRequiredResponse() : {}),
            },
          },
        },
        async (request, reply) => {
          const body = rawBody(request);
          // With payments on, a POST without a body is the x402 discovery probe.
          const source: SingleSource = body === null ? { operation: 'probe' } : { operation: 'verify', source: body };
          return send(reply, await pipeline.handle(source, admitContext(request, 'verify')));
        },
      );
    }
  });

  app.get(
    '/score/:agent_id',
    {
      schema: {
        summary: 'Signed 0-100 trust score of an agent (test- agents: 422)',
        tags: ['records'],
        params: agentIdParams,
        response: { 200: { $ref: 'TrustScore#' }, ...errorResponses(422, 500, 503), ...(payments ? paymentRequiredResponse() : {}) },
      },
    },
    async (request, reply) => {
      const { agent_id } = request.params as { agent_id: string };
      return send(reply, await pipeline.handle({ operation: 'score', agentId: agent_id }, admitContext(request, 'score')));
    },
  );
}
