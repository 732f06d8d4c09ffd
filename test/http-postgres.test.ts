/**
 * @module Two service instances on one PostgreSQL database (a throwaway schema):
 * the free allowance is exact across them, and a receipt issued by one is
 * served byte-identical by the other. Skipped when PostgreSQL is not reachable.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { postJson, startApp, tempDir } from './http-helpers.js';
import type { Running } from './http-helpers.js';
import { postgresTestTarget } from './postgres-helpers.js';

const pg = await postgresTestTarget('http-postgres', 'aov_http');
const { url: URL, schema, available } = pg;

const request = (i: number) =>
  JSON.stringify({ task_id: `pg-${i}`, agent_id: 'pg-agent', expected_schema: { type: 'object' }, submitted_output: { i } });

describe.skipIf(!available)('HTTP on PostgreSQL, two instances', () => {
  const running: Running[] = [];
  const dirs: Array<() => void> = [];
  afterAll(async () => {
    for (const r of running) await r.close();
    await pg.dropSchema();
    for (const d of dirs) d();
  });

  it('the allowance is exact across instances and receipts are shared', async () => {
    // Both instances sign with the same key (shared key directory), as an operator would deploy them.
    const tmp = tempDir();
    dirs.push(tmp.cleanup);
    const env = { DATABASE_URL: URL, DATABASE_SCHEMA: schema, FREE_ALLOWANCE_PER_DAY: '30' };
    const a = await startApp(tmp.dir, env);
    running.push(a);
    const b = await startApp(tmp.dir, env);
    running.push(b);

    const responses = await Promise.all(Array.from({ length: 80 }, (_, i) => postJson(i % 2 ? a.base : b.base, '/verify/schema', request(i))));
    const texts = await Promise.all(responses.map((r) => r.text()));
    const ok = responses.map((r, i) => ({ status: r.status, text: texts[i] as string })).filter((r) => r.status === 200);
    expect(ok).toHaveLength(30);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(50);

    for (const r of ok.slice(0, 10)) {
      const id = JSON.parse(r.text).verification_id as string;
      for (const srv of [a, b]) expect(await (await fetch(`${srv.base}/verifications/${id}`)).text()).toBe(r.text);
    }
    const rep = (await (await fetch(`${a.base}/reputation/pg-agent`)).json()) as any;
    expect(rep.verifications).toBe(30);
    expect((await fetch(`${b.base}/health`)).status).toBe(200);
  });
});
