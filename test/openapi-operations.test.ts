/**
 * @module Every operation of the served OpenAPI document has a unique
 * operationId and a tag, so generated clients get stable method names and
 * /docs groups every route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, tempDir, type Running } from './http-helpers.js';
import { derivedOperationId, defaultTag } from '../src/http/operation-ids.js';

let running: Running;
let tmp: { dir: string; cleanup(): void };

beforeAll(async () => {
  tmp = tempDir('aov-openapi-');
  running = await startApp(tmp.dir);
});

afterAll(async () => {
  await running?.close();
  tmp?.cleanup();
});

describe('OpenAPI operations', () => {
  it('each has a unique operationId and at least one tag', async () => {
    const doc = (await (await fetch(`${running.base}/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>> };
    const ids: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z0-9]+$/);
        expect(op.tags?.length, `${method} ${path}`).toBeGreaterThan(0);
        ids.push(op.operationId as string);
      }
    }
    expect(ids).toContain('verifySchema');
    expect(ids).toContain('getTrustScore');
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('derives ids and tags for routes without a listed one', () => {
    expect(derivedOperationId('GET', '/log/proof/:verification_id')).toBe('getLogProofVerificationId');
    expect(defaultTag('/.well-known/thing')).toBe('discovery');
    expect(defaultTag('/mcp')).toBe('mcp');
  });
});
