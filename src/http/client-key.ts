/**
 * @module Who is calling, for the free allowance: the socket address, or, behind
 * trusted proxies (TRUST_PROXY), the right-most X-Forwarded-For address that is
 * not itself a trusted proxy. Fastify computes that address (request.ip) with
 * proxy-addr from the same setting; everything to the left of it was written by
 * the client and is never used, so a client cannot choose its own allowance key.
 */
import type { FastifyRequest } from 'fastify';
import type { TrustProxy } from '../config.js';

function normalize(ip: string): string {
  const s = ip.trim();
  // One client, one key: an IPv4 peer seen through a dual-stack socket is still that IPv4 address.
  return s.startsWith('::ffff:') && s.includes('.') ? s.slice(7) : s.toLowerCase();
}

export function createClientKeyResolver(trustProxy: TrustProxy): (request: FastifyRequest) => string {
  if (trustProxy === false) return (request) => normalize(request.socket.remoteAddress ?? 'unknown');
  return (request) => normalize(request.ip || request.socket.remoteAddress || 'unknown');
}
