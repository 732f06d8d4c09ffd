/**
 * @module HTTP operations hygiene, as one plugin applied to every route:
 * security headers (@fastify/helmet: nosniff, frame and referrer policies …;
 * no global Content-Security-Policy because /docs and the HTML pages set
 * their own per route), CORS for browser callers (@fastify/cors: configurable
 * origins, any by default, never credentials — the API has no cookies), and an
 * optional bearer token in front of /metrics.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import fastifyCors from '@fastify/cors';
import fastifyHelmet from '@fastify/helmet';
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

async function hygiene(app: FastifyInstance, options: HygieneOptions): Promise<void> {
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: false,
    // A public API and public documents (agent card, receipts) are meant to be read from other origins.
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    crossOriginEmbedderPolicy: false,
    strictTransportSecurity: options.https ? { maxAge: 15552000, includeSubDomains: false } : false,
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
