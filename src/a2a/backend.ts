/**
 * @module What the A2A endpoint asks of the service: verify a request given as
 * its own source text, or sign an agent's trust score, each through the same
 * admission as REST (strict parsing and validation first, then the client's free
 * allowance, then the signed result, durably stored). Payments are not taken
 * over A2A: where REST would ask for one, the endpoint refuses and says where to pay.
 */
import type { ErrorBody } from '../errors.js';
import { outcomeError, type AdmitContext, type Failed, type Pipeline, type Refused, type SingleSource } from '../service/pipeline.js';
import type { ClientContext } from '../service/types.js';
import { A2A_PATH } from './interface.js';

/** The error object of a refusal that asks for a payment (x402 codes, as in the 402 bodies of REST). */
export type RefusalBody = { code: string; message: string; status: number } & Record<string, unknown>;

/** What the backend answers: the signed text, or the error object A2A sends with its error. */
export type A2aAnswer = { ok: true; text: string } | { ok: false; error: ErrorBody | RefusalBody };

export interface A2aBackend {
  /** Admits, evaluates, signs and stores: the signed receipt text, or the error (422 before anything is taken, 429, 5xx, a payment needed). */
  verifyAndRecord(source: string, client: ClientContext): Promise<A2aAnswer>;
  /** The signed trust score text, or the error. */
  score(agentId: string, client: ClientContext): Promise<A2aAnswer>;
}

/** A refusal that is not one of the service's error codes (a payment would be needed over REST or MCP). */
function paymentNeeded(refused: Refused): RefusalBody {
  return {
    code: refused.code,
    message: `${refused.message} Payments are taken over REST (x402 PAYMENT-SIGNATURE) or MCP, not over A2A.`,
    status: 402,
    retryable: false,
    charged: false,
    next_actions: [{ action: 'pay_and_retry', using: 'POST /verify/schema or GET /score/{agent_id} with x402' }],
    fields: [],
    payment_required: refused.paymentRequired,
  };
}

export interface PipelineBackendOptions {
  pipeline: Pipeline;
  /** Public base URL, for the resource named in a payment request. */
  baseUrl: string;
}

/** An outcome without an answer as what A2A answers: the coded error (a failure, the 429), or a payment that has to be made elsewhere. */
function errorOf(outcome: Refused | Failed): ErrorBody | RefusalBody {
  if (outcome.kind === 'failed' || outcome.code === 'free_allowance_exhausted' || !outcome.paymentRequired) return outcomeError(outcome).toBody();
  return paymentNeeded(outcome);
}

/** The backend on the request lifecycle every transport shares (transport `a2a`). */
export function createPipelineBackend(options: PipelineBackendOptions): A2aBackend {
  const { pipeline } = options;
  async function answer(source: SingleSource, client: ClientContext, description: string): Promise<A2aAnswer> {
    const ctx: AdmitContext = {
      transport: 'a2a',
      client,
      resource: { url: `${options.baseUrl}${A2A_PATH}`, description, mimeType: 'application/json', transport: 'http', method: 'POST' },
    };
    const outcome = await pipeline.handle(source, ctx);
    return outcome.kind === 'answer' ? { ok: true, text: outcome.text } : { ok: false, error: errorOf(outcome) };
  }
  return {
    verifyAndRecord: (source, client) => answer({ operation: 'verify', source }, client, 'Verify an agent output and get an Ed25519-signed receipt'),
    score: (agentId, client) => answer({ operation: 'score', agentId }, client, 'Signed 0-100 trust score of an agent'),
  };
}
