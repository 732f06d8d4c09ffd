/**
 * @module Ids in URL paths, fuzzed on every route that takes one, on both stores:
 * control characters, NUL, lone surrogates (as their UTF-8-style bytes) and invalid
 * UTF-8, percent-encoded, alone or around real ids, are answered 404 `not_found` or
 * 422 `invalid_request` in the one error shape, never a 5xx (PostgreSQL refuses a NUL
 * in text: before the id rule held for paths, such a request was a 500 there). Also: an
 * OPTIONS request that is not a CORS preflight (no Origin, or no
 * Access-Control-Request-Method) gets a coded JSON error on every route.
 */
import { request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_TABLE } from '../src/errors.js';
import { expectErrorShape, postJson, startApp, tempDir } from './http-helpers.js';
import type { Running } from './http-helpers.js';
import { postgresTestTarget } from './postgres-helpers.js';

const pg = await postgresTestTarget('http-path-ids', 'aov_pathids');

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with the path sent exactly as given (fetch would normalize some of it). */
function send(base: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

const pct = (bytes: number[]) => bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** One percent-encoded piece that breaks the id rule or is not UTF-8 at all. */
const badPiece = fc.oneof(
  // C0 controls, NUL above all, and DEL.
  fc.oneof(fc.integer({ min: 0, max: 0x1f }), fc.constant(0x7f), fc.constant(0)).map((c) => pct([c])),
  // A lone surrogate, written as the three bytes UTF-8 would give it (CESU-8), e.g. %ED%A0%80.
  fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => pct([0xe0 | (u >> 12), 0x80 | ((u >> 6) & 0x3f), 0x80 | (u & 0x3f)])),
  // Invalid UTF-8: a stray continuation byte, bytes never used, an overlong NUL, a cut-off sequence.
  fc.constantFrom(pct([0xff]), pct([0xfe]), pct([0x80]), pct([0xc0, 0x80]), pct([0xe2, 0x82]), pct([0xf0, 0x9f, 0x98])),
  // A malformed escape.
  fc.constantFrom('%', '%G0', '%0'),
);

/** Ordinary text around the bad piece (percent-encoded, may be empty). */
const goodText = fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => encodeURIComponent(s));

const STORES: Array<{ name: string; env: Record<string, string>; skip: boolean }> = [
  { name: 'SQLite', env: {}, skip: false },
  { name: 'PostgreSQL', env: { DATABASE_URL: pg.url, DATABASE_SCHEMA: pg.schema }, skip: !pg.available },
];

