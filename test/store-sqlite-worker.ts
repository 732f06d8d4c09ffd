/**
 * @module Child process for the cross-process SQLite tests. The racing modes
 * print `ready` once loaded and then block until the parent writes a line to
 * stdin, so every worker starts at the parent's signal however slowly each one
 * loaded; they report wall-clock start and finish instants (ms) so the parent
 * can assert that the work really overlapped.
 * `consume <file> <clientKey> <day> <limit> <attempts>`: opens the store, waits
 *   for the signal, consumes, prints `{granted, startedAt, finishedAt}`.
 * `open <file>`: waits for the signal, then opens (and migrates) the file,
 *   consumes one unit and prints `{versions, startedAt, finishedAt}`.
 * `save <file> <agentId> [worker <walLimitBytes>]`: saves receipts forever, printing each id once
 *   saveReceipt has resolved (the moment a service would answer the client), until killed; with
 *   `worker`, through the worker-thread writer (sqlite-offload.ts) and that WAL bound.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createSqliteStore } from '../src/store/sqlite.js';
import { createSqliteOffloadStore } from '../src/store/sqlite-offload.js';

const [mode, file, ...args] = process.argv.slice(2);
const now = () => performance.timeOrigin + performance.now();

/** Say `ready`, then wait for the parent's start line. */
async function startSignal(): Promise<void> {
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
  process.stdin.destroy();
}

if (mode === 'open') {
  await startSignal();
  const startedAt = now();
  const store = createSqliteStore({ file });
  await store.consumeAllowance('open-race', '2026-01-01', 1000);
  const versions = await store.appliedMigrations();
  const finishedAt = now();
  await store.close();
  process.stdout.write(JSON.stringify({ versions, startedAt, finishedAt }) + '\n');
} else if (mode === 'consume') {
  const [clientKey, day, limit, attempts] = args;
  const store = createSqliteStore({ file });
  await startSignal();
  const startedAt = now();
  let granted = 0;
  for (let i = 0; i < Number(attempts); i++) {
    if ((await store.consumeAllowance(clientKey, day, Number(limit))).allowed) granted++;
  }
  const finishedAt = now();
  await store.close();
  process.stdout.write(JSON.stringify({ granted, startedAt, finishedAt }) + '\n');
} else if (mode === 'save') {
  const [agentId, writer, walLimitBytes] = args;
  const store = writer === 'worker' ? createSqliteOffloadStore({ file, walLimitBytes: Number(walLimitBytes) }) : createSqliteStore({ file });
  for (;;) {
    const id = randomUUID();
    const verifiedAt = new Date().toISOString();
    await store.saveReceipt({ verificationId: id, agentId, taskId: 't', result: 'pass', overallRatio: 1, verifiedAt, keyVersion: 'k1', receipt: JSON.stringify({ id, verifiedAt, note: 'ü🚀' }) });
    process.stdout.write(id + '\n');
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
