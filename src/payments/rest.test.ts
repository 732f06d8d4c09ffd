/**
 * @module The free branch of the x402 REST path, against a real Fastify reply:
 * a unit taken for a request whose verification then fails is given back, and
 * the Free-Allowance-* headers say so (as on the free path with payments off).
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { setAllowanceHeaders } from '../http/admission.js';
import type { ParsedRequest } from '../core/types.js';
import type { AllowanceInfo, ClientContext, VerifierService } from '../service/types.js';
import type { PaymentGate } from './gate.js';
import { handlePaidVerify } from './rest.js';

function countingService(limit: number, failVerify: boolean) {
  const used = new Map<string, number>();
  const info = (client: ClientContext, allowed: boolean): AllowanceInfo => {
    const u = used.get(client.clientKey) ?? 0;
    return { allowed, limit, used: u, remaining: Math.max(0, limit - u), resetsAt: '2026-01-02T00:00:00Z', retryAfter: 60 };
  };
  const service: Pick<VerifierService, 'parseRequest' | 'consumeAllowance' | 'peekAllowance' | 'refundAllowance' | 'verify'> = {
    parseRequest: () => ({}) as ParsedRequest,
    async consumeAllowance(client) {
      const u = used.get(client.clientKey) ?? 0;
      if (u >= limit) return info(client, false);
      used.set(client.clientKey, u + 1);
      return info(client, true);
    },
    async peekAllowance(client) {
      return info(client, (used.get(client.clientKey) ?? 0) < limit);
    },
    async refundAllowance(client) {
      used.set(client.clientKey, Math.max(0, (used.get(client.clientKey) ?? 0) - 1));
    },
    async verify() {
      if (failVerify) throw new Error('store unavailable');
      return { response: { result: 'pass' }, text: '{"result":"pass"}' };
    },
  };
  return { service: service as VerifierService, used };
}

async function serve(failVerify: boolean) {
  const { service, used } = countingService(3, failVerify);
  const gate = { config: { freeMaxBodyBytes: 4096 } } as unknown as PaymentGate;
  const app = Fastify({ logger: false });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.post('/verify/schema', (request, reply) =>
    handlePaidVerify({ gate, service, clientKey: () => 'c1', baseUrl: 'http://127.0.0.1', setAllowanceHeaders }, request, reply),
  );
  await app.ready();
  const post = () => app.inject({ method: 'POST', url: '/verify/schema', headers: { 'content-type': 'application/json' }, payload: '{"task_id":"t"}' });
  return { app, used, post };
}

describe('handlePaidVerify, free allowance branch', () => {
  it('reports the unit it took when the verification succeeds', async () => {
    const { app, used, post } = await serve(false);
    const r = await post();
    expect(r.statusCode).toBe(200);
    expect(r.headers['free-allowance-remaining']).toBe('2');
    expect(used.get('c1')).toBe(1);
    await app.close();
  });

  it('gives the unit back when the verification fails and refreshes Free-Allowance-Remaining', async () => {
    const { app, used, post } = await serve(true);
    const r = await post();
    expect(r.statusCode).toBe(500);
    expect(used.get('c1')).toBe(0);
    expect(r.headers['free-allowance-remaining']).toBe('3');
    expect(r.headers['free-allowance-limit']).toBe('3');
    await app.close();
  });
});
