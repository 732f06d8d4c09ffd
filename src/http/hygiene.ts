/**
 * @module HTTP operations hygiene, as one plugin applied to every route:
 * security headers (helmet's: nosniff, frame and referrer policies …;
 * no global Content-Security-Policy because /docs and the HTML pages set
 * their own per route), CORS for browser callers (@fastify/cors: configurable
 * origins, any by default, never credentials — the API has no cookies), and an
 * optional bearer token in front of /metrics.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import fastifyCors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../errors.js';

export interface HygieneOptions {
  /** '*' (any origin), a list of allowed origins, or false (no CORS headers). */
  corsOrigins: '*' | string[] | false;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** HSTS only when the public URL is https (a plain-http deployment must not be told to upgrade). */
  https: boolean;
  sendError(reply: FastifyReply, body: ReturnType<typeof errorBody>): FastifyReply;
}

/** Headers a browser script may read from our responses (allowance, payments, retry, request id). */
const EXPOSED = ['Free-Allowance-Remaining', 'Free-Allowance-Limit', 'Free-Allowance-Resets', 'PAYMENT-REQUIRED', 'PAYMENT-RESPONSE', 'Retry-After', 'X-Request-Id'];

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** What helmet's middleware does to a response: set a header, or remove one (X-Powered-By). */
export type HeaderOp = readonly [name: string, value: string | null];
type HelmetMiddleware = (req: unknown, res: { setHeader(name: string, value: string): void; removeHeader(name: string): void }, next: (err?: unknown) => void) => void;
// The helmet that @fastify/helmet wraps, resolved from there (the same version, one dependency).
const helmetRequire = createRequire(createRequire(import.meta.url).resolve('@fastify/helmet'));
const helmet = helmetRequire('helmet') as (options: object) => HelmetMiddleware;

/** The helmet options of every response (the same as @fastify/helmet would be registered with). */
export function helmetOptions(https: boolean): object {
  return {
    contentSecurityPolicy: false,
    // A public API and public documents (agent card, receipts) are meant to be read from other origins.
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    crossOriginEmbedderPolicy: false,
    strictTransportSecurity: https ? { maxAge: 15552000, includeSubDomains: false } : false,
  };
}

/**
 * The security headers of helmet's middleware, recorded once: its output depends only on the options,
 * while @fastify/helmet rebuilds the middleware from them on every request (and adds an async hook).
 */
export function securityHeaderOps(options: object): HeaderOp[] {
  const ops: HeaderOp[] = [];
  const recorder = {
    setHeader: (name: string, value: string) => void ops.push([name, value]),
    removeHeader: (name: string) => void ops.push([name, null]),
  };
  helmet(options)({}, recorder, (err) => {
    if (err) throw err instanceof Error ? err : new Error(String(err));
  });
  return ops;
}

const ALLOWED_METHODS = ['GET', 'POST', 'OPTIONS'];
const ALLOWED_HEADERS = ['Content-Type', 'Authorization', 'PAYMENT-SIGNATURE', 'Mcp-Session-Id', 'Mcp-Protocol-Version'];
const MAX_AGE_SECONDS = 600;

/** The @fastify/cors options of a configured list of origins (and what anyOriginCors does for any origin). */
export function corsOptions(origin: '*' | string[]) {
  return { origin, credentials: false, methods: ALLOWED_METHODS, allowedHeaders: ALLOWED_HEADERS, exposedHeaders: EXPOSED, maxAge: MAX_AGE_SECONDS };
}

/**
 * Whether a request is an OPTIONS request but not a CORS preflight (which carries both Origin and
 * Access-Control-Request-Method). Such a request is an ordinary one: CORS leaves it to the routes, so a
 * route that takes OPTIONS answers it and any other path answers 405 (with Allow) or 404 in the one
 * error shape, as with CORS off, rather than the plugin's plain-text 400.
 */
function isBareOptions(request: FastifyRequest): boolean {
  return request.raw.method === 'OPTIONS' && (!request.headers.origin || !request.headers['access-control-request-method']);
}

/**
 * @fastify/cors options resolved per request: corsOptions(origin), except for a bare OPTIONS, which gets
 * `origin: false` (the plugin then adds nothing and passes the request on to the routes).
 */
export function corsDelegator(origin: '*' | string[]) {
  const cors = corsOptions(origin);
  const bare = { origin: false };
  return () => (request: FastifyRequest, callback: (error: Error | null, options: object) => void) => callback(null, isBareOptions(request) ? bare : cors);
}

/**
 * CORS for any origin, as @fastify/cors answers with corsOptions('*') (the default setting) and a
 * bare OPTIONS left to the routes: the same headers, the same preflight (204), the same catch-all
 * OPTIONS route. Its header values are fixed strings here, where the plugin copies its options and
 * joins its lists on every request.
 */
function anyOriginCors(app: FastifyInstance): void {
  const exposed = EXPOSED.join(', ');
  const methods = ALLOWED_METHODS.join(', ');
  const allowedHeaders = ALLOWED_HEADERS.join(', ');
  const maxAge = String(MAX_AGE_SECONDS);
  app.decorateRequest('corsPreflightEnabled', false);
  app.addHook('onRequest', (request, reply, done) => {
    // A route may turn CORS off (config.cors false), as with the plugin.
    if ((request.routeOptions.config as { cors?: unknown } | undefined)?.cors === false || isBareOptions(request)) return done();
    reply.header('Access-Control-Allow-Origin', '*');
    reply.header('Access-Control-Expose-Headers', exposed);
    if (request.raw.method !== 'OPTIONS') return done();
    (request as unknown as { corsPreflightEnabled: boolean }).corsPreflightEnabled = true;
    reply.header('Access-Control-Allow-Methods', methods);
    reply.header('Access-Control-Allow-Headers', allowedHeaders);
    reply.header('Access-Control-Max-Age', maxAge);
    void reply.code(204).header('Content-Length', '0').send();
  });
  // Lets Fastify accept preflights on every path; the hook above answers them.
  app.options('*', { schema: { hide: true } }, (request, reply) => {
    if (!(request as unknown as { corsPreflightEnabled: boolean }).corsPreflightEnabled) {
      reply.callNotFound();
      return;
    }
    void reply.send();
  });
}

async function hygiene(app: FastifyInstance, options: HygieneOptions): Promise<void> {
  const ops = securityHeaderOps(helmetOptions(options.https));
  // Set on the raw response, as helmet does, before any route runs (a route may still override one).
  app.addHook('onRequest', (_request, reply, done) => {
    const res = reply.raw;
    for (let i = 0; i < ops.length; i++) {
      const [name, value] = ops[i];
      if (value === null) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    done();
  });
  if (options.corsOrigins === '*') {
    anyOriginCors(app);
  } else if (options.corsOrigins !== false) {
    await app.register(fastifyCors, corsDelegator(options.corsOrigins));
  }
  if (options.metricsToken) {
    const expected = digest(`Bearer ${options.metricsToken}`);
    app.addHook('onRequest', (request, reply, done) => {
      if (request.url !== '/metrics' && !request.url.startsWith('/metrics?')) return done();
      const given = request.headers.authorization;
      // Compared as digests: constant time and independent of the length of what was sent.
      if (typeof given === 'string' && timingSafeEqual(digest(given), expected)) return done();
      reply.header('WWW-Authenticate', 'Bearer realm="metrics"');
      void options.sendError(reply, errorBody('unauthorized', { message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.' }));
    });
  }
}
// Not encapsulated: the headers and the token check apply to every route of the app.
(hygiene as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

export { hygiene };
