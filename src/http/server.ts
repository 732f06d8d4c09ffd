/**
 * @module The REST service on Fastify 5: SPEC §6 routes (verify, score,
 * reputation, stored receipts, discovery, health, metrics, OpenAPI/docs), one
 * error shape on every path (including 404/405/413/415), request ids, and a
 * closing state that turns new requests away with 503 during shutdown.
 */
import { addOperationIds } from './operation-ids.js';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { Config } from '../config.js';
import { ApiError, errorBody } from '../errors.js';
import type { ErrorBody } from '../errors.js';
import { mcpServerCard, registerMcpRoutes } from '../mcp/index.js';
import type { VerifierService } from '../service/types.js';
import { admitVerification, setAllowanceHeaders } from './admission.js';
import { createClientKeyResolver } from './client-key.js';
import { hygiene } from './hygiene.js';
import { agentCard, llmsTxt, x402Manifest } from './discovery.js';
import type { DiscoveryContext } from './discovery.js';
import { toErrorBody } from './errors.js';
import { logRoutes, type LogRoutesOptions } from './log-routes.js';
import { createHttpMetrics } from './metrics.js';
import { docsUiOptions, pagesPlugin } from '../pages/plugin.js';
// x402 payments (src/payments): REST handlers, MCP admission and the built-in facilitator endpoints.
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentGate } from '../payments/gate.js';
import { createPaymentAdmission } from '../payments/mcp-admission.js';
import { handlePaidScore, handlePaidVerify, type PaidRestContext } from '../payments/rest.js';
import { paymentRequiredResponse } from '../payments/openapi.js';
import type { HttpMetrics } from './metrics.js';
import {
  agentIdParams,
  allowanceHeaders,
  errorResponses,
  errorSchema,
  logCheckpointRefSchema,
  receiptSchema,
  reputationQuery,
  reputationSchema,
  trustScoreSchema,
  verificationIdParams,
  verificationRequestSchema,
} from './schemas.js';

export interface Readiness {
  database: boolean;
  signingKey: boolean;
  /** Why the database is not ready (e.g. `disk full`), named in the 503. */
  databaseProblem?: string;
  /** Why no signing key is usable. */
  signingKeyProblem?: string;
  /** Serving, but something needs the operator (e.g. key files missing while the loaded key still signs). */
  warnings?: string[];
}

export interface HttpServerOptions {
  config: Config;
  service: VerifierService;
  /** Package version, shown in cards and docs. */
  version: string;
  /** The attestation extension (SPEC §5.3), read live from the key ring. */
  attestationExtension(): Record<string, unknown>;
  /** Whether the database answers and a signing key is loaded. */
  readiness(): Promise<Readiness>;
  /** Fastify logger setting; defaults to pino at config.logLevel. */
  logger?: FastifyServerOptions['logger'];
  /** Register the MCP adapter (default true). */
  mcp?: boolean;
  /** x402 payment gate when payments are on (verify after the allowance and score become paid). */
  payments?: PaymentGate | null;
  /** The built-in facilitator, served under /facilitator when X402_FACILITATOR_ROUTES is on (with its token). */
  localFacilitator?: FacilitatorClient | null;
  /** On close, how long in-flight requests may take before their connections are cut (default 10 s). */
  shutdownGraceMs?: number;
  /** The transparency log's routes under /log (checkpoint, key, tiles, proofs). */
  log?: LogRoutesOptions | null;
}

export interface HttpServer {
  app: FastifyInstance;
  metrics: HttpMetrics;
  /** Stop taking new requests (503) while in-flight ones finish; then closes Fastify. */
  close(): Promise<void>;
  readonly closing: boolean;
}

const VERIFY_ROUTES = ['/verify/schema', '/verify/deliverable'] as const;
const JSON_TYPE = 'application/json; charset=utf-8';

function sendError(reply: FastifyReply, body: ErrorBody): FastifyReply {
  if (body.retry_after !== undefined && !reply.hasHeader('Retry-After')) reply.header('Retry-After', String(body.retry_after));
  return reply.code(body.status).type(JSON_TYPE).send(JSON.stringify(body));
}

function trustHops(n: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < n;
}

/** Matches request paths against the registered route patterns, to tell 405 from 404. */
function createRouteIndex() {
  const routes: Array<{ method: string; re: RegExp }> = [];
  return {
    add(method: string | string[], url: string) {
      const pattern = url
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      for (const m of Array.isArray(method) ? method : [method]) routes.push({ method: m.toUpperCase(), re: new RegExp(`^${pattern}/?$`) });
    },
    methodsFor(path: string): string[] {
      return [...new Set(routes.filter((r) => r.re.test(path)).map((r) => r.method))];
    },
  };
}

