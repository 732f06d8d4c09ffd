/**
 * @module The HTTP server on Fastify 5: what every route shares (one error shape
 * on every path including 404/405/413/415, request ids, metrics, OpenAPI, a
 * closing state that turns new requests away with 503 during shutdown), and the
 * route plugins by concern: verify (REST adapter of the pipeline), records,
 * discovery, operations, MCP, and any extra plugins the app adds.
 */
import { addOperationIds } from './operation-ids.js';
import { a2aRoutes } from '../a2a/index.js';
import { createPipelineBackend } from '../a2a/backend.js';
import { randomUUID } from 'node:crypto';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyServerOptions } from 'fastify';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { Config } from '../config.js';
import { errorBody } from '../errors.js';
import type { ErrorBody } from '../errors.js';
import { mcpRoutes } from '../mcp/index.js';
import type { PaymentEncoding } from '../payments/transport.js';
import type { Pipeline } from '../service/pipeline.js';
import { createClientKeyResolver } from './client-key.js';
import { hygiene } from './hygiene.js';
import { checkPathIds } from './path-ids.js';
import { discoveryRoutes } from './discovery-routes.js';
import { toErrorBody } from './errors.js';
import { logRoutes, type LogRoutesOptions } from './log-routes.js';
import { createHttpMetrics } from './metrics.js';
import { docsUiOptions, pagesPlugin } from '../pages/plugin.js';
import type { HttpMetrics } from './metrics.js';
import { operationsRoutes, type Readiness } from './operations-routes.js';
import { recordRoutes } from './record-routes.js';
import { errorSchema, logCheckpointRefSchema, receiptSchema, reputationSchema, trustScoreSchema, verificationRequestSchema } from './schemas.js';
import { batchRoutes } from './batch-routes.js';
import { verifyRoutes } from './verify-routes.js';

export type { Readiness } from './operations-routes.js';

export interface HttpServerOptions {
  config: Config;
  /** The admission pipeline every verification and score goes through. */
  pipeline: Pipeline;
  /** Metrics registry (the pipeline counts verifications into it). Default: a fresh one. */
  metrics?: HttpMetrics;
  /** Package version, shown in cards and docs. */
  version: string;
  /** The attestation extension (docs/protocol.md#keys), read live from the key ring. */
  attestationExtension(): Record<string, unknown>;
  /** Whether the database answers and a signing key is loaded. */
  readiness(): Promise<Readiness>;
  /** Fastify logger setting; defaults to pino at config.logLevel. */
  logger?: FastifyServerOptions['logger'];
  /** Register the MCP adapter (default true). */
  mcp?: boolean;
  /** The x402 encodings when payments are on (the pipeline's policy decides; these only encode). */
  payments?: PaymentEncoding | null;
  /** More route plugins (payments' facilitator, the log, pages…), registered after the built-in ones. */
  plugins?: FastifyPluginAsync[];
  /** The transparency log's routes under /log (checkpoint, key, tiles, proofs). */
  log?: LogRoutesOptions | null;
}

