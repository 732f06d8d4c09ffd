/**
 * @module The entry of a store worker thread started from the TypeScript sources (tests, `npm run dev`):
 * registers tsx in this thread, then loads the worker module whose URL is the first argument. Plain
 * JavaScript, since nothing is compiled when it runs. A build starts the compiled worker modules directly
 * and never uses it (see workerModule in sqlite-worker-protocol.ts). Needed because on Node 20 tsx does
 * not register its hooks in a worker thread through `--import tsx` in the worker's execArgv.
 */
import process from 'node:process';
import { register } from 'tsx/esm/api';

register();
await import(process.argv[2]);
