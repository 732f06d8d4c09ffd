/**
 * @module Every error path of the REST service answers in the one error shape (docs/protocol.md#errors)
 * with no stack trace and no echo of the caller's input; discovery documents
 * (OpenAPI, docs, llms.txt, cards, metrics) are served from live configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorShape, postJson, startApp, tempDir } from './http-helpers.js';
import type { Running } from './http-helpers.js';

const valid = JSON.stringify({ task_id: 't', expected_schema: { type: 'object' }, submitted_output: { a: 1 } });
const SECRET = 'caller-secret-value-7731';

describe('HTTP: error shapes', () => {
  const tmp = tempDir();
  let srv: Running;
  beforeAll(async () => {
    srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '1', BODY_LIMIT_BYTES: '4096' });
  });
  afterAll(async () => {
    await srv?.close();
    tmp.cleanup();
  });

  async function expectError(res: Response, code: string, status: number) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const text = await res.text();
    expect(text).not.toContain(SECRET);
    const body = JSON.parse(text);
    expect(expectErrorShape(body, code, status)).toBeNull();
    return body;
  }

  it('404 unknown route', async () => {
    await expectError(await fetch(`${srv.base}/no/such/${SECRET}`), 'not_found', 404);
    await expectError(await fetch(`${srv.base}/verifications/${SECRET}`), 'not_found', 404);
  });

  it('405 known path, wrong method, with Allow', async () => {
    const res = await fetch(`${srv.base}/verify/schema`);
    expect(res.headers.get('allow')).toBe('POST');
    await expectError(res, 'method_not_allowed', 405);
    await expectError(await fetch(`${srv.base}/score/abc`, { method: 'POST' }), 'method_not_allowed', 405);
  });

  it('413 states the limit in bytes', async () => {
    const body = await expectError(await postJson(srv.base, '/verify/schema', JSON.stringify({ task_id: SECRET.repeat(300) })), 'payload_too_large', 413);
    expect(body.message).toContain('4096 bytes');
  });

  it('415 for a non-JSON content type', async () => {
    await expectError(await fetch(`${srv.base}/verify/schema`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: valid }), 'unsupported_media_type', 415);
    await expectError(await fetch(`${srv.base}/verify/schema`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' }), 'unsupported_media_type', 415);
  });

  it('422 for invalid JSON, an empty POST, validation problems, bad query', async () => {
    await expectError(await postJson(srv.base, '/verify/schema', `{"task_id": "${SECRET}",`), 'invalid_request', 422);
    await expectError(await fetch(`${srv.base}/verify/schema`, { method: 'POST' }), 'invalid_request', 422);
    const b = await expectError(await postJson(srv.base, '/verify/schema', JSON.stringify({ task_id: SECRET, unknown_field: SECRET })), 'invalid_request', 422);
    expect(b.fields.length).toBeGreaterThan(0);
    await expectError(await fetch(`${srv.base}/reputation/a?limit=0`), 'invalid_request', 422);
    const cursor = await expectError(await fetch(`${srv.base}/reputation/a?cursor=${SECRET}`), 'invalid_request', 422);
    expect(cursor.fields[0].field).toBe('cursor');
    await expectError(await fetch(`${srv.base}/score/test-x`), 'invalid_request', 422);
  });

  it('429 once the allowance is spent, with Retry-After', async () => {
    expect((await postJson(srv.base, '/verify/schema', valid)).status).toBe(200);
    const res = await postJson(srv.base, '/verify/schema', valid);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = await expectError(res, 'free_allowance_exhausted', 429);
    expect(body.retry_after).toBe(Number(res.headers.get('retry-after')));
  });

  it('discovery: OpenAPI 3.1 lists the routes, docs are local, llms.txt and x402 show live settings', async () => {
    const spec = (await (await fetch(`${srv.base}/openapi.json`)).json()) as any;
    expect(spec.openapi).toMatch(/^3\.1\./);
    for (const p of ['/verify/schema', '/verify/deliverable', '/verifications/{verification_id}', '/reputation/{agent_id}', '/score/{agent_id}', '/health', '/.well-known/agent-card.json']) {
      expect(Object.keys(spec.paths)).toContain(p);
    }
    expect(spec.paths['/verify/schema'].post.requestBody.content['application/json'].schema).toBeDefined();

    const docs = await fetch(`${srv.base}/docs`);
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html).toContain('swagger-ui');
    expect(html).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    const refs = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(2);
    for (const ref of refs) expect(ref).toMatch(/^\.?\/docs\/|^\.\//);
    for (const ref of refs) {
      const asset = await fetch(new URL(ref, `${srv.base}/docs`));
      await asset.arrayBuffer();
      expect(asset.status).toBe(200);
    }
    const init = await (await fetch(`${srv.base}/docs/static/swagger-initializer.js`)).text();
    // Code only (comments may cite web pages): no absolute URL is loaded, no online validator.
    const code = init.replace(/^\s*\/\/.*$/gm, '');
    expect(code).not.toMatch(/https?:\/\//);
    expect(code).toContain('validatorUrl: null');
    const css = await fetch(`${srv.base}/docs/static/swagger-ui.css`);
    await css.arrayBuffer();
    expect(css.status).toBe(200);

    const llms = await (await fetch(`${srv.base}/llms.txt`)).text();
    expect(llms).toContain('gets 1 free verifications per UTC day');
    expect(llms).toContain('4096 bytes');
    expect(llms).toContain('free_allowance_exhausted');
    const x402 = (await (await fetch(`${srv.base}/.well-known/x402`)).json()) as any;
    expect(x402.free_allowance.per_client_per_day).toBe(1);
    expect(x402.payments_enabled).toBe(false);

    const card = (await (await fetch(`${srv.base}/.well-known/agent-card.json`)).json()) as any;
    expect(card.supportedInterfaces[0]).toEqual({ url: `${srv.base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    expect(card.skills.map((s: any) => s.id)).toEqual(['verify_schema', 'get_verification_record']);
    expect(card.capabilities.extensions[0].params.publicKeys[0].publicKey).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    const mcpCard = (await (await fetch(`${srv.base}/.well-known/mcp/server-card.json`)).json()) as any;
    expect(JSON.stringify(mcpCard)).toContain(`${srv.base}/mcp`);

    const metrics = await (await fetch(`${srv.base}/metrics`)).text();
    expect(metrics).toMatch(/aov_http_requests_total\{method="POST",route="\/verify\/schema",status="429"\} [1-9]/);
    expect(metrics).toMatch(/aov_verifications_total\{result="pass",transport="rest"\} 1/);
    expect(metrics).toContain('aov_http_request_duration_seconds_bucket');
    // The pass receipt and every allowance unit asked for (granted or refused) waited for the SQLite writer.
    expect(metrics).toMatch(/aov_store_write_wait_seconds_count\{write="receipt"\} 1\n/);
    expect(metrics).toMatch(/aov_store_write_wait_seconds_count\{write="allowance"\} [2-9]/);
  });

  it('503 when the database is gone, without leaking anything', async () => {
    const tmp2 = tempDir();
    const other = await startApp(tmp2.dir);
    try {
      expect((await fetch(`${other.base}/health`)).status).toBe(200);
      await other.handle.store.close();
      const health = await expectError(await fetch(`${other.base}/health`), 'unavailable', 503);
      expect(health.message).toContain('database');
      const res = await fetch(`${other.base}/verifications/00000000-0000-0000-0000-000000000000`);
      const body = await expectError(res, 'unavailable', 503);
      expect(body.message).toBe('The database is unavailable (store closed); nothing was stored or charged. Try again shortly.');
      await expectError(await postJson(other.base, '/verify/schema', valid), 'unavailable', 503);
    } finally {
      await other.handle.server.close();
      tmp2.cleanup();
    }
  });
});
