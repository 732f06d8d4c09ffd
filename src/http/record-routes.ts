/**
 * @module Free record routes: the stored receipt by id (byte-identical to the
 * original response) and an agent's paged pass/fail history. The paid trust
 * score goes through the pipeline (verify-routes.ts).
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import type { VerifierService } from '../service/types.js';
import { agentIdParams, errorResponses, reputationQuery, verificationIdParams } from './schemas.js';

export interface RecordRoutesOptions {
  service: VerifierService;
  /** Largest page of reputation history. */
  listCap: number;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export async function recordRoutes(app: FastifyInstance, options: RecordRoutesOptions): Promise<void> {
  const { service } = options;
  app.get(
    '/verifications/:verification_id',
    {
      schema: {
        summary: 'The stored signed receipt, byte-identical to the original response',
        tags: ['records'],
        params: verificationIdParams,
        response: { 200: { $ref: 'Receipt#' }, ...errorResponses(404, 422, 500, 503) },
      },
    },
    async (request, reply) => {
      const { verification_id } = request.params as { verification_id: string };
      const text = await service.getReceipt(verification_id);
      if (text === null) throw new ApiError('not_found', { message: 'No verification with this id.' });
      return reply.type(JSON_TYPE).send(text);
    },
  );

  app.get(
    '/reputation/:agent_id',
    {
      schema: {
        summary: 'Pass/fail history of an agent, newest first, paged',
        tags: ['records'],
        params: agentIdParams,
        querystring: reputationQuery(options.listCap),
        response: { 200: { $ref: 'Reputation#' }, ...errorResponses(422, 500, 503) },
      },
    },
    async (request, reply) => {
      const { agent_id } = request.params as { agent_id: string };
      const q = request.query as { limit: number; cursor?: string };
      const page = await service.reputation(agent_id, { limit: q.limit, cursor: q.cursor ?? null });
      return reply.type(JSON_TYPE).send(JSON.stringify(page));
    },
  );
}
