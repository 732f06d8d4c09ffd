/**
 * @module The security headers set from helmet's recorded output are exactly those of
 * @fastify/helmet registered with the same options, on a route, a 404 and an error reply,
 * with and without HSTS.
 */
import fastifyHelmet from '@fastify/helmet';
import Fastify, { type FastifyReply } from 'fastify';
import { describe, expect, it } from 'vitest';
import { errorBody } from '../errors.js';
import { helmetOptions, hygiene } from './hygiene.js';

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
