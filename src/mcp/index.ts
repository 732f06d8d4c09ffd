/**
 * @module MCP adapter entry point: the `mcpRoutes` Fastify plugin serving `POST /mcp`
 * (Streamable HTTP, stateless, official SDK) with Host/Origin checks against DNS
 * rebinding, CORS for browser-based clients, 405 for GET/DELETE (no sessions, no
 * server-initiated stream), and the server card at `/mcp/server-card(.json)`.
 * The tools go through the admission pipeline (src/service/pipeline.ts) like the
 * REST routes; x402 payments ride in `params._meta` when payments are on.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { errorBody } from '../errors.js';
import type { PaymentEncoding } from '../payments/transport.js';
import type { Pipeline } from '../service/pipeline.js';
import { checkHostAndOrigin, hostnameOfOrigin, normaliseAllowedHosts } from './host-guard.js';
import { parseEnvelope } from './envelope.js';
import { defaultServerVersion, mcpEndpointUrl, mcpServerCardHandler, type McpServerCardOptions } from './server-card.js';

export { mcpServerCard, mcpEndpointUrl, MCP_SERVER_DESCRIPTION, type McpServerCardOptions } from './server-card.js';
export {
  mcpToolDescriptors,
  TOOL_DEFINITIONS,
  TOOL_NAMES,
  type McpToolDescriptor,
  type McpToolDefinition,
  type ToolName,
} from './tool-definitions.js';

export interface McpRoutesOptions {
  pipeline: Pipeline;
  /** Public base URL of the service, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  serviceName: string;
  /**
   * Hostnames accepted in Host/Origin (DNS-rebinding protection); ports are ignored.
   * The base URL's hostname and the loopback names are always accepted; `*` disables the check.
   */
  allowedHosts: string[];
  /** Resolve the client address the same way the REST routes do (shared allowance). */
  clientKey(request: FastifyRequest): string;
  /** Server version in initialize and the server card (default: the package version). */
  version?: string;
  /** The x402 encodings when payments are on. */
  payments?: PaymentEncoding | null;
}

/**
 * The SDK's transport and the tool server, loaded by the first POST /mcp and kept: the SDK and its schema
 * library take more memory than the rest of the HTTP layer, and a server that is never asked over MCP need
 * not hold them.
 */
let mcpModules: Promise<[typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'), typeof import('./mcp-server.js')]> | undefined;
function loadMcpModules(): NonNullable<typeof mcpModules> {
  if (mcpModules === undefined) {
    const loading = Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('./mcp-server.js')] as const);
    // A failed load is tried again by the next request rather than remembered.
    loading.catch(() => {
      if (mcpModules === loading) mcpModules = undefined;
    });
    mcpModules = loading;
  }
  return mcpModules;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
const ALLOW_METHODS = 'POST, OPTIONS';
const ALLOW_HEADERS = 'Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID, Authorization, PAYMENT-SIGNATURE';
const EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, PAYMENT-RESPONSE, PAYMENT-REQUIRED';

function jsonRpcError(code: number, message: string, data?: unknown): Record<string, unknown> {
  const error: Record<string, unknown> = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: '2.0', error, id: null };
}

/** CORS headers for an allowed Origin (the guard has already refused foreign ones). */
function corsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) return {};
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': EXPOSE_HEADERS,
    Vary: 'Origin',
  };
}

function applyHeaders(raw: ServerResponse, headers: Record<string, string>): void {
  for (const [k, v] of Object.entries(headers)) raw.setHeader(k, v);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = value.split(';')[0].trim().toLowerCase();
  return type === 'application/json';
}

