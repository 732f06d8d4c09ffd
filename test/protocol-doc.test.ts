/**
 * @module docs/protocol.md is the contract readers implement from, so what it
 * states must be what the code does: its three request_hash test vectors
 * (request, canonical form, hash) are recomputed here, and its in-page links
 * all point at headings that exist.
 */
import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseVerificationRequest } from '../src/core/request.js';
import { canonicalRequest, computeHashes } from '../src/receipts/hashes.js';
import { requestHashVectorTexts } from '../src/receipts/v1/request-hash-vectors.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const doc = readFileSync(path.join(ROOT, 'docs', 'protocol.md'), 'utf8');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return d.name === 'node_modules' || d.name === 'fixtures' ? [] : walk(p);
    return /\.(ts|tsx|md)$/.test(d.name) ? [p] : [];
  });
}

describe('docs/protocol.md', () => {
  const vectors = [...doc.matchAll(/Vector (\d) — request\s+```json\n(.*?)\n```\s+canonical form\s+```json\n(.*?)\n```\s+request_hash `([0-9a-f]{64})`/gs)].map((m) => ({
    n: Number(m[1]),
    request: m[2],
    canonical: m[3],
    hash: m[4],
  }));

  it('states three test vectors that the code reproduces byte for byte', () => {
    expect(vectors.map((v) => v.n)).toEqual([1, 2, 3]);
    for (const v of vectors) {
      const parsed = parseVerificationRequest(v.request);
      expect(canonicalRequest(parsed.request), `vector ${v.n}`).toBe(v.canonical);
      expect(computeHashes(parsed).request_hash, `vector ${v.n}`).toBe(v.hash);
    }
  });

  it('states the same vectors the agent card publishes', () => {
    expect(requestHashVectorTexts()).toEqual(vectors.map((v) => ({ request: v.request, canonical: v.canonical, request_hash: v.hash })));
  });

  it('links only to headings that exist, here and from the other docs and the code', () => {
    const anchors = new Set([...doc.matchAll(/^#{2,4} (.+)$/gm)].map((m) => anchor(m[1])));
    const own = [...doc.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]);
    expect(own.length).toBeGreaterThan(10);
    for (const a of own) expect(anchors, `#${a}`).toContain(a);
    const files = ['README.md', ...['docs', 'src', 'test', 'bench', 'scripts'].flatMap((d) => walk(path.join(ROOT, d)))];
    let links = 0;
    for (const file of files) {
      const text = readFileSync(path.isAbsolute(file) ? file : path.join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/protocol\.md#([\w-]+)((?:, #[\w-]+)*)/g)) {
        for (const a of [m[1], ...[...m[2].matchAll(/#([\w-]+)/g)].map((x) => x[1])]) {
          links++;
          expect(anchors, `${path.relative(ROOT, path.resolve(ROOT, file))}: #${a}`).toContain(a);
        }
      }
    }
    expect(links).toBeGreaterThan(20);
  });

  it('is what the repository refers to: no numbered section of an outside document is cited', () => {
    // Written apart so this file does not match itself.
    const cite = new RegExp(['SPEC', ' §'].join(''));
    const files = ['README.md', ...['docs', 'src', 'test', 'bench', 'scripts', 'web'].flatMap((d) => walk(path.join(ROOT, d)))];
    const citing = files.filter((f) => cite.test(readFileSync(path.isAbsolute(f) ? f : path.join(ROOT, f), 'utf8')));
    expect(citing.map((f) => path.relative(ROOT, path.resolve(ROOT, f)))).toEqual([]);
  });
});
