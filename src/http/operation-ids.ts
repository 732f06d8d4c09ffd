/**
 * @module OpenAPI operation ids and tags for every route, given in one place as
 * the routes are added (an onRoute hook), so generated clients get stable method
 * names and /docs groups every operation — also routes added later by other
 * plugins, which get an id derived from their method and path.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';

/** Stable ids of the public operations, by `METHOD path` (Fastify path syntax). */
const OPERATION_IDS: Readonly<Record<string, string>> = {
  'POST /verify/schema': 'verifySchema',
  'POST /verify/deliverable': 'verifyDeliverable',
  'POST /verify/batch': 'verifyBatch',
  'GET /verifications/:verification_id': 'getVerification',
  'GET /reputation/:agent_id': 'getReputation',
  'GET /score/:agent_id': 'getTrustScore',
  'GET /.well-known/agent-card.json': 'getAgentCard',
  'GET /.well-known/x402': 'getX402Manifest',
  'GET /.well-known/mcp/server-card.json': 'getMcpServerCard',
  'GET /mcp/server-card': 'getMcpServerCardShort',
  'GET /mcp/server-card.json': 'getMcpServerCardAlias',
  'GET /llms.txt': 'getLlmsTxt',
  'GET /health': 'getHealth',
  'POST /mcp': 'mcpJsonRpc',
  'GET /mcp': 'mcpGetNotAllowed',
  'DELETE /mcp': 'mcpDeleteNotAllowed',
  'OPTIONS /mcp': 'mcpPreflight',
  'POST /a2a': 'a2aJsonRpc',
  'GET /log/checkpoint': 'getLogCheckpoint',
  'GET /log/key': 'getLogKey',
  'GET /log/tile/*': 'getLogTile',
  'GET /log/proof/:verification_id': 'getLogInclusionProof',
  'GET /log/consistency': 'getLogConsistencyProof',
};

/** Tag of a path without one: its first segment (`/log/...` → `log`, `/mcp` → `mcp`). */
export function defaultTag(url: string): string {
  const first = url.split('/').filter(Boolean)[0] ?? 'service';
  return first === '.well-known' ? 'discovery' : first.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
}

/** `GET /log/proof/:verification_id` → `getLogProofVerificationId`. */
export function derivedOperationId(method: string, url: string): string {
  const words = url.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

function methods(route: RouteOptions): string[] {
  return (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase());
}

/** Adds the hook; call before any route is added. */
export function addOperationIds(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = (route.schema ?? {}) as { hide?: boolean; operationId?: string; tags?: string[] };
    if (schema.hide) return;
    const ms = methods(route).filter((m) => m !== 'HEAD');
    // One operation id per method: a route answering several methods gets none rather than a duplicate.
    if (ms.length === 1 && schema.operationId === undefined) {
      schema.operationId = OPERATION_IDS[`${ms[0]} ${route.url}`] ?? derivedOperationId(ms[0], route.url);
    }
    if (!schema.tags || schema.tags.length === 0) schema.tags = [defaultTag(route.url)];
    route.schema = schema;
  });
}
