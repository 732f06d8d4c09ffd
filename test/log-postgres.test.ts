/**
 * @module Transparency log with two service instances on one PostgreSQL schema, under concurrent load, with
 * both sequencers integrating as often as they can (and extra integrations forced from outside): one tree.
 * Every receipt is logged exactly once, with contiguous indexes; every checkpoint either instance published
 * along the way is a prefix of the final tree (no fork); an independent reader rebuilds the final root from
 * the tiles; the audit is clean. Skipped when PostgreSQL is not reachable.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { auditLog } from '../src/log/audit.js';
import { postJson, startApp, tempDir, type Running } from './http-helpers.js';
import { mth, mthLeaf, openCheckpointNote, readAllEntries } from './log-reader.js';
import { postgresTestTarget } from './postgres-helpers.js';

const pg = await postgresTestTarget('log-postgres', 'aov_log');

describe.skipIf(!pg.available)('transparency log on PostgreSQL, two instances', () => {
  const running: Running[] = [];
  const cleanups: Array<() => void> = [];
  afterAll(async () => {
    for (const r of running) await r.close();
    await pg.dropSchema();
    for (const c of cleanups) c();
  });

  it('concurrent load on both instances builds one consistent tree', async () => {
    const tmp = tempDir('aov-log-pg-');
    cleanups.push(tmp.cleanup);
    // One deployment: the same public URL and note key file on both instances.
    const env = { DATABASE_URL: pg.url, DATABASE_SCHEMA: pg.schema, PUBLIC_BASE_URL: 'https://verifier.test', LOG_INTERVAL_MS: '10', FREE_ALLOWANCE_PER_DAY: '100000' };
    const a = await startApp(tmp.dir, env);
    running.push(a);
    const b = await startApp(tmp.dir, env);
    running.push(b);
    const vkey = (await (await fetch(`${a.base}/log/key`)).text()).trim();
    expect((await (await fetch(`${b.base}/log/key`)).text()).trim()).toBe(vkey);

    const total = 240;
    const ids: string[] = [];
    const seen: Array<{ size: number; root: Buffer }> = [];
    let done = false;
    const watcher = (async () => {
      while (!done) {
        for (const srv of [a, b]) seen.push(openCheckpointNote(await (await fetch(`${srv.base}/log/checkpoint`)).text(), vkey));
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const forcer = (async () => {
      while (!done) await Promise.all([a.handle.log.sequencer.integrate(), b.handle.log.sequencer.integrate()]);
    })();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        while (next < total) {
          const i = next++;
          const srv = (i + w) % 2 ? a : b;
          const res = await postJson(srv.base, '/verify/schema', JSON.stringify({ task_id: `pg-${i}`, agent_id: `agent-${i % 5}`, expected_schema: { type: 'object', required: ['x'] }, submitted_output: i % 7 ? { x: i } : {} }));
          expect(res.status).toBe(200);
          ids.push(((await res.json()) as { verification_id: string }).verification_id);
        }
      }),
    );
    const t0 = Date.now();
    let final: { size: number; root: Buffer; origin: string };
    for (;;) {
      final = openCheckpointNote(await (await fetch(`${a.base}/log/checkpoint`)).text(), vkey);
      if (final.size === total) break;
      expect(Date.now() - t0).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 10));
    }
    done = true;
    await Promise.all([watcher, forcer]);
    expect(final.origin).toBe('verifier.test/log');
    // Both instances serve the same checkpoint.
    expect(await (await fetch(`${b.base}/log/checkpoint`)).text()).toBe(await (await fetch(`${a.base}/log/checkpoint`)).text());

    const entries = await readAllEntries(a.base, total);
    const leaves = entries.map(mthLeaf);
    expect(mth(leaves).equals(final.root)).toBe(true);
    const logged = entries.map((e) => (JSON.parse(e.toString('utf8')) as { verification_id: string }).verification_id);
    expect(new Set(logged).size).toBe(total);
    expect([...logged].sort()).toEqual([...ids].sort());
    // No fork: every checkpoint published on the way is the root of a prefix of the final tree.
    expect(seen.length).toBeGreaterThan(10);
    const sizes = new Set<number>();
    for (const c of seen) {
      expect(mth(leaves.slice(0, c.size)).equals(c.root)).toBe(true);
      sizes.add(c.size);
    }
    expect(sizes.size).toBeGreaterThan(2);

    const report = await auditLog(a.handle.store);
    expect(report).toMatchObject({ ok: true, tree_size: total, entries_checked: total, queued: 0, findings: [] });
  });
});
