/**
 * @module The security headers set from helmet's recorded output are exactly those of
 * @fastify/helmet registered with the same options, on a route, a 404 and an error reply,
 * with and without HSTS; CORS for any origin answers exactly as @fastify/cors does with
 * the options of a configured list (simple requests, preflights, bare OPTIONS with and
 * without Origin, which both leave to the routes).
 */
import fastifyCors from '@fastify/cors';
import fastifyHelmet from '@fastify/helmet';
import Fastify, { type FastifyReply } from 'fastify';
import { describe, expect, it } from 'vitest';
import { errorBody } from '../errors.js';
import { corsDelegator, helmetOptions, hygiene } from './hygiene.js';

/** Every response header but the ones that differ per request or per server. */
function stable(headers: Record<string, unknown>): Record<string, unknown> {
  const { date: _d, ...rest } = headers;
  return rest;
}

async function answers(register: (app: ReturnType<typeof Fastify>) => Promise<void>) {
  const app = Fastify({ logger: false });
  await register(app);
  app.get('/ok', async () => ({ ok: true }));
  app.get('/own', async (_req, reply) => reply.header('X-Frame-Options', 'DENY').send('x'));
  app.get('/boom', async () => {
    throw new Error('boom');
  });
  await app.ready();
  const out = [];
  for (const url of ['/ok', '/own', '/boom', '/missing']) out.push(stable((await app.inject({ method: 'GET', url })).headers));
  await app.close();
  return out;
}

describe('security headers', () => {
  for (const https of [false, true]) {
    it(`equal @fastify/helmet's (https ${https})`, async () => {
      const ours = await answers(async (app) => {
        await app.register(hygiene, { corsOrigins: false, metricsToken: null, https, sendError: (reply: FastifyReply, body: ReturnType<typeof errorBody>) => reply.code(body.status).send(body) });
      });
      const theirs = await answers(async (app) => {
        await app.register(fastifyHelmet, helmetOptions(https));
      });
      expect(ours).toEqual(theirs);
      expect(ours[0]['x-content-type-options']).toBe('nosniff');
      expect(ours[0]['cross-origin-resource-policy']).toBe('cross-origin');
      expect(ours[1]['x-frame-options']).toBe('DENY');
      expect(ours[0]['strict-transport-security'] !== undefined).toBe(https);
    });
  }
});

describe('CORS for any origin', () => {
  async function replies(register: (app: ReturnType<typeof Fastify>) => Promise<void>) {
    const app = Fastify({ logger: false });
    await register(app);
    app.get('/ok', async () => ({ ok: true }));
    app.post('/ok', async () => ({ posted: true }));
    app.get('/off', { config: { cors: false } }, async () => 'no cors');
    await app.ready();
    const origin = { origin: 'https://elsewhere.example' };
    const preflight = { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' };
    const requests = [
      { method: 'GET', url: '/ok', headers: {} },
      { method: 'GET', url: '/ok', headers: origin },
      { method: 'POST', url: '/ok', headers: origin },
      { method: 'HEAD', url: '/ok', headers: origin },
      { method: 'GET', url: '/off', headers: origin },
      { method: 'GET', url: '/missing', headers: origin },
      { method: 'DELETE', url: '/ok', headers: origin },
      { method: 'OPTIONS', url: '/ok', headers: preflight },
      { method: 'OPTIONS', url: '/anywhere/else', headers: preflight },
      { method: 'OPTIONS', url: '/ok', headers: origin },
      { method: 'OPTIONS', url: '/ok', headers: { 'access-control-request-method': 'POST' } },
      { method: 'OPTIONS', url: '/off', headers: preflight },
    ] as const;
    const out = [];
    for (const r of requests) {
      const res = await app.inject({ method: r.method, url: r.url, headers: r.headers });
      out.push({ request: `${r.method} ${r.url}`, status: res.statusCode, headers: stable(res.headers), body: res.body });
    }
    await app.close();
    return out;
  }

  it("answers as @fastify/cors with the same options", async () => {
    const sendError = (reply: FastifyReply, body: ReturnType<typeof errorBody>) => reply.code(body.status).send(body);
    const ours = await replies(async (app) => {
      await app.register(hygiene, { corsOrigins: '*', metricsToken: null, https: false, sendError });
    });
    const theirs = await replies(async (app) => {
      await app.register(hygiene, { corsOrigins: false, metricsToken: null, https: false, sendError });
      await app.register(fastifyCors, corsDelegator('*'));
    });
    // Options resolved per request make the plugin add `Vary: Origin` everywhere; with '*' it changes nothing.
    const withoutVary = (all: typeof ours) => all.map((r) => ({ ...r, headers: { ...r.headers, vary: undefined } }));
    expect(withoutVary(ours)).toEqual(withoutVary(theirs));
    expect(ours[1].headers['access-control-allow-origin']).toBe('*');
    expect(ours[7].status).toBe(204);
    // A bare OPTIONS (no Access-Control-Request-Method, or no Origin) is not a preflight: the routes answer it.
    for (const bare of [ours[9], ours[10]]) {
      expect(bare.status).toBe(404);
      expect(bare.body).not.toContain('Invalid Preflight');
      expect(bare.headers['access-control-allow-methods']).toBeUndefined();
    }
  });

  it('a configured list of origins also leaves a bare OPTIONS to the routes', async () => {
    const sendError = (reply: FastifyReply, body: ReturnType<typeof errorBody>) => reply.code(body.status).send(body);
    const app = Fastify({ logger: false });
    await app.register(hygiene, { corsOrigins: ['https://a.example'], metricsToken: null, https: false, sendError });
    app.get('/ok', async () => ({ ok: true }));
    await app.ready();
    const preflight = await app.inject({ method: 'OPTIONS', url: '/ok', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://a.example');
    const bare = await app.inject({ method: 'OPTIONS', url: '/ok', headers: { origin: 'https://a.example' } });
    expect(bare.statusCode).toBe(404);
    expect(bare.headers['access-control-allow-origin']).toBeUndefined();
    const simple = await app.inject({ method: 'GET', url: '/ok', headers: { origin: 'https://a.example' } });
    expect(simple.headers['access-control-allow-origin']).toBe('https://a.example');
    expect((await app.inject({ method: 'GET', url: '/ok', headers: { origin: 'https://b.example' } })).headers['access-control-allow-origin']).toBeUndefined();
    await app.close();
  });
});
