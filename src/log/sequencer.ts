/**
 * @module The sequencer: integrates queued receipts into the tree in batches,
 * off the request path, and publishes a signed checkpoint for each batch.
 * Every instance runs one; they need no coordination of their own, because
 * an append only succeeds when the tree still has the size it was computed
 * from (the store checks that under the database's write lock). A loser
 * re-reads and tries again, so there is one sequence with no fork and no gap.
 * A crash (kill -9) at any point leaves either the whole batch committed or
 * none of it; queued receipts stay queued until a batch that holds them commits.
 *
 * A sequencer signs only as the log's one note key: when its key is not the one
 * the database records, or the newest checkpoint is signed by another key, it
 * signs nothing and says why (status()); its receipts stay queued for an
 * instance that holds the log's key. Re-signing another key's checkpoint would
 * give the log two note-signing identities, which monitors rightly see as an attack.
 */
import { encodeLogEntry, logEntryOf } from './entry.js';
import { appendLeaves, frontierNodes, leafHash, tileLevelReader, type Hash } from './merkle.js';
import { formatCheckpoint, openCheckpoint, type NoteSigner } from './note.js';
import { TILE_HEIGHT } from './tiles.js';
import type { LogHead, TransparencyLogStore } from '../store/log-store.js';

export interface SequencerOptions {
  store: TransparencyLogStore;
  signer: NoteSigner;
  /** Checkpoint origin line (normally the same as the signer's key name). */
  origin: string;
  /** Time between integrations (default 200 ms: a receipt is in a checkpoint well within a second). */
  intervalMs?: number;
  /** Most receipts per append (default 256, one tile's width). */
  batchSize?: number;
  onError?: (err: unknown) => void;
  /**
   * Why this instance's note key is not the log's (the key the database records), or null: then it never signs
   * (see src/log/note-key.ts).
   */
  keyMismatch?: string | null;
  /**
   * Re-sign a newest checkpoint of another key, once, in the first integration: for a service without a fixed
   * public URL, whose log is named after the address it happens to listen on (a restart on another port renames
   * it). Never for an instance whose key is not the recorded one.
   */
  adoptAtStart?: boolean;
  /** Told when the first integration re-signed another key's checkpoint (see adoptAtStart). */
  onAdopt?: (previousNote: string) => void;
  /** Told when the sequencer starts or stops refusing to sign (the status changed). */
  onStatus?: (status: SequencerStatus | null) => void;
}

/** Why a sequencer refuses to sign checkpoints; `code` is stable, `problem` says it for people. */
export interface SequencerStatus {
  code: 'note_key_not_recorded' | 'checkpoint_signed_by_other_key';
  problem: string;
}

export interface Sequencer {
  start(): void;
  /** Stops the timer and waits for an integration in progress. */
  stop(): Promise<void>;
  /**
   * Integrates everything queued when it is called (one or more batches) and
   * returns the head after: the checkpoint then covers every receipt stored before the call.
   */
  integrate(): Promise<LogHead>;
  /** Null while this sequencer may sign checkpoints; else why it refuses (as of its last integration). */
  status(): SequencerStatus | null;
}

/** How many times a batch is recomputed after losing the race to another sequencer before giving up for this round. */
const MAX_CONFLICTS = 50;

/**
 * Entries hashed between two yields to the event loop. The sequencer shares the HTTP thread: hashing
 * a whole batch in one go (its leaves, and where the store does not hand over encoded entries, each
 * receipt's SHA-256 and entry) held requests back for several milliseconds per tick at 1,000
 * verifications/s; in slices, each pause stays well under one.
 */