for (const store of STORES) {
  describe.skipIf(store.skip)(`ids in paths on ${store.name}`, () => {
    const tmp = tempDir();
    let srv: Running;
    let realId = '';
    let idRoutes: string[] = [];

    beforeAll(async () => {
      srv = await startApp(tmp.dir, store.env);
      const res = await postJson(srv.base, '/verify/schema', JSON.stringify({ task_id: 'path-ids', agent_id: 'path-agent', expected_schema: { type: 'object' }, submitted_output: {} }));
      expect(res.status).toBe(200);
      realId = ((await res.json()) as { verification_id: string }).verification_id;
      idRoutes = srv.handle.server.routes.filter((r) => r.startsWith('GET ') && /[:*]/.test(r)).map((r) => r.slice(4));
    });
    afterAll(async () => {
      await srv?.close();
      if (store.name === 'PostgreSQL') await pg.dropSchema();
      tmp.cleanup();
    });

    /** The route with every parameter (and `*` tail) set to `value`. */
    const pathOf = (route: string, value: string) => route.replace(/:[a-z_]+|\*/g, value);

    async function expectCoded(path: string): Promise<void> {
      const answer = await send(srv.base, 'GET', path);
      const context = `GET ${path} -> ${answer.status} ${answer.body.slice(0, 200)}`;
      expect([404, 422], context).toContain(answer.status);
      expect(answer.headers['content-type'], context).toMatch(/^application\/json/);
      const body = JSON.parse(answer.body) as Record<string, unknown>;
      expect(expectErrorShape(body, answer.status === 404 ? 'not_found' : 'invalid_request', answer.status), context).toBeNull();
    }

    it('covers every route that takes an id', () => {
      // The routes below are the ones the issue names; a new parameterized route is fuzzed without being listed.
      for (const route of ['/verifications/:verification_id', '/receipts/:verification_id', '/log/proof/:verification_id', '/agents/:agent_id', '/reputation/:agent_id', '/score/:agent_id']) {
        expect(idRoutes).toContain(route);
      }
    });

    it('the reported cases: NUL alone, inside an id and after a real id', async () => {
      for (const route of idRoutes) {
        for (const value of ['a%00b', '%00', `${realId}%00`, `${realId}%0A`, '%ED%A0%80', '%FF', `${realId}%ED%B0%80`]) await expectCoded(pathOf(route, value));
      }
      // The real id itself still answers.
      expect((await send(srv.base, 'GET', `/verifications/${realId}`)).status).toBe(200);
      expect((await send(srv.base, 'GET', `/log/proof/${realId}`)).status).toBe(200);
      expect((await send(srv.base, 'GET', '/reputation/path-agent')).status).toBe(200);
    });

    it('fuzz: no route answers a bad id with anything but a coded 404 or 422', async () => {
      await fc.assert(
        fc.asyncProperty(fc.nat(), goodText, badPiece, goodText, fc.boolean(), async (pick, before, bad, after, nearReal) => {
          const route = idRoutes[pick % idRoutes.length] as string;
          await expectCoded(pathOf(route, `${nearReal ? realId : before}${bad}${after}`));
        }),
        { numRuns: 300 },
      );
    });

    it('an agent id breaking the rule is named in fields[], as in a body', async () => {
      const answer = await send(srv.base, 'GET', '/reputation/seller%007');
      expect(answer.status).toBe(422);
      const body = JSON.parse(answer.body) as { fields: Array<{ field: string; problem: string }> };
      expect(body.fields[0]).toMatchObject({ field: 'agent_id', problem: expect.stringContaining('control character') });
    });

    it('OPTIONS without Origin (or without Access-Control-Request-Method) on every route: a coded JSON error', async () => {
      const codes = Object.keys(ERROR_TABLE);
      const paths = [...new Set(srv.handle.server.routes.map((r) => pathOf(r.slice(r.indexOf(' ') + 1), 'x')))];
      for (const path of [...paths, '/no/such/path']) {
        const bare: Array<Record<string, string>> = [{}, { origin: 'https://elsewhere.example' }, { 'access-control-request-method': 'GET' }];
        for (const headers of bare) {
          const answer = await send(srv.base, 'OPTIONS', path, headers);
          const context = `OPTIONS ${path} ${JSON.stringify(headers)} -> ${answer.status} ${answer.body.slice(0, 200)}`;
          if (srv.handle.server.routes.includes(`OPTIONS ${path}`)) {
            // A route that takes OPTIONS itself (MCP) answers it: what it allows, or its own refusal of a
            // foreign Origin (JSON-RPC, as everything at /mcp).
            if ('origin' in headers) {
              expect(answer.status, context).toBe(403);
              expect(JSON.parse(answer.body), context).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
            } else {
              expect(answer.status, context).toBe(204);
              expect(String(answer.headers.allow), context).toContain('OPTIONS');
            }
            continue;
          }
          expect(answer.headers['content-type'], context).toMatch(/^application\/json/);
          const body = JSON.parse(answer.body) as Record<string, unknown>;
          expect(codes, context).toContain(body.code);
          expect(expectErrorShape(body, body.code as string, answer.status), context).toBeNull();
          expect([404, 405], context).toContain(answer.status);
          if (answer.status === 405) expect(String(answer.headers.allow), context).toMatch(/^[A-Z, ]+$/);
        }
      }
      // A real preflight is still answered as one.
      const preflight = await send(srv.base, 'OPTIONS', '/health', { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
    });
  });
}
