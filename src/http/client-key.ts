/**
 * @module Who is calling, for the free allowance: the socket address, or the
 * left-most X-Forwarded-For entry only when the operator trusts the proxy (a
 * client can write any X-Forwarded-For it likes, so trusting it is opt-in).
 */
import type { FastifyRequest } from 'fastify';

function normalize(ip: string): string {
  const s = ip.trim();
  // One client, one key: an IPv4 peer seen through a dual-stack socket is still that IPv4 address.
  return s.startsWith('::ffff:') && s.includes('.') ? s.slice(7) : s.toLowerCase();
}

export function createClientKeyResolver(trustProxy: boolean): (request: FastifyRequest) => string {
  return (request) => {
    if (trustProxy) {
      const xff = request.headers['x-forwarded-for'];
      const raw = Array.isArray(xff) ? xff[0] : xff;
      const first = raw?.split(',')[0]?.trim();
      if (first) return normalize(first);
    }
    return normalize(request.socket.remoteAddress ?? 'unknown');
  };
}