const HASH_SLICE = 32;
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function createSequencer(options: SequencerOptions): Sequencer {
  const { store, signer, origin } = options;
  const intervalMs = options.intervalMs ?? 200;
  // One read of the queue per append, bounded (a store may read it synchronously on this thread), so a
  // backlog after downtime is caught up in many short steps rather than one long stall.
  const batchSize = options.batchSize ?? 256;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let running: Promise<LogHead> | null = null;
  let queued: Promise<LogHead> | null = null;
  /** Notes already checked (or written) by this process: re-verifying the same text each tick is waste. */
  let trustedNote = '';
  let status: SequencerStatus | null = options.keyMismatch ? { code: 'note_key_not_recorded', problem: options.keyMismatch } : null;
  let adopting = options.adoptAtStart === true && !options.keyMismatch;
  // Only the levels tiles serve are stored (every TILE_HEIGHT-th: leaves, then one node per 256 below it);
  // a frontier node between them is hashed up from those. The frontier of this sequencer's last append is
  // kept, so a tick reads no nodes unless another sequencer moved the tree (size and root tell).
  const readNodes = tileLevelReader((ids) => store.logNodes(ids), TILE_HEIGHT);
  let last: { size: number; root: Hash; frontier: Hash[] } | null = null;

  function noteIsOurs(head: LogHead): boolean {
    if (head.note === '') return false;
    if (head.note === trustedNote) return true;
    try {
      const c = openCheckpoint(head.note, signer.verifierKey, origin);
      if (c.size !== head.size || !c.root.equals(head.root)) return false;
      trustedNote = head.note;
      return true;
    } catch {
      return false;
    }
  }

  function refusal(head: LogHead, ours: boolean): SequencerStatus | null {
    if (options.keyMismatch) return { code: 'note_key_not_recorded', problem: options.keyMismatch };
    if (head.note === '' || ours || adopting) return null;
    return {
      code: 'checkpoint_signed_by_other_key',
      problem: `the newest checkpoint (tree size ${head.size}) is not signed by this instance's note key (${signer.verifierKey}), so this instance signs no checkpoint; run \`aov log resign\` only if the log's note key was changed on purpose`,
    };
  }

  function setStatus(next: SequencerStatus | null): void {
    if (next?.code === status?.code && next?.problem === status?.problem) return;
    status = next;
    options.onStatus?.(next);
  }

  async function once(): Promise<LogHead> {
    try {
      return await integrateBatches();
    } finally {
      adopting = false;
    }
  }

  async function integrateBatches(): Promise<LogHead> {
    let conflicts = 0;
    for (;;) {
      const head = await store.logHead();
      const ours = noteIsOurs(head);
      const refused = refusal(head, ours);
      setStatus(refused);
      if (refused) return head;
      const pending = await store.logPending(batchSize);
      // Signed at once even with nothing queued: the empty tree's first checkpoint, or one adopted at start.
      if (pending.length === 0 && ours) return head;

      const frontier = last && last.size === head.size && last.root.equals(head.root) ? last.frontier : await readNodes(frontierNodes(head.size));
      const entries: Array<{ index: number; verificationId: string; entry: string }> = [];
      const leaves: Buffer[] = [];
      for (let i = 0; i < pending.length; i++) {
        if (i > 0 && i % HASH_SLICE === 0) await yieldToLoop();
        const p = pending[i]!;
        const entry = p.entry ?? (p.record ? encodeLogEntry(logEntryOf(p.record)) : null);
        // A receipt deleted before it was logged leaves an orphan queue row: dropped, never logged.
        if (entry === null) continue;
        entries.push({ index: head.size + entries.length, verificationId: p.verificationId, entry });
        leaves.push(leafHash(Buffer.from(entry, 'utf8')));
      }
      const grown = appendLeaves(head.size, frontier, leaves);
      const note = signer.sign(formatCheckpoint({ origin, size: grown.size, root: grown.root }));
      const next: LogHead = { size: grown.size, root: grown.root, note };
      const nodes = grown.nodes.filter((n) => n.level % TILE_HEIGHT === 0);
      const ok = await store.logAppend({ expectedSize: head.size, entries, nodes, dequeue: pending.map((p) => p.seq), head: next });
      if (!ok) {
        // Another sequencer appended first: recompute from its tree.
        if (++conflicts > MAX_CONFLICTS) throw new Error('the log kept moving under this sequencer; will retry');
        continue;
      }
      if (!ours && head.note !== '') options.onAdopt?.(head.note);
      trustedNote = note;
      last = { size: grown.size, root: grown.root, frontier: grown.frontier };
      if (pending.length < batchSize) return next;
    }
  }

  function integrate(): Promise<LogHead> {
    // One integration at a time per process; callers arriving meanwhile share the next one,
    // which starts after theirs arrived and so covers what they stored.
    if (queued) return queued;
    if (!running) {
      running = once().finally(() => {
        running = null;
      });
      return running;
    }
    const after = running.catch(() => undefined);
    queued = after.then(() => {
      queued = null;
      running = once().finally(() => {
        running = null;
      });
      return running;
    });
    return queued;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      integrate().then(
        () => schedule(),
        (err: unknown) => {
          options.onError?.(err);
          schedule();
        },
      );
    }, intervalMs);
    // The sequencer never keeps the process alive by itself.
    timer.unref();
  }

  return {
    start() {
      if (timer || stopped) return;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await Promise.allSettled([running, queued]);
    },
    integrate,
    status: () => status,
  };
}
