/**
 * @module What the A2A endpoint asks of the service: verify a request given as
 * its own source text, or sign an agent's trust score, each through the same
 * admission as REST (strict parsing and validation first, then the client's free
 * allowance, then the signed result, durably stored). Payments are not taken
 * over A2A: where REST would ask for one, the endpoint refuses and says where to pay.
 */
import { refusalError, type AdmitContext, type Pipeline, type Refused, type SingleSource } from '../service/pipeline.js';
import type { ClientContext } from '../service/types.js';
import { A2A_PATH } from './interface.js';

export interface A2aBackend {
  /** Admits, evaluates, signs and stores: the signed receipt text. Throws ApiError (422 before anything is taken, 429, 5xx) or A2aRefusal. */
  verifyAndRecord(source: string, client: ClientContext): Promise<string>;
  /** The signed trust score text. Throws ApiError or A2aRefusal. */
  score(agentId: string, client: ClientContext): Promise<string>;
}

/** The error object of a refusal that asks for a payment (x402 codes, as in the 402 bodies of REST). */
export type RefusalBody = { code: string; message: string; status: number } & Record<string, unknown>;

/** A refusal that is not one of the service's error codes (a payment would be needed), with its error object. */
export class A2aRefusal extends Error {
  constructor(readonly body: RefusalBody) {
    super(body.message);
    this.name = 'A2aRefusal';
  }
}

function paymentNeeded(message: string): A2aRefusal {
  return new A2aRefusal({
    code: 'payment_required',
    message: `${message} Payments are taken over REST (x402 PAYMENT-SIGNATURE) or MCP, not over A2A.`,
    status: 402,
    retryable: false,
    charged: false,
    next_actions: [{ action: 'pay_and_retry', using: 'POST /verify/schema or GET /score/{agent_id} with x402' }],
    fields: [],
  });
}

export interface PipelineBackendOptions {
  pipeline: Pipeline;
  /** Public base URL, for the resource named in a payment request. */
  baseUrl: string;
}

/** A refusal of the pipeline as what A2A answers: the coded 429, or a payment that has to be made elsewhere. */
function refusalOf(refused: Refused): Error {
  if (refused.code === 'free_allowance_exhausted' || !refused.paymentRequired) return refusalError(refused);
  const refusal = paymentNeeded(refused.message);
  refusal.body.code = refused.code;
  refusal.body.payment_required = refused.paymentRequired;
  return refusal;
}

/** The backend on the request lifecycle every transport shares (transport `a2a`). */
export function createPipelineBackend(options: PipelineBackendOptions): A2aBackend {
  const { pipeline } = options;
  async function answer(source: SingleSource, client: ClientContext, description: string): Promise<string> {
    const ctx: AdmitContext = {
      transport: 'a2a',
      client,
      resource: { url: `${options.baseUrl}${A2A_PATH}`, description, mimeType: 'application/json', transport: 'http', method: 'POST' },
    };
    const outcome = await pipeline.handle(source, ctx);
    if (!outcome.admitted) throw refusalOf(outcome);
    return outcome.text;
  }
  return {
    verifyAndRecord: (source, client) => answer({ operation: 'verify', source }, client, 'Verify an agent output and get an Ed25519-signed receipt'),
    score: (agentId, client) => answer({ operation: 'score', agentId }, client, 'Signed 0-100 trust score of an agent'),
  };
}
