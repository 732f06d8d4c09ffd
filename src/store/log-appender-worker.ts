/**
 * @module The transparency log's appender thread of the embedded SQLite store (started by log-sqlite.ts
 * on the first append): its own connection, so neither the rows nor the disk sync of an append ever stop
 * the event loop, and the compare-and-swap on the tree size happens inside this connection's IMMEDIATE
 * transaction, where SQLite's single writer lock serializes every thread and process sharing the file.
 */
import { close, fdatasync, open } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { createLogAppend } from './log-sqlite-ops.js';
import { failed, startWorker, type AppenderData, type AppenderMessage, type AppenderReply } from './sqlite-worker-protocol.js';

const data = workerData as AppenderData;
const { port, db } = startWorker('log-appender-worker', data, data.busyTimeoutMs);
db.pragma('journal_mode = WAL');
// A published checkpoint must never be lost (a lost one could be re-signed differently: a fork), so an append
// is answered only once its WAL frames are on disk. As in the receipt writer, the commit itself does not sync
// (synchronous=NORMAL) and the WAL file is synced right after, outside the write lock: the receipt writer
// never waits for this thread's disk sync.
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
const walFile = data.file + '-wal';
const append = createLogAppend(db);

function syncWal(done: (e: Error | null) => void): void {
  open(walFile, 'r', (e, fd) => {
    if (e) return done(e);
    fdatasync(fd, (e2) => close(fd, () => done(e2)));
  });
}

const reply = (r: AppenderReply): void => port.postMessage(r);

port.on('message', (m: AppenderMessage) => {
  if (m === 'close') {
    db.close();
    reply('closed');
    port.close();
    return;
  }
  let value: boolean;
  try {
    value = append.immediate(m.batch);
  } catch (e) {
    reply(failed(m.id, e));
    return;
  }
  if (!value) {
    reply({ id: m.id, ok: true, value });
    return;
  }
  syncWal((e) => reply(e ? { id: m.id, ok: false, message: 'log append not synced: ' + e.message } : { id: m.id, ok: true, value }));
});
