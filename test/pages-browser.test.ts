/**
 * @module The pages for people in a real browser: Debian's Chromium driven by
 * playwright-core against the real server on loopback. Checks the playground
 * verdicts, in-browser receipt verification (with the API blocked after load),
 * the agent page's chart, /docs on a non-localhost host over plain HTTP, every
 * page at a phone's width (390 px), and that no page requests anything from another origin. Saves screenshots to
 * artifacts/. Without a browser the suite is skipped with the reason, unless
 * REQUIRE_BROWSER=1 (CI), where a missing browser fails.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { postJson, projectRoot, startApp, tempDir, type Running } from './http-helpers.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const REQUIRED = process.env.REQUIRE_BROWSER === '1';
const HAVE_BROWSER = existsSync(CHROMIUM);
const SKIP_REASON = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH); REQUIRE_BROWSER=1 makes this a failure`;
const ARTIFACTS = path.join(projectRoot, 'artifacts');
const HOST = 'aov.test';

if (!HAVE_BROWSER && !REQUIRED) console.warn(`pages-browser tests skipped: ${SKIP_REASON}`);

/**
 * Chromium logs every 4xx a page's fetch gets as a console error. The tests provoke two on purpose, and the
 * pages show them as results: 422 (a schema typo under strict schema) and 404 (an unknown receipt).
 */
const provokedRefusal = (text: string) => /^Failed to load resource: the server responded with a status of (404|422) /.test(text);

const invoice = readFileSync(path.join(projectRoot, 'test/fixtures/invoice.request.json'), 'utf8');