export interface HttpServer {
  app: FastifyInstance;
  metrics: HttpMetrics;
  /** Every route as `METHOD /url`, as registered (the CORS catch-all OPTIONS aside). */
  readonly routes: readonly string[];
  /** Stop taking new requests (503) while in-flight ones finish; then closes Fastify. */
  close(): Promise<void>;
  readonly closing: boolean;
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** On close, how long in-flight requests may take before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

function sendError(reply: FastifyReply, body: ErrorBody): FastifyReply {
  if (body.retry_after !== undefined && !reply.hasHeader('Retry-After')) reply.header('Retry-After', String(body.retry_after));
  return reply.code(body.status).type(JSON_TYPE).send(JSON.stringify(body));
}

function trustHops(n: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < n;
}

/** Matches request paths against the registered route patterns, to tell 405 from 404. */
function createRouteIndex() {
  const routes: Array<{ method: string; url: string; re: RegExp }> = [];
  return {
    add(method: string | string[], url: string) {
      const pattern = url
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      for (const m of Array.isArray(method) ? method : [method]) routes.push({ method: m.toUpperCase(), url, re: new RegExp(`^${pattern}/?$`) });
    },
    list(): string[] {
      return routes.map((r) => `${r.method} ${r.url}`);
    },
    methodsFor(path: string): string[] {
      return [...new Set(routes.filter((r) => r.re.test(path)).map((r) => r.method))];
    },
  };
}

export async function createHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { config, pipeline } = options;
  const metrics = options.metrics ?? createHttpMetrics();
  const clientKey = createClientKeyResolver(config.trustProxy);
  const routeIndex = createRouteIndex();
  let closing = false;

  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel },
    // One access-log line per request (below, when it completes) instead of Fastify's two: each line is a
    // synchronous write on the HTTP thread, and the arrival line carries nothing the completion line lacks.
    // The arrival line is still written at `debug`.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    bodyLimit: config.bodyLimitBytes,
    // A hop count as Fastify applies it (the typings only list the function form): hop 0 is the socket peer.
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    return503OnClosing: false,
    // An id of 200 code points is up to 2,400 characters once percent-encoded in a path.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 4096 },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, useDefaults: true, allErrors: false } },
    frameworkErrors(error, _request, reply) {
      void sendError(reply, toErrorBody(error, config.bodyLimitBytes));
    },
  });

  // Response schemas document the API; responses are serialized as plain JSON so
  // nothing is ever dropped or reordered by a schema-driven serializer.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addSchema(logCheckpointRefSchema);
  app.addSchema(errorSchema);
  app.addSchema(verificationRequestSchema);
  app.addSchema(receiptSchema);
  app.addSchema(trustScoreSchema);
  app.addSchema(reputationSchema);

  app.addHook('onRoute', (route) => {
    // CORS answers preflights on every path: that catch-all must not turn an unknown path's 404 into a 405.
    if (route.method === 'OPTIONS' && (route.url === '*' || route.url === '/*')) return;
    routeIndex.add(route.method, route.url);
  });
  checkPathIds(app);
  await app.register(hygiene, {
    corsOrigins: config.corsOrigins,
    metricsToken: config.metricsToken,
    https: config.publicBaseUrl.startsWith('https:'),
    sendError,
  });
  addOperationIds(app);

  // Hooks on every request are callback-style: an async hook costs a promise and a microtask turn per request.
  app.addHook('onRequest', (request, reply, done) => {
    request.log.debug({ req: request }, 'incoming request');
    reply.header('X-Request-Id', request.id);
    if (closing) {
      reply.header('Connection', 'close');
      // Answered here: the request goes no further (done is not called).
      void sendError(reply, errorBody('unavailable', { message: 'The service is shutting down; try again shortly.' }));
      return;
    }
    done();
  });

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    // Fastify times every request that has onResponse hooks (from before onRequest to the response's end).
    metrics.latency.observe({ method: request.method, route }, reply.elapsedTime / 1e3);
    request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });

  app.setErrorHandler((error, request, reply) => {
    const body = toErrorBody(error, config.bodyLimitBytes);
    if (body.status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: body.code }, 'request rejected');
    return sendError(reply, body);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = routeIndex.methodsFor(path);
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      reply.header('Allow', allowed.join(', '));
      return sendError(reply, errorBody('method_not_allowed', { message: `${request.method} is not allowed here; use ${allowed.join(', ')}.` }));
    }
    return sendError(reply, errorBody('not_found'));
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: config.serviceName,
        version: options.version,
        description:
          'Verify AI-agent structured output against a JSON Schema, bounds and cross-field rules; get an Ed25519-signed receipt verifiable offline (keys in /.well-known/agent-card.json).',
      },
      servers: [{ url: config.publicBaseUrl }],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', ...docsUiOptions(config.publicBaseUrl) });
  await app.register(pagesPlugin, {
    site: { serviceName: config.serviceName, version: options.version, paymentsEnabled: Boolean(options.payments), freeAllowancePerDay: config.freeAllowancePerDay, erc8004Enabled: config.erc8004.enabled },
    exists: {
      agent: async (id) => (await pipeline.service.reputation(id, { limit: 1 })).verifications > 0,
      receipt: async (id) => (await pipeline.service.getReceipt(id)) !== null,
    },
  });

  // One plugin per concern; a new surface adds its own plugin here.
  await app.register(verifyRoutes, {
    pipeline,
    clientKey,
    bodyLimit: config.bodyLimitBytes,
    baseUrl: config.publicBaseUrl,
    payments: options.payments ?? null,
  });
  // A2A JSON-RPC: the same pipeline, transport 'a2a'.
  await app.register(a2aRoutes, {
    backend: createPipelineBackend({ pipeline, baseUrl: config.publicBaseUrl }),
    clientKey,
    bodyLimit: config.bodyLimitBytes,
    baseUrl: config.publicBaseUrl,
  });
  await app.register(batchRoutes, {
    pipeline,
    clientKey,
    bodyLimit: config.batchBodyLimitBytes,
    maxItems: config.batchMaxItems,
    maxDepth: config.maxJsonDepth,
    baseUrl: config.publicBaseUrl,
    payments: options.payments ?? null,
  });
  await app.register(recordRoutes, { service: pipeline.service, listCap: config.listCap });
  await app.register(discoveryRoutes, { config, version: options.version, attestationExtension: options.attestationExtension });
  await app.register(operationsRoutes, { version: options.version, metrics, readiness: options.readiness, closing: () => closing });
  if (options.log) await app.register(logRoutes, options.log);
  if (options.mcp !== false) {
    await app.register(mcpRoutes, {
      pipeline,
      baseUrl: config.publicBaseUrl,
      serviceName: config.serviceName,
      allowedHosts: config.allowedHosts,
      clientKey,
      version: options.version,
      payments: options.payments ?? null,
    });
  }
  for (const plugin of options.plugins ?? []) await app.register(plugin);

  await app.ready();

  return {
    app,
    metrics,
    routes: routeIndex.list(),
    get closing() {
      return closing;
    },
    async close() {
      closing = true;
      // A client that never reads its response must not hold the shutdown forever.
      const grace = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      grace.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(grace);
      }
    },
  };
}
