/**
 * @module MCP adapter entry point: registers `POST /mcp` (Streamable HTTP, stateless)
 * on the service's Fastify instance. (Placeholder until the MCP server lands.)
 */
import type { FastifyInstance } from 'fastify';
import type { VerifierService } from '../service/types.js';

export interface McpRoutesOptions {
  service: VerifierService;
  /** Public base URL of the service, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  serviceName: string;
  /** Hostnames accepted in Host/Origin (DNS-rebinding protection). */
  allowedHosts: string[];
  /** Resolve the client address the same way the REST routes do (shared allowance). */
  clientKey(request: import('fastify').FastifyRequest): string;
}

export async function registerMcpRoutes(_app: FastifyInstance, _options: McpRoutesOptions): Promise<void> {
  // Placeholder: the MCP server registers its routes here.
}