describe.skipIf(!HAVE_BROWSER && !REQUIRED)('pages in Chromium', () => {
  let browser: Browser;
  let context: BrowserContext;
  let app: Running;
  let data: { dir: string; cleanup(): void };
  let port: number;
  const requests: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    if (!HAVE_BROWSER) throw new Error(`REQUIRE_BROWSER=1 but ${SKIP_REASON}`);
    // The server serves the built front end; build it when this checkout has not been built yet.
    if (!existsSync(path.join(projectRoot, 'dist/web/index.html'))) {
      execFileSync(path.join(projectRoot, 'node_modules/.bin/vite'), ['build', '--config', 'web/vite.config.ts'], { cwd: projectRoot, stdio: 'inherit' });
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    data = tempDir('aov-pages-');
    app = await startApp(data.dir);
    port = Number(new URL(app.base).port);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--host-resolver-rules=MAP ${HOST} 127.0.0.1`,
      ],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.on('request', (r) => requests.push(r.url()));
    context.on('console', (m) => {
      if (m.type() !== 'error') return;
      // Chromium's notice that an isolation header (COOP, Origin-Agent-Cluster) does not apply on a plain-HTTP
      // origin is not an error of the page: such headers are harmless there, and the pages must work over HTTP.
      if (/(Cross-Origin-Opener-Policy|Origin-Agent-Cluster) header has been ignored/.test(m.text())) return;
      if (provokedRefusal(m.text())) return;
      consoleErrors.push(`${m.location().url}: ${m.text()}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    data?.cleanup();
  });

  async function open(url: string): Promise<Page> {
    const page = await context.newPage();
    page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
    await page.goto(url);
    return page;
  }

  it('playground: the invoice example fails on sum_equals with the line totals highlighted; total 129.5 passes', async () => {
    const page = await open(`${app.base}/`);
    await expect.poll(() => page.locator('#output').inputValue()).toContain('"total": 135');
    await page.click('#verify');
    const verdict = page.locator('#verdict');
    await verdict.waitFor();
    expect(await verdict.getAttribute('data-result')).toBe('fail');
    expect(await page.locator('code.blocking').allTextContents()).toEqual(['consistency:sum_equals']);
    const row = page.locator('tr[data-check="consistency:sum_equals"]');
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain('$.line_items[].line_total');
    const hits = page.locator('.json-view .jl.hit');
    expect(await hits.count()).toBe(2);
    for (const text of await hits.locator('.code').allTextContents()) expect(text).toMatch(/"line_total": (87|42\.5)/);
    expect(await hits.first().getAttribute('data-checks')).toBe('consistency:sum_equals');
    expect(await page.locator('table.scores').textContent()).toContain('22 / 22 passed');
    // The sum's hint carries its candidate repair (the total, or one of the lines).
    expect(await page.locator('.hints .repair[data-certainty="candidate"]').count()).toBe(1);
    expect(await page.locator('#allowance').textContent()).toMatch(/Free allowance: \d+ of 1000/);
    await page.screenshot({ path: path.join(ARTIFACTS, 'playground.png'), fullPage: true });

    // A JSON error shows its line and column as it is typed, and blocks Verify.
    const rules = await page.locator('#rules').inputValue();
    await page.fill('#rules', rules.replace('"sum_equals",', '"sum_equals"'));
    expect(await page.locator('#rules-error').textContent()).toMatch(/^Line 4, column \d+: /);
    expect(await page.locator('#verify').isDisabled()).toBe(true);
    await page.fill('#rules', rules);

    // By label and keyboard: the editor is usable without a mouse.
    const outputField = page.getByRole('textbox', { name: /^Submitted output/ });
    const output = await outputField.inputValue();
    await outputField.fill(output.replace('"total": 135', '"total": 129.5'));
    await outputField.press('Control+Enter');
    await expect.poll(() => page.locator('#verdict').getAttribute('data-result')).toBe('pass');
    expect(await page.locator('.json-view .jl.hit').count()).toBe(0);
    await page.close();
  });

  it('playground: a schema typo is an error while strict schema is on (the default); off, the pass is amber with its warning count', async () => {
    const page = await open(`${app.base}/`);
    await page.selectOption('#example', 'invoice-fixed');
    expect(await page.locator('#strict_schema').isChecked()).toBe(true);
    const schema = await page.locator('#schema').inputValue();
    expect(schema).toContain('"minimum": 1');
    await page.fill('#schema', schema.replace('"minimum": 1', '"minimun": 1'));
    await page.click('#verify');
    await expect.poll(() => page.locator('#verdict').getAttribute('class')).toContain('error');
    expect(await page.locator('#verdict').textContent()).toContain('expected_schema.properties.line_items.items.properties.qty.minimun');

    await page.locator('#strict_schema').uncheck();
    await page.click('#verify');
    await expect.poll(() => page.locator('#verdict').getAttribute('data-result')).toBe('pass');
    expect(await page.locator('#verdict').getAttribute('data-schema-warnings')).toBe('1');
    const badge = page.locator('#verdict-title .badge');
    expect(await badge.textContent()).toBe('pass — 1 schema warning');
    expect(await badge.getAttribute('class')).toBe('badge warn');
    expect(await page.locator('#schema-warnings').isVisible()).toBe(true);
    await page.screenshot({ path: path.join(ARTIFACTS, 'playground-schema-warning.png'), fullPage: true });
    await page.close();
  });

  it('receipt page: the signature is valid in the page; a changed byte or request is named by the failing check, with the API blocked', async () => {
    const res = await postJson(app.base, '/verify/schema', invoice);
    expect(res.status).toBe(200);
    const receiptText = await res.text();
    const id = (JSON.parse(receiptText) as { verification_id: string }).verification_id;

    const page = await open(`${app.base}/receipts/${id}`);
    const stored = page.locator('#stored-check');
    await stored.waitFor();
    expect(await stored.getAttribute('data-valid')).toBe('true');
    expect(await stored.textContent()).toContain('signature valid');
    expect(await page.locator('table.hashes').textContent()).toContain((JSON.parse(receiptText) as { request_hash: string }).request_hash);
    await page.screenshot({ path: path.join(ARTIFACTS, 'receipt.png'), fullPage: true });

    // From here on the page is offline from the API: every check below runs in the page.
    const blocked: string[] = [];
    await page.route('**/*', (route) => {
      blocked.push(route.request().url());
      return route.abort();
    });

    const check = async (receipt: string, request = '') => {
      await page.fill('#paste-receipt', receipt);
      await page.fill('#paste-request', request);
      await page.click('#check-pasted');
      const out = page.locator('#pasted-check');
      await out.waitFor();
      return { valid: await out.getAttribute('data-valid'), failed: await out.getAttribute('data-failed-check'), text: await out.textContent() };
    };

    // One changed byte in the signed body.
    const tampered = receiptText.replace('"task_id":"invoice-example-1"', '"task_id":"invoice-example-2"');
    expect(tampered).not.toBe(receiptText);
    let r = await check(tampered);
    expect(r).toMatchObject({ valid: 'false', failed: 'signature' });
    expect(r.text).toContain('the signature check failed');
    await page.screenshot({ path: path.join(ARTIFACTS, 'receipt-tampered.png'), fullPage: true });

    // A changed byte in the signature itself.
    const sig = (JSON.parse(receiptText) as { attestation: { signature: string } }).attestation.signature;
    const flipped = `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    r = await check(receiptText.replace(sig, flipped));
    expect(r).toMatchObject({ valid: 'false', failed: 'signature' });

    // The genuine receipt with its request: valid, all four hashes recomputed in the page.
    r = await check(receiptText, invoice);
    expect(r.valid).toBe('true');
    expect(await page.locator('table.hashes code.same').count()).toBe(4);

    // The genuine receipt with a changed output in the request: output_hash names it.
    r = await check(receiptText, invoice.replace('"total": 135.0', '"total": 136.0'));
    expect(r).toMatchObject({ valid: 'false', failed: 'output_hash' });
    expect(blocked).toEqual([]);
    await page.close();

    // Dark colour scheme: the same page on a dark background.
    const dark = await browser.newContext({ colorScheme: 'dark', viewport: { width: 1280, height: 900 } });
    dark.on('request', (r) => requests.push(r.url()));
    const darkPage = await dark.newPage();
    await darkPage.goto(`${app.base}/receipts/${id}`);
    await darkPage.locator('#stored-check').waitFor();
    const bg = await darkPage.locator('body').evaluate((b: any) => b.ownerDocument.defaultView.getComputedStyle(b).backgroundColor);
    expect(bg).toBe('rgb(13, 17, 23)');
    await darkPage.screenshot({ path: path.join(ARTIFACTS, 'receipt-dark.png'), fullPage: true });
    await dark.close();
  });

  it('agent page: 30 verifications give counts, a drawn chart, paged history and the trust score', async () => {
    const agent = 'seller-thirty';
    const base = JSON.parse(invoice) as Record<string, any>;
    for (let i = 0; i < 30; i++) {
      const req = { ...base, task_id: `task-${i}`, agent_id: agent, submitted_output: { ...base.submitted_output, total: i % 4 === 0 ? 135 : 129.5 } };
      const res = await postJson(app.base, '/verify/schema', JSON.stringify(req));
      expect(res.status).toBe(200);
    }
    const page = await open(`${app.base}/agents/${agent}`);
    await page.locator('#counts').waitFor();
    expect(await page.locator('#counts').textContent()).toContain('Verifications30Passes22Fails8');
    expect(await page.locator('#pass-rate').textContent()).toBe('73.3%');
    const canvas = page.locator('.chart canvas');
    await canvas.waitFor();
    // Drawn: the canvas holds non-background pixels in the plot's colours.
    // (typed loosely: this runs in the page, and the test build has no DOM types)
    const painted = await canvas.evaluate((c: any) => {
      const ctx = c.getContext('2d');
      if (!ctx || c.width === 0) return 0;
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++;
      return n;
    });
    expect(painted).toBeGreaterThan(500);
    await page.locator('#trust-score').waitFor();
    expect(await page.locator('#log-checkpoint').textContent()).toMatch(/tree size \d+/);
    expect(await page.locator('table.inputs').textContent()).toContain('verifications30');
    await page.screenshot({ path: path.join(ARTIFACTS, 'agent.png'), fullPage: true });
    expect(await page.locator('table.history tbody tr').count()).toBe(20);
    await page.click('text=Older');
    expect(await page.locator('table.history tbody tr').count()).toBe(10);
    await page.close();

    const example = await open(`${app.base}/agents/test-invoice-agent`);
    await example.locator('#test-agent-note').waitFor();
    expect(await example.locator('#test-agent-note').textContent()).toContain('example agent');
    await example.close();
  });

  it('/docs and the pages work on a non-localhost host over plain HTTP', async () => {
    const page = await open(`http://${HOST}:${port}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 20_000 });
    expect(await page.locator('.swagger-ui .info .title').textContent()).toContain('agent-output-verifier');
    expect(await page.locator('.opblock-summary-path').count()).toBeGreaterThan(5);
    await page.close();
    // And the pages themselves on that host, where the page is not a secure context (no WebCrypto):
    // the receipt's signature is still checked in the page.
    const home = await open(`http://${HOST}:${port}/`);
    await home.locator('#verify').waitFor();
    await home.close();
    const res = await postJson(app.base, '/verify/schema', invoice);
    const id = ((await res.json()) as { verification_id: string }).verification_id;
    const receipt = await open(`http://${HOST}:${port}/receipts/${id}`);
    await receipt.locator('#stored-check').waitFor();
    expect(await receipt.evaluate(() => (globalThis as { isSecureContext?: boolean }).isSecureContext)).toBe(false);
    expect(await receipt.locator('#stored-check').getAttribute('data-valid')).toBe('true');
    await receipt.close();
  });

  it('at 390 px wide no page is wider than the screen; an unknown agent is a 404 page; a tampered receipt shows only its invalid banner', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    phone.on('request', (r) => requests.push(r.url()));
    phone.on('console', (m) => {
      if (m.type() === 'error' && !provokedRefusal(m.text())) consoleErrors.push(`${m.location().url}: ${m.text()}`);
    });
    const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `phone-${name}.png`), fullPage: true });
    const widths: Record<string, number> = {};
    const measure = async (page: Page, name: string) => {
      widths[name] = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
      await shot(page, name);
    };

    const res = await postJson(app.base, '/verify/schema', JSON.stringify({ ...JSON.parse(invoice), agent_id: 'seller-phone' }));
    const receiptText = await res.text();
    const id = (JSON.parse(receiptText) as { verification_id: string }).verification_id;

    const home = await phone.newPage();
    home.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
    await home.goto(`${app.base}/`);
    await home.locator('#verify').waitFor();
    await measure(home, 'home');
    await home.click('#verify');
    await home.locator('#verdict').waitFor();
    await measure(home, 'verdict');
    // Every column of the failed checks, "What" included, is on the screen.
    for (const th of await home.locator('table.failed th').all()) {
      const box = await th.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 390, `${await th.textContent()} at ${JSON.stringify(box)}`).toBe(true);
    }
    expect(await home.locator('table.failed th').last().textContent()).toBe('What');

    const agent = await phone.newPage();
    const agentNav = await agent.goto(`${app.base}/agents/seller-phone`);
    expect(agentNav?.status()).toBe(200);
    await agent.locator('table.inputs').waitFor();
    await measure(agent, 'agent');

    const unknown = await phone.newPage();
    const unknownNav = await unknown.goto(`${app.base}/agents/nobody-by-this-name`);
    expect(unknownNav?.status()).toBe(404);
    await unknown.locator('#agent-not-found').waitFor();
    expect(await unknown.locator('h1').textContent()).toBe('No such agent');
    expect(await unknown.locator('#trust-score, #counts').count()).toBe(0);
    await measure(unknown, 'agent-unknown');

    const receipt = await phone.newPage();
    await receipt.goto(`${app.base}/receipts/${id}`);
    await receipt.locator('#stored-check').waitFor();
    await measure(receipt, 'receipt');
    await receipt.fill('#paste-receipt', receiptText.replace('"agent_id":"seller-phone"', '"agent_id":"seller-phony"'));
    await receipt.click('#check-pasted');
    await receipt.locator('#pasted-check').waitFor();
    // One verdict at a time: the pasted receipt's red one, and no green one beside it.
    expect(await receipt.locator('.check-outcome').count()).toBe(1);
    expect(await receipt.locator('.check-outcome.invalid').count()).toBe(1);
    expect(await receipt.locator('#stored-check').count()).toBe(0);
    expect(await receipt.getByText('signature valid').count()).toBe(0);
    await measure(receipt, 'receipt-tampered');
    await receipt.click('#stored-check-note button');
    expect(await receipt.locator('.check-outcome').count()).toBe(1);
    expect(await receipt.locator('#stored-check').getAttribute('data-valid')).toBe('true');

    const missing = await phone.newPage();
    expect((await missing.goto(`${app.base}/receipts/00000000-0000-4000-8000-000000000000`))?.status()).toBe(404);
    await missing.locator('.error-text').waitFor();
    await measure(missing, 'receipt-unknown');

    for (const [name, width] of Object.entries(widths)) expect(width, name).toBeLessThanOrEqual(390);
    expect(Object.keys(widths)).toHaveLength(7);
    await phone.close();
  });

  it('no page requested anything from another origin, and no page logged an error', () => {
    const origins = new Set(requests.map((u) => new URL(u).origin));
    expect([...origins].sort()).toEqual([`http://${HOST}:${port}`, app.base].sort());
    expect(consoleErrors).toEqual([]);
  });
});
