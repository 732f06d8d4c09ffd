/**
 * @module The SQLite store's checkpointer thread (started by sqlite-offload.ts beside the writer), which
 * also serves the transparency log's queue read.
 *
 * A PASSIVE checkpoint copies committed WAL frames into the database file without blocking the writer.
 * SQLite starts the WAL over only when a write transaction begins with every frame already copied, which
 * under steady load never happens (the writer appends while the copy runs): so once the WAL is past its
 * bound, a RESTART checkpoint follows the PASSIVE one. It holds the writer back while it copies the few
 * frames written during the PASSIVE copy and syncs the database file, then the writer's next commit starts
 * the WAL over (and cuts the file to the bound). A RESTART also waits for every reader of an older snapshot
 * (a long query, a backup) while it holds the writer back, so it waits at most restartWaitMs and otherwise
 * gives up until the next tick.
 *
 * SQLite syncs the database file only at the end of a checkpoint that copied every frame, which under
 * steady load only a RESTART does: it then synced all that the PASSIVE checkpoints had copied since the
 * last one (tens of MB, left to the kernel's write-back meanwhile) while it held the writer, 17-57 ms under
 * load. So this thread syncs the database file itself after each PASSIVE that copied frames, holding no
 * lock, and a RESTART is left with a tick's worth (1.5-4.4 ms). Durability does not depend on it: until
 * the WAL starts over, its frames are still there.
 */
import { fdatasyncSync, openSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { createLogPending } from './log-sqlite-ops.js';
import { closeQuietly, failed, sharedHistogramObserver, startWorker, type CheckpointerData, type CheckpointerMessage } from './sqlite-worker-protocol.js';

const data = workerData as CheckpointerData;
const { port, db } = startWorker('sqlite-checkpointer-worker', data, data.restartWaitMs);
db.pragma('synchronous = ' + data.synchronous);
const pageSize = db.pragma('page_size', { simple: true }) as number;
// The log's queue read is served here, a reader beside the writer: reading back and hashing a batch of
// receipts took 2-14 ms, and on the writer every allowance and receipt that arrived meanwhile waited.
const logPending = createLogPending(db);
// How long each RESTART held the writer back (walRestarts()).
const observeRestart = sharedHistogramObserver(data.walRestarts);
let dbFd: number | null = null;
// The WAL's backfilled frame count at the last sync of the database file.
let syncedFrames = 0;

function closeDb(): void {
  if (dbFd === null) return;
  closeQuietly(dbFd);
  dbFd = null;
}

function syncDatabaseFile(checkpointed: number): void {
  if (checkpointed === 0 || checkpointed === syncedFrames) return;
  try {
    if (dbFd === null) dbFd = openSync(data.file, 'r');
    fdatasyncSync(dbFd);
    syncedFrames = checkpointed;
  } catch {
    closeDb(); /* the next tick tries again; the RESTART's own sync still covers it */
  }
}

const timer = setInterval(() => {
  try {
    const [state] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    if (!state) return;
    syncDatabaseFile(state.checkpointed);
    if (state.log * pageSize > data.walLimitBytes) {
      const started = performance.now();
      try {
        db.pragma('wal_checkpoint(RESTART)');
      } finally {
        observeRestart(performance.now() - started);
      }
    }
  } catch {
    /* busy or closing: the next tick tries again */
  }
}, data.intervalMs);

port.on('message', (m: CheckpointerMessage) => {
  if (m === 'close') {
    clearInterval(timer);
    closeDb();
    db.close();
    port.postMessage('closed');
    port.close();
    return;
  }
  try {
    port.postMessage({ id: m.id, ok: true, value: logPending(m.limit) });
  } catch (e) {
    port.postMessage(failed(m.id, e));
  }
});
