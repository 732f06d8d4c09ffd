/**
 * @module HTTP routes of validator mode (registered only when it is on):
 * `GET /erc8004/status`, what the validator watches, how far it has read, its
 * queue by state and every request it did not answer with the reason; and
 * `GET /erc8004/agents/:agent_id/validations`, the on-chain answers given for an
 * agent's receipts (the agent page shows them).
 */
import type { FastifyInstance } from 'fastify';
import { agentIdParams, errorResponses } from '../http/schemas.js';
import type { ValidationQueueStore } from './queue-store.js';
import type { Erc8004Validator } from './validator.js';

export interface Erc8004RoutesOptions {
  validator: Erc8004Validator;
  queue: ValidationQueueStore;
  /** Largest list answered. */
  listCap: number;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export async function erc8004Routes(app: FastifyInstance, options: Erc8004RoutesOptions): Promise<void> {
  app.get(
    '/erc8004/status',
    { schema: { summary: 'ERC-8004 validator mode: what it watches, its queue, and the requests it did not answer (with the reason)', tags: ['erc8004'], response: errorResponses(500, 503) } },
    async (_request, reply) => reply.type(JSON_TYPE).send(JSON.stringify(await options.validator.status())),
  );
  app.get(
    '/erc8004/agents/:agent_id/validations',
    {
      schema: {
        summary: "On-chain ERC-8004 validation responses given for an agent's receipts, newest first",
        tags: ['erc8004'],
        params: agentIdParams,
        response: errorResponses(422, 500, 503),
      },
    },
    async (request, reply) => {
      const { agent_id } = request.params as { agent_id: string };
      const rows = await options.queue.erc8004OfAgent(agent_id, options.listCap);
      const validations = rows.map((r) => ({
        verification_id: r.answer?.verificationId ?? null,
        request_hash: r.requestHash,
        erc8004_agent_id: r.agentId,
        response: r.answer?.response ?? null,
        response_uri: r.answer?.responseUri ?? null,
        response_hash: r.answer?.responseHash ?? null,
        tag: r.answer?.tag ?? null,
        transaction: r.txHash,
        block: r.answerBlock,
        registry: r.registry,
      }));
      return reply.type(JSON_TYPE).send(JSON.stringify({ agent_id, validations }));
    },
  );
}