export async function mcpRoutes(app: FastifyInstance, options: McpRoutesOptions): Promise<void> {
  const baseHost = hostnameOfOrigin(options.baseUrl);
  const allowed = normaliseAllowedHosts([...options.allowedHosts, ...LOOPBACK_NAMES, ...(baseHost ? [baseHost] : [])]);
  const version = options.version ?? defaultServerVersion();
  const cardOptions: McpServerCardOptions = { baseUrl: options.baseUrl, serviceName: options.serviceName, version };
  const endpointUrl = mcpEndpointUrl(options.baseUrl);

  // Discovery: public, read-only, cacheable; no Host check needed (nothing to steal, nothing to change).
  await app.register(async (scope) => {
    const sendCard = mcpServerCardHandler(cardOptions);
    scope.get('/mcp/server-card', sendCard);
    scope.get('/mcp/server-card.json', sendCard);
  });

  await app.register(async (scope) => {
    // The body reaches us as bytes: the tool arguments are parsed strictly from their own
    // source text, decoded as strictly as a REST body; a non-JSON Content-Type is left to the transport's 415.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    // Errors raised before the transport runs (body too large, bad framing) answer in JSON-RPC form.
    scope.setErrorHandler((err: Error & { statusCode?: number; code?: string }, request, reply) => {
      const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
      const origin = headerValue(request.headers.origin);
      reply.headers(corsHeaders(origin));
      if (status === 413) {
        const limit = app.initialConfig.bodyLimit ?? 1048576;
        const message = `The request body is larger than the limit of ${limit} bytes.`;
        return reply.code(413).send(jsonRpcError(-32000, message, errorBody('payload_too_large', { message })));
      }
      if (status >= 500) {
        request.log.error({ err }, 'MCP request failed');
        return reply.code(500).send(jsonRpcError(-32603, 'Internal error', errorBody('internal_error')));
      }
      return reply.code(status).send(jsonRpcError(-32600, 'Invalid request'));
    });

    scope.addHook('onRequest', async (request, reply) => {
      const origin = headerValue(request.headers.origin);
      const check = checkHostAndOrigin(allowed, headerValue(request.headers.host), origin);
      if (!check.ok) {
        request.log.warn({ host: request.headers.host, origin }, 'MCP request refused: foreign Host/Origin');
        return reply
          .code(403)
          .type('application/json; charset=utf-8')
          .send(jsonRpcError(-32000, `Forbidden: ${check.reason}.`));
      }
      return undefined;
    });

    scope.options('/mcp', async (request, reply) => {
      const origin = headerValue(request.headers.origin);
      reply
        .headers(corsHeaders(origin))
        .header('Access-Control-Allow-Methods', ALLOW_METHODS)
        .header('Access-Control-Allow-Headers', ALLOW_HEADERS)
        .header('Access-Control-Max-Age', '600')
        .header('Allow', ALLOW_METHODS);
      return reply.code(204).send();
    });

    const methodNotAllowed = async (request: FastifyRequest, reply: FastifyReply) => {
      // Stateless server: no standalone SSE stream (GET) and no session to end (DELETE).
      return reply
        .code(405)
        .headers(corsHeaders(headerValue(request.headers.origin)))
        .header('Allow', ALLOW_METHODS)
        .type('application/json; charset=utf-8')
        .send(jsonRpcError(-32000, 'Method not allowed.'));
    };
    scope.get('/mcp', methodNotAllowed);
    scope.delete('/mcp', methodNotAllowed);

    scope.post('/mcp', async (request, reply) => {
      const origin = headerValue(request.headers.origin);
      let parsedBody: unknown;
      let argumentSources = new Map<string | number, string | undefined | null>();
      if (isJsonContentType(request.headers['content-type'])) {
        const body: unknown = request.body;
        const envelope = parseEnvelope(Buffer.isBuffer(body) ? body : new Uint8Array(0));
        if (envelope.ok) {
          parsedBody = envelope.value;
          argumentSources = envelope.argumentSources;
        } else {
          return reply
            .code(400)
            .headers(corsHeaders(origin))
            .type('application/json; charset=utf-8')
            .send(jsonRpcError(-32700, 'Parse error: Invalid JSON'));
        }
      }

      const clientKey = options.clientKey(request);
      const [{ StreamableHTTPServerTransport }, { createMcpServer }] = await loadMcpModules();
      const server = createMcpServer({
        pipeline: options.pipeline,
        serverName: options.serviceName,
        serverVersion: version,
        clientKey,
        endpointUrl,
        payments: options.payments ?? null,
        log: request.log,
        argumentSource: (id) => argumentSources.get(id),
      });
      // Stateless: no session ids; plain JSON responses (no SSE) since no tool streams progress.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });

      // Headers the app's hooks already set (request id, …) would be lost with the hijack: copy them over.
      const inherited = reply.getHeaders();
      reply.hijack();
      const res = reply.raw;
      for (const [name, value] of Object.entries(inherited)) if (value !== undefined) res.setHeader(name, value);
      applyHeaders(res, corsHeaders(origin));
      let closed = false;
      const cleanup = () => {
        if (closed) return;
        closed = true;
        transport.close().catch(() => undefined);
        server.close().catch(() => undefined);
      };
      res.on('close', cleanup);
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, res, parsedBody);
      } catch (err) {
        request.log.error({ err }, 'MCP transport failed');
        if (!res.headersSent) {
          res.writeHead(500, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify(jsonRpcError(-32603, 'Internal error', errorBody('internal_error'))));
        } else if (!res.writableEnded) {
          res.end();
        }
        cleanup();
      }
    });
  });
}
