/**
 * @module The transparency log end to end over real HTTP (SQLite): verifications by REST and by MCP (the
 * official SDK client), then an independent check written here from the published formats alone — it does
 * not import src/log: it opens the checkpoint note with the key from /log/key, rebuilds the root from the
 * tiles, matches every entry to its receipt's bytes, recomputes every inclusion proof and a consistency proof
 * between two checkpoints by the recursive RFC 6962 definitions, and compares them with what the service serves.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expectErrorShape, postJson, startApp, tempDir, type Running } from './http-helpers.js';
import { mth, mthLeaf, openCheckpointNote, path, readAllEntries, sha, subproof } from './log-reader.js';

// ---- the test ----
let running: Running;
let tmp: { dir: string; cleanup(): void };
const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 0 } } };
const ids: string[] = [];

beforeAll(async () => {
  tmp = tempDir('aov-log-http-');
  running = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '1000' });
});
afterAll(async () => {
  await running?.close();
  tmp?.cleanup();
});

describe('transparency log over HTTP', () => {
  let vkey = '';
  let first: { size: number; root: Buffer } = { size: 0, root: Buffer.alloc(0) };

  it('publishes its note key in the agent card and at /log/key, and a checkpoint at once', async () => {
    vkey = (await (await fetch(`${running.base}/log/key`)).text()).trim();
    const card = (await (await fetch(`${running.base}/.well-known/agent-card.json`)).json()) as Record<string, any>;
    const ext = card.capabilities.extensions.find((e: { uri: string }) => e.uri.startsWith('urn:json-schema-verifier:extension:attestation:'));
    expect(ext.params.transparencyLog.verifierKey).toBe(vkey);
    const res = await fetch(`${running.base}/log/checkpoint`);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const c = openCheckpointNote(await res.text(), vkey);
    expect(c.origin).toBe(`${new URL(running.base).host}/log`);
    expect(c.size).toBe(0);
  });

  it('every REST and MCP receipt is in a published checkpoint within a second of its response', async () => {
    for (let i = 0; i < 30; i++) {
      const res = await postJson(running.base, '/verify/schema', JSON.stringify({ task_id: `t-${i}`, agent_id: `agent-${i % 3}`, expected_schema: schema, submitted_output: { n: i % 4 === 0 ? -1 : i } }));
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { verification_id: string }).verification_id);
      if (i === 9) {
        // Remember an early checkpoint for the consistency check.
        const t0 = Date.now();
        for (;;) {
          const c = openCheckpointNote(await (await fetch(`${running.base}/log/checkpoint`)).text(), vkey);
          if (c.size >= 10) {
            first = c;
            break;
          }
          expect(Date.now() - t0).toBeLessThan(1000);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    }
    const client = new Client({ name: 'log-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${running.base}/mcp`)));
    for (let i = 0; i < 5; i++) {
      const r = (await client.callTool({ name: 'verify_schema', arguments: { task_id: `m-${i}`, agent_id: 'agent-mcp', expected_schema: schema, submitted_output: { n: i } } })) as CallToolResult;
      ids.push((r.structuredContent as { verification_id: string }).verification_id);
    }
    await client.close();
    const t0 = Date.now();
    for (;;) {
      const c = openCheckpointNote(await (await fetch(`${running.base}/log/checkpoint`)).text(), vkey);
      if (c.size === ids.length) break;
      expect(Date.now() - t0).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it('an independent reader rebuilds the checkpoint root from the tiles, and every entry matches its receipt bytes', async () => {
    const c = openCheckpointNote(await (await fetch(`${running.base}/log/checkpoint`)).text(), vkey);
    const entries = await readAllEntries(running.base, c.size);
    const leaves = entries.map(mthLeaf);
    expect(mth(leaves).equals(c.root)).toBe(true);
    const logged = entries.map((e) => JSON.parse(e.toString('utf8')) as Record<string, unknown>);
    expect(logged.map((e) => e.verification_id).sort()).toEqual([...ids].sort());
    for (const e of logged) {
      expect(Object.keys(e).sort()).toEqual(['agent_id', 'overall_ratio', 'receipt_sha256', 'result', 'task_id', 'verification_id', 'verified_at']);
      const bytes = Buffer.from(await (await fetch(`${running.base}/verifications/${e.verification_id as string}`)).arrayBuffer());
      expect(sha(bytes).toString('hex')).toBe(e.receipt_sha256);
      const receipt = JSON.parse(bytes.toString('utf8')) as Record<string, any>;
      expect([e.task_id, e.agent_id, e.result, e.verified_at]).toEqual([receipt.task_id, receipt.agent_id, receipt.result, receipt.verified_at]);
    }
    // Every inclusion proof equals the one recomputed from the leaves, against the checkpoint it names.
    for (const id of ids) {
      const p = (await (await fetch(`${running.base}/log/proof/${id}`)).json()) as Record<string, any>;
      const pc = openCheckpointNote(p.checkpoint, vkey);
      expect(pc.size).toBe(p.tree_size);
      expect(pc.root.toString('base64')).toBe(p.root_hash);
      expect(Buffer.from(p.entry).equals(entries[p.index]!)).toBe(true);
      expect(p.inclusion_proof).toEqual(path(p.index, leaves.slice(0, p.tree_size)).map((h) => h.toString('base64')));
    }
    // A consistency proof between the early checkpoint and the current one.
    const cp = (await (await fetch(`${running.base}/log/consistency?from=${first.size}&to=${c.size}`)).json()) as Record<string, any>;
    expect(mth(leaves.slice(0, first.size)).equals(first.root)).toBe(true);
    expect(cp.consistency_proof).toEqual(subproof(first.size, leaves, true).map((h) => h.toString('base64')));
    // Only the levels tiles serve are stored (here, below 256 entries, the leaves alone): every proof above
    // hashed its inner nodes up from them.
    const Database = createRequire(import.meta.url)('better-sqlite3') as new (f: string, o: { readonly: true }) => {
      prepare(s: string): { all(): unknown[]; get(): unknown };
      close(): void;
    };
    const db = new Database(join(tmp.dir, 'verifier.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT DISTINCT level FROM log_nodes ORDER BY level').all()).toEqual([{ level: 0 }]);
      expect(db.prepare('SELECT count(*) AS n FROM log_nodes').get()).toEqual({ n: c.size });
    } finally {
      db.close();
    }
  });

  it('reputation and the trust score name the checkpoint they were computed at', async () => {
    const rep = (await (await fetch(`${running.base}/reputation/agent-1`)).json()) as Record<string, any>;
    const c = openCheckpointNote(await (await fetch(`${running.base}/log/checkpoint`)).text(), vkey);
    expect(rep.log_checkpoint).toEqual({ tree_size: c.size, root_hash: c.root.toString('base64') });
    const score = (await (await fetch(`${running.base}/score/agent-1`)).json()) as Record<string, any>;
    expect(score.log_checkpoint).toEqual({ tree_size: c.size, root_hash: c.root.toString('base64') });
    expect(score.inputs.verifications).toBe(10);
  });

  it('tiles are immutable when full, 404 when absent; bad queries are coded errors', async () => {
    const partial = await fetch(`${running.base}/log/tile/0/000.p/${ids.length}`);
    expect(partial.status).toBe(200);
    expect(partial.headers.get('content-type')).toBe('application/octet-stream');
    const absent = await fetch(`${running.base}/log/tile/0/000`);
    expect(absent.status).toBe(404);
    expect(expectErrorShape((await absent.json()) as Record<string, unknown>, 'not_found', 404)).toBeNull();
    expect((await fetch(`${running.base}/log/tile/0/0`)).status).toBe(404);
    expect((await fetch(`${running.base}/log/proof/no-such-id`)).status).toBe(404);
    const bad = await fetch(`${running.base}/log/consistency?from=5&to=2`);
    expect(bad.status).toBe(422);
    expect(expectErrorShape((await bad.json()) as Record<string, unknown>, 'invalid_request', 422)).toBeNull();
    expect((await fetch(`${running.base}/log/consistency?from=1&to=999999`)).status).toBe(422);
    expect((await fetch(`${running.base}/log/consistency?from=x&to=2`)).status).toBe(422);
  });
});
