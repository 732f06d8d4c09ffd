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
import type { FastifyInstance, FastifyReply } from 'fastify';
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
  if (options.corsOrigins !== false) {
    await app.register(fastifyCors, {
      origin: options.corsOrigins === '*' ? '*' : options.corsOrigins,
      credentials: false,
      methods: ['GET', 'POST', 'OPTIONS'],
      allowedHeaders: ['Content-Type', 'Authorization', 'PAYMENT-SIGNATURE', 'Mcp-Session-Id', 'Mcp-Protocol-Version'],
      exposedHeaders: EXPOSED,
      maxAge: 600,
    });
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
