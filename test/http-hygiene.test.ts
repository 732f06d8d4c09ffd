/**
 * @module Operations hygiene over real HTTP: security headers on API responses
 * (and /docs still served), CORS for browser callers (any origin by default,
 * a configured list otherwise, never credentials), /metrics behind a bearer
 * token when METRICS_TOKEN is set, and unknown paths still 404 (not 405).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { postJson, startApp, tempDir } from './http-helpers.js';

const valid = JSON.stringify({ task_id: 't', expected_schema: { type: 'object' }, submitted_output: {} });

describe('HTTP hygiene', () => {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('security headers and CORS with the defaults; docs still load; 404 stays 404', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const app = await startApp(tmp.dir);
    cleanups.push(() => app.close());
    const res = await postJson(app.base, '/verify/schema', valid, { origin: 'https://elsewhere.example' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('strict-transport-security')).toBeNull();
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('access-control-expose-headers')).toContain('Free-Allowance-Remaining');

    const pre = await fetch(`${app.base}/verify/schema`, {
      method: 'OPTIONS',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');

    const docs = await fetch(`${app.base}/docs`, { redirect: 'follow' });
    expect(docs.status).toBe(200);
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await fetch(`${app.base}/no/such/path`)).status).toBe(404);
    expect((await fetch(`${app.base}/metrics`)).status).toBe(200);
  });

  it('CORS_ORIGINS restricts origins; METRICS_TOKEN guards /metrics', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const token = 'metrics-secret-0123456789';
    const app = await startApp(tmp.dir, { CORS_ORIGINS: 'https://app.example.com', METRICS_TOKEN: token });
    cleanups.push(() => app.close());
    const ok = await fetch(`${app.base}/health`, { headers: { origin: 'https://app.example.com' } });
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    const other = await fetch(`${app.base}/health`, { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();

    const anon = await fetch(`${app.base}/metrics`);
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { code: string }).code).toBe('unauthorized');
    expect((await fetch(`${app.base}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const authed = await fetch(`${app.base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(authed.status).toBe(200);
    expect(await authed.text()).toContain('aov_http_requests_total');
  });
});
