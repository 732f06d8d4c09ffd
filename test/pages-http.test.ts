/**
 * @module The pages plugin over real HTTP (no browser): the shell and assets
 * with their CSP, the site meta tag, a 503 that says why when the front end is
 * not built, and /docs keeping upgrade-insecure-requests only for an HTTPS
 * public URL. Plus the in-browser receipt checker run under Node against the
 * service's own offline verifier, on real receipts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGES_CSP, pagesPlugin } from '../src/pages/plugin.js';
import { verifyReceipt } from '../src/receipts/verify-receipt.js';
import { checkReceipt, lineColumn, parseJsonText } from '../web/src/receipt-check.js';
import { EXAMPLES } from '../web/src/examples.js';
import { jsonLines, pathMatcher } from '../web/src/json-lines.js';
import { postJson, projectRoot, startApp, tempDir, type Running } from './http-helpers.js';

const site = { serviceName: 'svc <&">', version: '9.9.9', paymentsEnabled: false, freeAllowancePerDay: 7 };

describe('pages plugin', () => {
  const tmp = tempDir('aov-pages-plugin-');
  afterAll(() => tmp.cleanup());

  it('serves the shell on the page routes and hashed assets, all with the strict CSP', async () => {
    const dir = path.join(tmp.dir, 'built');
    mkdirSync(path.join(dir, 'assets'), { recursive: true });
    writeFileSync(path.join(dir, 'index.html'), '<meta name="aov-site" content="__AOV_SITE__"><script type="module" src="/assets/app-1.js"></script>');
    writeFileSync(path.join(dir, 'assets/app-1.js'), 'export {};');
    const app = Fastify({ logger: false });
    await app.register(pagesPlugin, { site, assetsDir: dir });
    for (const url of ['/', '/receipts/abc', '/agents/test-x']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(PAGES_CSP);
      expect(res.body).toContain('content="{&quot;serviceName&quot;:&quot;svc &lt;&amp;\\&quot;&gt;&quot;');
    }
    const js = await app.inject({ url: '/assets/app-1.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toContain('immutable');
    expect((await app.inject({ url: '/assets/nope.js' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/assets/..%2Findex.html' })).statusCode).toBe(404);
    expect(PAGES_CSP).not.toContain('upgrade-insecure-requests');
    expect(PAGES_CSP).toContain("default-src 'none'");
    await app.close();
  });

  it('answers an unknown agent or receipt with the shell and 404; a failed lookup leaves the page to report it', async () => {
    const dir = path.join(tmp.dir, 'built-404');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'index.html'), '<meta name="aov-site" content="__AOV_SITE__"><p>shell</p>');
    const app = Fastify({ logger: false });
    const exists = {
      agent: async (id: string) => (id === 'broken' ? Promise.reject(new Error('store down')) : id === 'seller-7'),
      receipt: async (id: string) => id === 'r-1',
    };
    await app.register(pagesPlugin, { site, assetsDir: dir, exists });
    const answers = [];
    for (const url of ['/agents/seller-7', '/agents/nobody', '/agents/broken', '/receipts/r-1', '/receipts/r-2']) {
      const res = await app.inject({ url });
      expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(res.body, url).toContain('<p>shell</p>');
      answers.push(res.statusCode);
    }
    expect(answers).toEqual([200, 404, 200, 200, 404]);
    await app.close();
  });

  it('answers 503 unavailable, saying why, when the front end is not built', async () => {
    const app = Fastify({ logger: false });
    await app.register(pagesPlugin, { site, assetsDir: path.join(tmp.dir, 'missing') });
    const res = await app.inject({ url: '/' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'unavailable', message: expect.stringContaining('npm run build') });
    await app.close();
  });
});

const BUILT = path.join(projectRoot, 'dist/web/assets');
describe.skipIf(!existsSync(BUILT))('built front end (npm run build)', () => {
  it('ships under 150 kB of gzipped JavaScript', () => {
    const js = readdirSync(BUILT).filter((f) => f.endsWith('.js'));
    expect(js.length).toBeGreaterThan(0);
    const gzipped = js.reduce((n, f) => n + gzipSync(readFileSync(path.join(BUILT, f)), { level: 9 }).length, 0);
    expect(gzipped).toBeLessThan(150 * 1024);
  });
});

describe('/docs CSP', () => {
  const runs: Array<{ app: Running; cleanup(): void }> = [];
  afterAll(async () => {
    for (const r of runs) {
      await r.app.close();
      r.cleanup();
    }
  });
  async function docsCsp(env: Record<string, string>): Promise<string> {
    const d = tempDir('aov-pages-docs-');
    const app = await startApp(d.dir, env);
    runs.push({ app, cleanup: d.cleanup });
    const res = await fetch(`${app.base}/docs/static/index.html`);
    await res.arrayBuffer();
    return res.headers.get('content-security-policy') ?? '';
  }

  it('has no upgrade-insecure-requests over plain HTTP, and keeps it when the public URL is HTTPS', async () => {
    const plain = await docsCsp({});
    expect(plain).toContain("script-src 'self'");
    expect(plain).not.toContain('upgrade-insecure-requests');
    const https = await docsCsp({ PUBLIC_BASE_URL: 'https://verifier.example.com' });
    expect(https).toContain('upgrade-insecure-requests');
  });
});

describe('in-browser receipt checker, run under Node', () => {
  let run: Running;
  let data: { dir: string; cleanup(): void };
  let card: unknown;
  const invoice = readFileSync(path.join(projectRoot, 'test/fixtures/invoice.request.json'), 'utf8');
  beforeAll(async () => {
    data = tempDir('aov-pages-check-');
    run = await startApp(data.dir);
    card = await (await fetch(`${run.base}/.well-known/agent-card.json`)).json();
  });
  afterAll(async () => {
    await run.close();
    data.cleanup();
  });

  it('gives the answers of the service verifier (it runs that verifier, traced) on genuine, tampered and mismatched receipts', async () => {
    const receipts: string[] = [];
    for (const body of [invoice, JSON.stringify({ ...JSON.parse(invoice), detail: 'compact' })]) {
      const res = await postJson(run.base, '/verify/schema', body);
      expect(res.status).toBe(200);
      receipts.push(await res.text());
    }
    const score = await fetch(`${run.base}/score/seller-one`);
    expect(score.status).toBe(200);
    receipts.push(await score.text());

    const wrongRequest = invoice.replace('"total": 135.0', '"total": 136.0');
    const cases: Array<[string, string | undefined]> = [];
    for (const r of receipts) {
      cases.push([r, undefined]);
      if (r.includes('output_hash')) cases.push([r, invoice], [r, wrongRequest], [r, '{"task_id":1}']);
      // Every single-character change inside the signature and a few in the body.
      const sig = /"signature":"([^"]+)"/.exec(r)?.[1] ?? '';
      for (const i of [0, 10, sig.length - 3]) {
        const flipped = sig.slice(0, i) + (sig[i] === 'A' ? 'B' : 'A') + sig.slice(i + 1);
        cases.push([r.replace(sig, flipped), undefined]);
      }
      cases.push([r.replace('"agent-output-verifier"', '"agent-output-verifieR"'), undefined]);
      cases.push([r.replace(/"key_version":"[^"]+"/g, '"key_version":"k-unknown"'), undefined]);
      cases.push([r.slice(0, -1), undefined]);
      cases.push([`{"a":1,"a":2,${r.slice(1)}`, undefined]);
    }
    for (const [receipt, request] of cases) {
      const ours = checkReceipt(receipt, card, request);
      const theirs = verifyReceipt(receipt, { agentCard: card }, request === undefined ? {} : { request });
      expect({ valid: ours.valid, failed: ours.failedCheck }).toEqual({
        valid: theirs.valid,
        failed: theirs.valid ? undefined : theirs.failedCheck,
      });
    }
    expect(checkReceipt(receipts[0], card).valid).toBe(true);
    const good = checkReceipt(receipts[0], card, invoice);
    expect(good.steps.map((st) => `${st.check}:${st.ok}`)).toEqual(
      ['format', 'key_not_found', 'algorithm', 'key_validity', 'signature', 'output_hash', 'schema_hash', 'rules_hash', 'request_hash'].map((c) => `${c}:true`),
    );
    expect(Object.values(good.hashes).every((h) => h !== undefined && h.computed === h.receipt)).toBe(true);
    const bad = checkReceipt(receipts[0], card, wrongRequest);
    expect(bad.failedCheck).toBe('output_hash');
    expect(bad.steps.at(-1)).toEqual({ check: 'output_hash', ok: false, detail: bad.message });
    // A syntax error is located by line and column (the page's own parse, before the verifier's).
    expect(checkReceipt(receipts[0].slice(0, -1), card).message).toMatch(/^the receipt is not valid JSON \(line 1, column \d+: /);
  });

  it('every playground example is a valid request with the verdict its title promises', async () => {
    for (const ex of EXAMPLES) {
      const res = await postJson(run.base, '/verify/schema', JSON.stringify(ex.request));
      expect(res.status, ex.id).toBe(200);
      const body = (await res.json()) as { result: string; flags_total: number };
      expect(body.result, ex.id).toBe(ex.title.includes('(passes)') || ex.title.includes('warnings only') ? 'pass' : 'fail');
      if (ex.title.includes('warnings only')) expect(body.flags_total, ex.id).toBeGreaterThan(0);
    }
  });

  it('places JSON errors by line and column', () => {
    const p = parseJsonText('{\n  "a": 1,\n  "b": ]\n}');
    expect(p).toMatchObject({ ok: false, line: 3, column: 8 });
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });

  it('matches reported paths against the concrete lines of the output', () => {
    const lines = jsonLines({ line_items: [{ line_total: 1 }, { line_total: 2 }], 'a.b': [3] });
    const re = pathMatcher('$.line_items[].line_total');
    expect(lines.filter((l) => re.test(l.path)).map((l) => l.text)).toEqual(['"line_total": 1', '"line_total": 2']);
    const bracket = pathMatcher("$['a.b'][0]");
    expect(lines.filter((l) => bracket.test(l.path)).map((l) => l.text)).toEqual(['3']);
    expect(lines.some((l) => pathMatcher('line_items[1]').test(l.path))).toBe(true);
  });
});
