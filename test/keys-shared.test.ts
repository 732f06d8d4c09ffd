/**
 * @module Signing keys fail closed and are shared through the database: two
 * instances on one PostgreSQL with separate data directories publish one agent
 * card, their receipts verify with it, `aov keys rotate` on the database is
 * followed by both, and earlier receipts still verify. In the default file mode,
 * a keys folder removed while running never leads to a new key, and a restart
 * without the recorded keys is refused.
 */
import { randomBytes } from 'node:crypto';
import { renameSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run as keysCli } from '../src/cli/keys.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { verifyReceipt } from '../src/receipts/index.js';
import { postJson, startApp, tempDir } from './http-helpers.js';
import type { Running } from './http-helpers.js';
import { postgresTestTarget } from './postgres-helpers.js';

const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } };
const body = (i: number) => JSON.stringify({ task_id: `keys-${i}`, expected_schema: schema, submitted_output: { n: i } });

async function receipt(app: Running, i: number): Promise<Record<string, unknown>> {
  const res = await postJson(app.base, '/verify/schema', body(i));
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}
async function card(app: Running): Promise<Record<string, unknown>> {
  return (await (await fetch(`${app.base}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
}
function cardKeys(c: Record<string, unknown>): Array<{ keyVersion: string; status: string; publicKey: string }> {
  const ext = (c.capabilities as { extensions: Array<{ uri: string; params: { publicKeys: never[] } }> }).extensions.find((e) =>
    e.uri.startsWith('urn:json-schema-verifier:extension:attestation:'),
  )!;
  return ext.params.publicKeys;
}
const keyOf = (r: Record<string, unknown>) => (r.attestation as { key_version: string }).key_version;

const pg = await postgresTestTarget('shared signing keys (PostgreSQL)', 'keys');

describe('signing keys', () => {
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it.runIf(pg.available)('two instances on one PostgreSQL share the key ring; rotation on the database is followed by both', async () => {
    const kek = randomBytes(32).toString('base64');
    const env = { DATABASE_URL: pg.url, DATABASE_SCHEMA: pg.schema, KEY_ENCRYPTION_KEY: kek };
    const dirA = tempDir();
    const dirB = tempDir();
    cleanups.push(dirA.cleanup, dirB.cleanup, () => pg.dropSchema());
    // Started together: the first-key creation is decided once in the database.
    const [a, b] = await Promise.all([startApp(dirA.dir, env), startApp(dirB.dir, env)]);
    cleanups.push(() => a.close(), () => b.close());

    const cardA = await card(a);
    expect(JSON.stringify(cardKeys(cardA))).toBe(JSON.stringify(cardKeys(await card(b))));
    expect(cardKeys(cardA)).toHaveLength(1);
    const before = [await receipt(a, 1), await receipt(b, 2)];
    for (const r of before) expect(verifyReceipt(r, { agentCard: cardA })).toMatchObject({ valid: true });
    expect(keyOf(before[0]!)).toBe(keyOf(before[1]!));

    // `aov keys rotate` against the database (another process's view: no data directory involved).
    const out: string[] = [];
    const prev = { ...process.env };
    Object.assign(process.env, env);
    let code: number;
    try {
      code = await keysCli(['rotate', '--data-dir', tempDir().dir], { stdout: (s: string) => out.push(s), stderr: () => undefined, readFile: () => '' });
    } finally {
      for (const k of Object.keys(env)) if (prev[k] === undefined) delete process.env[k];
    }
    expect(code).toBe(0);
    const rotated = JSON.parse(out.join('')) as { keyVersion: string };
    expect(rotated.keyVersion).not.toBe(keyOf(before[0]!));

    // The command returned: every instance's next signature uses the new key.
    const after = [await receipt(a, 3), await receipt(b, 4)];
    expect(after.map(keyOf)).toEqual([rotated.keyVersion, rotated.keyVersion]);
    const cardAfterA = await card(a);
    expect(JSON.stringify(cardKeys(cardAfterA))).toBe(JSON.stringify(cardKeys(await card(b))));
    expect(cardKeys(cardAfterA).map((k) => k.status)).toEqual(['retired', 'active']);
    for (const r of [...before, ...after]) expect(verifyReceipt(r, { agentCard: cardAfterA })).toMatchObject({ valid: true });
  }, 60_000);

  it('file keys: the keys folder removed while running never leads to a new key; a restart without it is refused', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const app = await startApp(tmp.dir);
    const first = await receipt(app, 1);
    const keysDir = path.join(tmp.dir, 'keys');
    renameSync(keysDir, path.join(tmp.dir, 'keys-moved'));

    const later = [await receipt(app, 2), await receipt(app, 3)];
    const c = await card(app);
    expect(cardKeys(c).map((k) => k.keyVersion)).toEqual([keyOf(first)]);
    for (const r of [first, ...later]) {
      expect(keyOf(r)).toBe(keyOf(first));
      expect(verifyReceipt(r, { agentCard: c })).toMatchObject({ valid: true });
    }
    const health = await fetch(`${app.base}/health`);
    expect(health.status).toBe(200);
    const hb = (await health.json()) as { status: string; warnings: string[] };
    expect(hb.status).toBe('degraded');
    expect(hb.warnings[0]).toContain('signing key files missing');
    await app.close();

    // The database remembers the key: no silent new key at the next start.
    const config = loadConfig({ DATA_DIR: tmp.dir, PORT: '0', LOG_LEVEL: 'silent' });
    await expect(createApp(config, { logger: false })).rejects.toThrow(/database lists keys .*restore the key files/);
    renameSync(path.join(tmp.dir, 'keys-moved'), keysDir);
    const again = await startApp(tmp.dir);
    cleanups.push(() => again.close());
    expect(keyOf(await receipt(again, 4))).toBe(keyOf(first));
  });
});
