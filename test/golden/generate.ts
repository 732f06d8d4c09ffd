/** @module Rewrites the golden receipt files (run only when a change to their bytes is intended). */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { GOLDEN_DIR, goldenAgentCard, issueGoldenReceipts } from './golden.js';

for (const [file, text] of issueGoldenReceipts()) {
  writeFileSync(path.join(GOLDEN_DIR, file), text);
  console.log(`wrote test/golden/${file} (${Buffer.byteLength(text)} bytes)`);
}
writeFileSync(path.join(GOLDEN_DIR, 'agent-card.json'), `${JSON.stringify(goldenAgentCard(), null, 2)}\n`);
console.log('wrote test/golden/agent-card.json');