export async function createHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { config, service } = options;
  const metrics = createHttpMetrics();
  const clientKey = createClientKeyResolver(config.trustProxy);
  const discovery: DiscoveryContext = { config, version: options.version, attestationExtension: options.attestationExtension };
  const routeIndex = createRouteIndex();
  let closing = false;
  // x402: with a gate, verify and score go through the payment handlers (src/payments/rest.ts).
  const paid: PaidRestContext | null = options.payments?.enabled
    ? {
        gate: options.payments,
        service,
        clientKey,
        baseUrl: config.publicBaseUrl,
        setAllowanceHeaders,
        onVerified: (signed) => metrics.verifications.inc({ result: String(signed.response.result) }),
        freeTrial: {
          mcpUrl: `${config.publicBaseUrl}/mcp`,
          client: config.trustProxy ? 'ip address (X-Forwarded-For from the trusted proxy)' : 'ip address',
        },
      }
    : null;

  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel },
    genReqId: () => randomUUID(),
    bodyLimit: config.bodyLimitBytes,
    // A hop count as Fastify applies it (the typings only list the function form): hop 0 is the socket peer.
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
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
  await app.register(hygiene, {
    corsOrigins: config.corsOrigins,
    metricsToken: config.metricsToken,
    https: config.publicBaseUrl.startsWith('https:'),
    sendError,
  });
  addOperationIds(app);

  // Hooks on every request are callback-style: an async hook costs a promise and a microtask turn per request.
  app.addHook('onRequest', (request, reply, done) => {
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
    site: { serviceName: config.serviceName, version: options.version, paymentsEnabled: Boolean(paid), freeAllowancePerDay: config.freeAllowancePerDay },
  });

  // ---- verification (raw body → the core's strict parser) ----
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // The strict I-JSON parser needs the exact bytes: hashes and signatures cover what it parses.
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

    scope.addHook('onSend', (request, reply, payload, done) => {
      // Every verify response carries the allowance headers, also errors that came before the count.
      if (reply.hasHeader('Free-Allowance-Limit')) return done(null, payload);
      let peek;
      try {
        peek = service.peekAllowance({ clientKey: clientKey(request) });
      } catch {
        return done(null, payload);
      }
      peek.then(
        (info) => {
          setAllowanceHeaders(reply, info);
          done(null, payload);
        },
        // Headers are advisory; a failing store already shows in the status code.
        () => done(null, payload),
      );
    });

    for (const url of VERIFY_ROUTES) {
      scope.post(
        url,
        {
          bodyLimit: config.bodyLimitBytes,
          // The declared body schema is documentation; the strict parser validates.
          validatorCompiler: () => () => true,
          schema: {
            summary: url === '/verify/schema' ? 'Verify an output and get a signed receipt' : 'Alias of POST /verify/schema',
            tags: ['verify'],
            body: { $ref: 'VerificationRequest#' },
            response: {
              200: { description: 'Signed receipt (pass or fail).', headers: allowanceHeaders, content: { 'application/json': { schema: { $ref: 'Receipt#' } } } },
              ...errorResponses(413, 415, 422, 429, 500, 503),
              ...(paid ? paymentRequiredResponse() : {}),
            },
          },
        },
        async (request, reply) => {
          if (paid) return handlePaidVerify(paid, request, reply);
          const admission = await admitVerification({ service, clientKey }, request, reply);
          let signed;
          try {
            signed = await service.verify(admission.parsed);
          } catch (err) {
            // An error is never charged: give the allowance unit back.
            await admission.release().catch((e: unknown) => request.log.error({ err: e }, 'allowance refund failed'));
            throw err;
          }
          metrics.verifications.inc({ result: String(signed.response.result) });
          return reply.code(200).type(JSON_TYPE).send(signed.text);
        },
      );
    }
  });

  // ---- records ----
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
        querystring: reputationQuery(config.listCap),
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

  app.get(
    '/score/:agent_id',
    {
      schema: {
        summary: 'Signed 0-100 trust score of an agent (test- agents: 422)',
        tags: ['records'],
        params: agentIdParams,
        response: { 200: { $ref: 'TrustScore#' }, ...errorResponses(422, 500, 503), ...(paid ? paymentRequiredResponse() : {}) },
      },
    },
    async (request, reply) => {
      const { agent_id } = request.params as { agent_id: string };
      if (paid) return handlePaidScore(paid, request, reply, agent_id);
      const signed = await service.score(agent_id);
      return reply.type(JSON_TYPE).send(signed.text);
    },
  );

  // ---- discovery ----
  const hidden = { schema: { hide: true } };
  app.get('/.well-known/agent-card.json', { schema: { summary: 'A2A agent card with every signing key', tags: ['discovery'] } }, async (_req, reply) =>
    reply.type(JSON_TYPE).send(JSON.stringify(agentCard(discovery))),
  );
  // These depend on the configuration only: built once, not per request (the agent card lists live keys).
  const x402Text = JSON.stringify(x402Manifest(config));
  const mcpCardText = JSON.stringify(mcpServerCard({ baseUrl: config.publicBaseUrl, serviceName: config.serviceName, version: options.version }));
  const llmsText = llmsTxt(discovery);
  app.get('/.well-known/x402', { schema: { summary: 'Advisory x402 payment manifest', tags: ['discovery'] } }, async (_req, reply) =>
    reply.type(JSON_TYPE).send(x402Text),
  );
  // Same document and headers as /mcp/server-card: public, cacheable, readable by browser-based clients.
  app.get('/.well-known/mcp/server-card.json', { schema: { summary: 'MCP server card', tags: ['discovery'] } }, async (_req, reply) =>
    reply.header('Cache-Control', 'public, max-age=300').header('Access-Control-Allow-Origin', '*').type(JSON_TYPE).send(mcpCardText),
  );
  app.get('/llms.txt', { schema: { summary: 'Plain-text guide for agents (live limits and allowance)', tags: ['discovery'] } }, async (_req, reply) =>
    reply.type('text/plain; charset=utf-8').send(llmsText),
  );
  app.get('/openapi.json', hidden, async (_req, reply) => reply.type(JSON_TYPE).send(JSON.stringify(app.swagger())));

  // ---- operations ----
  app.get('/health', { schema: { summary: 'Liveness and readiness (database reachable, signing key loaded)', tags: ['operations'] } }, async (_req, reply) => {
    let ready: Readiness;
    try {
      ready = await options.readiness();
    } catch {
      ready = { database: false, signingKey: false };
    }
    if (closing || !ready.database || !ready.signingKey) {
      // Each component that is not ready is named, with the reason, in fields[] (and in the message).
      const fields = closing
        ? [{ field: 'service', problem: 'shutting down', fix: 'send requests to another instance' }]
        : [
            ...(ready.database ? [] : [{ field: 'database', problem: ready.databaseProblem ?? 'unreachable', fix: 'restore the database (reachable, writable, with free space)' }]),
            ...(ready.signingKey ? [] : [{ field: 'signing_key', problem: ready.signingKeyProblem ?? 'no usable signing key', fix: 'restore the signing keys (see docs/operations.md)' }]),
          ];
      const why = fields.map((f) => `${f.field}: ${f.problem}`).join('; ');
      return sendError(reply, errorBody('unavailable', { message: `Not ready: ${why}.`, fields }));
    }
    const warnings = ready.warnings ?? [];
    return reply.type(JSON_TYPE).send(
      JSON.stringify({
        status: warnings.length > 0 ? 'degraded' : 'ok',
        database: 'ok',
        signing_key: 'ok',
        ...(warnings.length > 0 ? { warnings } : {}),
        version: options.version,
      }),
    );
  });
  app.get('/metrics', hidden, async (_req, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));

  if (options.log) await app.register(logRoutes, options.log);

  if (options.mcp !== false) {
    await registerMcpRoutes(app, {
      service,
      baseUrl: config.publicBaseUrl,
      serviceName: config.serviceName,
      allowedHosts: config.allowedHosts,
      clientKey,
      version: options.version,
      admit: paid ? createPaymentAdmission({ gate: paid.gate, service, baseUrl: config.publicBaseUrl, freeTrial: paid.freeTrial }) : undefined,
    });
  }
  const facilitatorToken = config.payments.facilitator.mode === 'local' ? config.payments.facilitator.routesToken : null;
  if (options.localFacilitator && facilitatorToken) {
    // Off unless the operator turns them on with a token: they make the settlement key pay gas.
    // Loaded only when used: the facilitator pulls in the EVM client stack (slow to import, ~45 MiB).
    const { registerFacilitatorRoutes } = await import('../payments/local-facilitator.js');
    await registerFacilitatorRoutes(app, options.localFacilitator, { prefix: '/facilitator', token: facilitatorToken });
  }

  await app.ready();

  return {
    app,
    metrics,
    get closing() {
      return closing;
    },
    async close() {
      closing = true;
      // A client that never reads its response must not hold the shutdown forever.
      const grace = setTimeout(() => app.server.closeAllConnections(), options.shutdownGraceMs ?? 10_000);
      grace.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(grace);
      }
    },
  };
}
