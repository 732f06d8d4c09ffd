/**
 * @module Child process for the cross-process SQLite tests.
 * `consume <file> <clientKey> <day> <limit> <attempts> <startAtMs>`: waits for a
 *   common start instant so workers overlap, consumes, prints how many were granted.
 * `open <file> <startAtMs>`: waits for the start instant, then opens (and migrates) the
 *   file, consumes one unit and prints the applied migration versions.
 * `save <file> <agentId>`: saves receipts forever, printing each id once saveReceipt
 *   has resolved (the moment a service would answer the client), until killed.
 */
import { randomUUID } from 'node:crypto';
import { createSqliteStore } from '../src/store/sqlite.js';

const [mode, file, ...args] = process.argv.slice(2);
if (mode === 'open') {
  while (Date.now() < Number(args[0])) await new Promise((r) => setTimeout(r, 1));
}
const store = createSqliteStore({ file });

if (mode === 'open') {
  await store.consumeAllowance('open-race', '2026-01-01', 1000);
  process.stdout.write(JSON.stringify({ versions: await store.appliedMigrations() }) + '\n');
  await store.close();
} else if (mode === 'consume') {
  const [clientKey, day, limit, attempts, startAt] = args;
  while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 2));
  let granted = 0;
  for (let i = 0; i < Number(attempts); i++) {
    if ((await store.consumeAllowance(clientKey, day, Number(limit))).allowed) granted++;
  }
  await store.close();
  process.stdout.write(JSON.stringify({ granted }) + '\n');
} else if (mode === 'save') {
  const [agentId] = args;
  for (;;) {
    const id = randomUUID();
    const verifiedAt = new Date().toISOString();
    await store.saveReceipt({ verificationId: id, agentId, taskId: 't', result: 'pass', overallRatio: 1, verifiedAt, keyVersion: 'k1', receipt: JSON.stringify({ id, verifiedAt, note: 'ü🚀' }) });
    process.stdout.write(id + '\n');
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
