/**
 * @module The transparency log over HTTP, as a Fastify plugin: the signed
 * checkpoint, the note verifier key, C2SP tlog-tiles (tiles and entry bundles;
 * full ones are immutable and cached for a year), and two convenience proofs
 * (inclusion by verification id, consistency between two sizes).
 */
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, invalidRequest } from '../errors.js';
import type { TransparencyLog } from '../log/index.js';
import { parseTilePath, TILE_WIDTH } from '../log/tiles.js';
import { verificationIdParams } from './schemas.js';

export interface LogRoutesOptions {
  log: TransparencyLog;
  /** Whether a receipt with this id is stored (tells "unknown" from "not integrated yet"). */
  receiptExists(verificationId: string): Promise<boolean>;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Full tiles kept in memory; they never change, so any copy is current. */
const TILE_CACHE_MAX = 512;

export async function logRoutes(app: FastifyInstance, options: LogRoutesOptions): Promise<void> {
  const { log } = options;
  const cache = new Map<string, Buffer>();

  app.get('/log/checkpoint', { schema: { summary: 'Signed checkpoint of the transparency log (C2SP tlog-checkpoint)', tags: ['log'] } }, async (_req, reply) => {
    const head = await log.head();
    return reply.header('Cache-Control', 'no-cache').type(TEXT_TYPE).send(head.note);
  });

  app.get('/log/key', { schema: { summary: 'Verifier key of the checkpoint signatures (C2SP signed-note)', tags: ['log'] } }, async (_req, reply) =>
    reply.header('Cache-Control', 'public, max-age=3600').type(TEXT_TYPE).send(`${log.verifierKey}\n`),
  );

  app.get('/log/tile/*', { schema: { summary: 'Merkle tree tiles and entry bundles (C2SP tlog-tiles)', tags: ['log'] } }, async (request: FastifyRequest, reply: FastifyReply) => {
    const rest = (request.params as { '*': string })['*'];
    const ref = parseTilePath(rest);
    if (!ref) throw new ApiError('not_found', { message: 'Not a tile path: /log/tile/<L>/<N>[.p/<W>] or /log/tile/entries/<N>[.p/<W>].' });
    const full = ref.width === TILE_WIDTH;
    let body = full ? cache.get(rest) : undefined;
    if (!body) {
      body = await log.tile(ref);
      if (full) {
        if (cache.size >= TILE_CACHE_MAX) cache.delete(cache.keys().next().value as string);
        cache.set(rest, body);
      }
    }
    // A partial tile's bytes never change either, but it is superseded once its full tile exists.
    reply.header('Cache-Control', full ? IMMUTABLE : 'public, max-age=60').type('application/octet-stream');
    if (ref.level < 0 && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
      return reply.header('Content-Encoding', 'gzip').header('Vary', 'Accept-Encoding').send(gzipSync(body));
    }
    return reply.send(body);
  });

  app.get(
    '/log/proof/:verification_id',
    {
      schema: {
        summary: 'Index, inclusion proof and checkpoint of a receipt in the transparency log',
        tags: ['log'],
        params: verificationIdParams,
      },
    },
    async (request, reply) => {
      const { verification_id } = request.params as { verification_id: string };
      const answer = await log.proof(verification_id, () => options.receiptExists(verification_id));
      return reply.header('Cache-Control', 'no-cache').type(JSON_TYPE).send(JSON.stringify(answer));
    },
  );

  app.get(
    '/log/consistency',
    {
      schema: {
        summary: 'RFC 9162 consistency proof between two tree sizes',
        tags: ['log'],
        querystring: { type: 'object', properties: { from: { type: 'string', maxLength: 20 }, to: { type: 'string', maxLength: 20 } } },
      },
    },
    async (request, reply) => {
      const q = request.query as { from?: string; to?: string };
      const num = (v: string | undefined, field: string) => {
        if (v === undefined || !/^(0|[1-9][0-9]{0,15})$/.test(v)) {
          throw invalidRequest([{ field, problem: 'must be a tree size (a whole number)', fix: `pass ${field}=<size of a checkpoint>` }]);
        }
        return Number(v);
      };
      const answer = await log.consistency(num(q.from, 'from'), num(q.to, 'to'));
      // The proof never changes, but the answer carries the current checkpoint.
      return reply.header('Cache-Control', 'no-cache').type(JSON_TYPE).send(JSON.stringify(answer));
    },
  );
}
