/**
 * @module The entry of a store worker thread started from the TypeScript sources (tests, `npm run dev`):
 * registers tsx in this thread, then loads the worker module whose URL is the first argument. Plain
 * JavaScript, since nothing is compiled when it runs. A build starts the compiled worker modules directly
 * and never uses it (see workerModule in sqlite-worker-protocol.ts). Needed because on Node 20 tsx does
 * not register its hooks in a worker thread through `--import tsx` in the worker's execArgv. Its require
 * hook, not its module hooks: those start a hooks thread of their own in each worker (about a second
 * more per start on a busy machine), where the require hook compiles in this thread, from tsx's cache.
 */
import { createRequire } from 'node:module';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/cjs/api';

register();
createRequire(import.meta.url)(fileURLToPath(process.argv[2]));
