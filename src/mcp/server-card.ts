/**
 * @module The MCP server card: what a client or registry can learn about this
 * server without connecting (identity, Streamable HTTP endpoint, tools with their
 * input schemas). Follows the MCP server-card draft; carries both the newer
 * `remotes[]` and the earlier `transport` / `serverInfo` forms because the draft
 * is still moving and clients read either.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { VERSION } from '../version.js';
import { TOOL_DEFINITIONS } from './tool-definitions.js';

export interface McpServerCardOptions {
  /** Public base URL of the service, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  serviceName: string;
  /** Defaults to the package version. */
  version?: string;
}

/** The package version. */
export function defaultServerVersion(): string {
  return VERSION;
}

/**
 * The protocol versions the SDK's server negotiates (its SUPPORTED_PROTOCOL_VERSIONS), newest first. Written
 * here so that serving the card does not load the SDK, which the server loads at the first MCP request only;
 * a test keeps the two equal.
 */
export const MCP_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

export const MCP_SERVER_DESCRIPTION =
  "Verify an AI agent's JSON output against a JSON Schema, numeric bounds and cross-field rules before paying for it " +
  'or sending it; get a deterministic verdict with an Ed25519-signed receipt verifiable offline, and agents\' signed trust scores.';

/** Base URL without a trailing slash. */
function trimBase(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}

export function mcpEndpointUrl(baseUrl: string): string {
  return `${trimBase(baseUrl)}/mcp`;
}

export function mcpServerCard(options: McpServerCardOptions): Record<string, unknown> {
  const version = options.version ?? defaultServerVersion();
  const url = mcpEndpointUrl(options.baseUrl);
  return {
    name: options.serviceName,
    title: options.serviceName,
    version,
    description: MCP_SERVER_DESCRIPTION,
    websiteUrl: trimBase(options.baseUrl),
    serverInfo: { name: options.serviceName, version },
    transport: { type: 'streamable-http', url, endpoint: '/mcp' },
    remotes: [{ type: 'streamable-http', url, supportedProtocolVersions: [...MCP_PROTOCOL_VERSIONS] }],
    protocolVersions: [...MCP_PROTOCOL_VERSIONS],
    capabilities: { tools: { listChanged: false } },
    authentication: { required: false, schemes: [] },
    tools: TOOL_DEFINITIONS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: structuredClone(t.inputSchema),
      outputSchema: structuredClone(t.outputSchema),
      annotations: { ...t.annotations },
    })),
    _meta: {
      'agent-output-verifier/links': {
        agentCard: `${trimBase(options.baseUrl)}/.well-known/agent-card.json`,
        openapi: `${trimBase(options.baseUrl)}/openapi.json`,
        llms: `${trimBase(options.baseUrl)}/llms.txt`,
      },
    },
  };
}

/**
 * The one handler that serves the card (at /mcp/server-card, /mcp/server-card.json
 * and /.well-known/mcp/server-card.json): public, cacheable, readable by
 * browser-based clients. The card depends on the options only, so it is serialized once.
 */
export function mcpServerCardHandler(options: McpServerCardOptions): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  const card = JSON.stringify(mcpServerCard(options));
  return async (_request, reply) =>
    reply.header('Cache-Control', 'public, max-age=300').header('Access-Control-Allow-Origin', '*').type('application/json; charset=utf-8').send(card);
}
