/**
 * @module Discovery routes: the A2A agent card (live: it lists every signing
 * key), the advisory x402 manifest, /llms.txt and the MCP server card at its
 * well-known path. Documents that depend on the configuration only are built once.
 */
import type { FastifyInstance } from 'fastify';
import { mcpServerCardHandler } from '../mcp/server-card.js';
import { agentCard, llmsTxt, x402Manifest, type DiscoveryContext } from './discovery.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export async function discoveryRoutes(app: FastifyInstance, ctx: DiscoveryContext): Promise<void> {
  const { config } = ctx;
  app.get('/.well-known/agent-card.json', { schema: { summary: 'A2A agent card with every signing key', tags: ['discovery'] } }, async (_req, reply) =>
    reply.type(JSON_TYPE).send(JSON.stringify(agentCard(ctx))),
  );
  const x402Text = JSON.stringify(x402Manifest(config));
  const llmsText = llmsTxt(ctx);
  app.get('/.well-known/x402', { schema: { summary: 'Advisory x402 payment manifest', tags: ['discovery'] } }, async (_req, reply) =>
    reply.type(JSON_TYPE).send(x402Text),
  );
  app.get(
    '/.well-known/mcp/server-card.json',
    { schema: { summary: 'MCP server card', tags: ['discovery'] } },
    mcpServerCardHandler({ baseUrl: config.publicBaseUrl, serviceName: config.serviceName, version: ctx.version }),
  );
  app.get('/llms.txt', { schema: { summary: 'Plain-text guide for agents (live limits and allowance)', tags: ['discovery'] } }, async (_req, reply) =>
    reply.type('text/plain; charset=utf-8').send(llmsText),
  );
}
