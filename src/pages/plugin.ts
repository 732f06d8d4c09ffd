/**
 * @module The pages for people, as one Fastify plugin: the playground at `/`,
 * a receipt page at `/receipts/:verification_id` and an agent page at
 * `/agents/:agent_id`, all served from the front end that `npm run build`
 * bundles into dist/web (one HTML shell that routes on the path, plus hashed
 * assets under /assets; an unknown agent's or receipt's page answers 404). Nothing is fetched from elsewhere, so the pages carry
 * a strict Content-Security-Policy that holds over plain HTTP on any host.
 * Also the CSP settings of the Swagger UI at /docs, for the same reason.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../errors.js';

export interface PagesOptions {
  /** What the pages need to know about this server; sent in a meta tag, never as inline script. */
  site: {
    serviceName: string;
    version: string;
    /** Whether x402 payments are on (then the trust score is paid and the agent page does not fetch it). */
    paymentsEnabled: boolean;
    freeAllowancePerDay: number;
    /** Whether the server answers ERC-8004 validation requests (then the agent page lists its on-chain answers). */
    erc8004Enabled?: boolean;
  };
  /** The built front end (default: dist/web at the package root). */
  assetsDir?: string;
  /**
   * Whether what a page names exists: the page of an unknown agent or receipt is still the shell
   * (it says "not found" itself), answered 404 so that browsers, crawlers and scripts see it too.
   */
  exists?: {
    agent(agentId: string): Promise<boolean>;
    receipt(verificationId: string): Promise<boolean>;
  };
}

/**
 * Same-origin only: scripts and styles from files (no inline code), fetches to
 * this origin, images from files or data: URLs (the chart is a canvas). No
 * upgrade-insecure-requests: that would send a plain-HTTP LAN visitor's
 * browser to an HTTPS port that does not exist.
 */
export const PAGES_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Package root: two levels above this file both in src/pages and in dist/pages. */
const DEFAULT_ASSETS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/web');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', PAGES_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer');
}

interface Asset {
  type: string;
  body: Buffer;
}

/** The built files, read once: a handful of small files, served from memory. */
function loadAssets(dir: string): { shell: string; assets: Map<string, Asset> } | null {
  const shellPath = path.join(dir, 'index.html');
  if (!existsSync(shellPath)) return null;
  const assets = new Map<string, Asset>();
  const assetsDir = path.join(dir, 'assets');
  if (existsSync(assetsDir)) {
    for (const name of readdirSync(assetsDir)) {
      const type = TYPES[path.extname(name)];
      if (type) assets.set(name, { type, body: readFileSync(path.join(assetsDir, name)) });
    }
  }
  return { shell: readFileSync(shellPath, 'utf8'), assets };
}

export async function pagesPlugin(app: FastifyInstance, options: PagesOptions): Promise<void> {
  const built = loadAssets(options.assetsDir ?? DEFAULT_ASSETS_DIR);
  const hidden = { schema: { hide: true } };

  if (!built) {
    app.log.warn('the web pages are not built (npm run build); /, /receipts/* and /agents/* answer 503');
    const notBuilt = async (_req: unknown, reply: FastifyReply) =>
      reply
        .code(503)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(errorBody('unavailable', { message: 'The web pages are not built on this server (run npm run build).' })));
    for (const url of ['/', '/receipts/:verification_id', '/agents/:agent_id']) app.get(url, hidden, notBuilt);
    return;
  }

  const shell = built.shell.replace('__AOV_SITE__', escapeAttr(JSON.stringify(options.site)));
  const sendShell = async (_req: unknown, reply: FastifyReply) =>
    securityHeaders(reply).header('Cache-Control', 'no-cache').type('text/html; charset=utf-8').send(shell);
  /** The shell, 404 when the named thing does not exist (a failed lookup leaves the page to report the error it gets). */
  const sendShellOf = (exists: ((id: string) => Promise<boolean>) | undefined, param: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const id = (request.params as Record<string, string>)[param] as string;
    const found = exists ? await exists(id).catch(() => true) : true;
    return sendShell(request, found ? reply : reply.code(404));
  };
  app.get('/', hidden, sendShell);
  app.get('/receipts/:verification_id', hidden, sendShellOf(options.exists?.receipt, 'verification_id'));
  app.get('/agents/:agent_id', hidden, sendShellOf(options.exists?.agent, 'agent_id'));

  app.get('/assets/:file', hidden, async (request, reply) => {
    const { file } = request.params as { file: string };
    const asset = built.assets.get(file);
    if (!asset) {
      return reply.code(404).type('application/json; charset=utf-8').send(JSON.stringify(errorBody('not_found')));
    }
    // Built file names carry a content hash: a changed file gets a new name.
    return securityHeaders(reply).header('Cache-Control', 'public, max-age=31536000, immutable').type(asset.type).send(asset.body);
  });
}

/**
 * The one inline style element Swagger UI (the version @fastify/swagger-ui
 * 6.1.3 bundles) adds while rendering; allowed by its hash rather than by
 * 'unsafe-inline'. The browser test fails on any CSP report, so a new Swagger
 * UI that needs another one is noticed.
 */
const SWAGGER_UI_STYLE_HASH = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/**
 * Options for @fastify/swagger-ui at /docs: its own static CSP, minus
 * upgrade-insecure-requests unless the public URL is HTTPS (over plain HTTP on
 * a non-localhost host the browser would fetch the UI's files over HTTPS and
 * show a blank page), and no online validator badge (a request to another origin).
 */
export function docsUiOptions(publicBaseUrl: string) {
  const https = publicBaseUrl.startsWith('https:');
  return {
    staticCSP: true,
    transformStaticCSP: (header: string) => {
      const csp = header.replace("style-src 'self'", `style-src 'self' ${SWAGGER_UI_STYLE_HASH}`);
      return https ? csp : csp.replace(/\s*upgrade-insecure-requests;?/g, '').trim();
    },
    uiConfig: { validatorUrl: null },
  };
}
