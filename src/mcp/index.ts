/**
 * @module MCP adapter entry point: `POST /mcp` (Streamable HTTP, stateless, official
 * SDK) on the service's Fastify instance, with Host/Origin checks against DNS
 * rebinding, CORS for browser-based clients, 405 for GET/DELETE (no sessions, no
 * server-initiated stream), and the server card at `/mcp/server-card(.json)`.
 * The tools call only the VerifierService; admission (free allowance, later x402)
 * is the pluggable `admit` gate (see admission.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { errorBody } from '../errors.js';
import type { VerifierService } from '../service/types.js';
import { createAllowanceAdmission, type AdmitToolCall } from './admission.js';
import { checkHostAndOrigin, hostnameOfOrigin, normaliseAllowedHosts } from './host-guard.js';
import { parseEnvelope, type ArgumentFindings, type ArgumentValues } from './envelope.js';
import { createMcpServer } from './mcp-server.js';
import { defaultServerVersion, mcpServerCard, type McpServerCardOptions } from './server-card.js';

export { mcpServerCard, mcpEndpointUrl, MCP_SERVER_DESCRIPTION, type McpServerCardOptions } from './server-card.js';
export {
  mcpToolDescriptors,
  TOOL_DEFINITIONS,
  TOOL_NAMES,
  type McpToolDescriptor,
  type McpToolDefinition,
  type ToolName,
} from './tool-definitions.js';
export {
  createAllowanceAdmission,
  FREE_ALLOWANCE_META,
  type AdmitToolCall,
  type Admission,
  type Admitted,
  type Refused,
  type ToolCallContext,
  type WorkOutcome,
} from './admission.js';
export { receiptSummary, errorResult } from './mcp-server.js';

export interface McpRoutesOptions {
  service: VerifierService;
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
  /**
   * The gate every tool call passes after its arguments are validated. Default: the
   * free allowance (createAllowanceAdmission). The x402 adapter supplies its own.
   */
  admit?: AdmitToolCall;
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

export async function registerMcpRoutes(app: FastifyInstance, options: McpRoutesOptions): Promise<void> {
  const baseHost = hostnameOfOrigin(options.baseUrl);
  const allowed = normaliseAllowedHosts([...options.allowedHosts, ...LOOPBACK_NAMES, ...(baseHost ? [baseHost] : [])]);
  const admit = options.admit ?? createAllowanceAdmission(options.service);
  const version = options.version ?? defaultServerVersion();
  const cardOptions: McpServerCardOptions = { baseUrl: options.baseUrl, serviceName: options.serviceName, version };

  // Discovery: public, read-only, cacheable; no Host check needed (nothing to steal, nothing to change).
  await app.register(async (scope) => {
    // The card depends on the options only: serialized once.
    const card = JSON.stringify(mcpServerCard(cardOptions));
    const sendCard = async (_request: FastifyRequest, reply: FastifyReply) =>
      reply
        .header('Cache-Control', 'public, max-age=300')
        .header('Access-Control-Allow-Origin', '*')
        .type('application/json; charset=utf-8')
        .send(card);
    scope.get('/mcp/server-card', sendCard);
    scope.get('/mcp/server-card.json', sendCard);
  });

  await app.register(async (scope) => {
    // The body reaches us as text for the core's strict parser (duplicate keys, `__proto__`
    // as an ordinary key: SPEC §1); a non-JSON Content-Type is left to the transport's 415.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

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
      let findings: ArgumentFindings = new Map();
      let argumentValues: ArgumentValues = new Map();
      if (isJsonContentType(request.headers['content-type'])) {
        const envelope = parseEnvelope(typeof request.body === 'string' ? request.body : '');
        if (envelope.ok) {
          parsedBody = envelope.value;
          findings = envelope.findings;
          argumentValues = envelope.argumentValues;
        } else {
          return reply
            .code(400)
            .headers(corsHeaders(origin))
            .type('application/json; charset=utf-8')
            .send(jsonRpcError(-32700, 'Parse error: Invalid JSON'));
        }
      }

      const clientKey = options.clientKey(request);
      const server = createMcpServer({
        service: options.service,
        serverName: options.serviceName,
        serverVersion: version,
        admit,
        log: request.log,
        callContext: (tool, meta) => ({ tool, clientKey, meta, request }),
        duplicateKeys: (id) => findings.get(id) ?? [],
        rawArguments: (id) => argumentValues.get(id),
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
