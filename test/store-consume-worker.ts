/**
 * @module Child process for the cross-process allowance test: opens the shared
 * SQLite file, waits for a common start instant so workers overlap, consumes,
 * and prints how many calls were granted.
 * argv: <file> <clientKey> <day> <limit> <attempts> <startAtMs>
 */
import { createSqliteStore } from '../src/store/sqlite.js';

const [file, clientKey, day, limit, attempts, startAt] = process.argv.slice(2);
const store = createSqliteStore({ file });
while (Date.now() < Number(startAt)) await new Promise((r) => setTimeout(r, 2));
let granted = 0;
for (let i = 0; i < Number(attempts); i++) {
  if ((await store.consumeAllowance(clientKey, day, Number(limit))).allowed) granted++;
}
await store.close();
process.stdout.write(JSON.stringify({ granted }) + '\n');
