/**
 * @module The transparency log of a running service: the sequencer, the note
 * key, and the read side the HTTP routes and the service use — the current
 * checkpoint, tiles and entry bundles (C2SP tlog-tiles), inclusion proofs by
 * verification id and consistency proofs between two sizes.
 */
import type { CheckpointRef } from '../core/records.js';
import { ApiError, invalidRequest } from '../errors.js';
import type { LogHead, TransparencyLogStore } from '../store/log-store.js';
import { consistencyProof, inclusionProof, leafHash, tileLevelReader } from './merkle.js';
import { logOrigin, type NoteSigner } from './note.js';
import { createSequencer, type Sequencer, type SequencerStatus } from './sequencer.js';
import { encodeEntryBundle, tileExists, TILE_HEIGHT, TILE_WIDTH, type TileRef } from './tiles.js';

export { formatCheckpoint, logOrigin, noteVerifierKey, openCheckpoint } from './note.js';
export { defaultNoteKeyFile, loadOrCreateNoteSigner, openNoteKey, type NoteKey } from './note-key.js';
export type { SequencerStatus } from './sequencer.js';

export interface TransparencyLogOptions {
  store: TransparencyLogStore;
  signer: NoteSigner;
  publicBaseUrl: string;
  intervalMs?: number;
  onError?: (err: unknown) => void;
  /** The log's note key as the database records it, when it is not the signer's (the sequencer then never signs). */
  recordedVerifierKey?: string;
  /** Why the signer is not the log's note key (see openNoteKey), or null. */
  keyMismatch?: string | null;
  onStatus?: (status: SequencerStatus | null) => void;
  /** See SequencerOptions.adoptAtStart. */
  adoptAtStart?: boolean;
  onAdopt?: (previousNote: string) => void;
}

/** A tree head as reputation and scores name it (src/core/records.ts). */
export type { CheckpointRef } from '../core/records.js';

export interface InclusionAnswer {
  verification_id: string;
  index: number;
  tree_size: number;
  root_hash: string;
  leaf_hash: string;
  /** The entry text that was hashed (JSON, RFC 8785 form). */
  entry: string;
  inclusion_proof: string[];
  /** The signed checkpoint of tree_size and root_hash. */
  checkpoint: string;
}

export interface ConsistencyAnswer {
  from: number;
  to: number;
  consistency_proof: string[];
  /** The current signed checkpoint (its size is at least `to`). */
  checkpoint: string;
}

export interface TransparencyLog {
  readonly origin: string;
  /** The log's note verifier key (the one the database records, which is this instance's unless it is misconfigured). */
  readonly verifierKey: string;
  readonly sequencer: Sequencer;
  start(): void;
  stop(): Promise<void>;
  /** The latest published head; 503 until the first checkpoint exists. */
  head(): Promise<LogHead>;
  /** Integrates what is queued and names the resulting checkpoint. */
  checkpointNow(): Promise<CheckpointRef>;
  /** Tile or entry bundle bytes; 404 when the tree does not (yet) have it. */
  tile(ref: TileRef): Promise<Buffer>;
  proof(verificationId: string, receiptExists: () => Promise<boolean>): Promise<InclusionAnswer>;
  consistency(from: number, to: number): Promise<ConsistencyAnswer>;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

export function createTransparencyLog(options: TransparencyLogOptions): TransparencyLog {
  const { store, signer } = options;
  const origin = logOrigin(options.publicBaseUrl);
  const sequencer = createSequencer({
    store,
    signer,
    origin,
    intervalMs: options.intervalMs,
    onError: options.onError,
    keyMismatch: options.keyMismatch,
    onStatus: options.onStatus,
    adoptAtStart: options.adoptAtStart,
    onAdopt: options.onAdopt,
  });
  // The store keeps the tile levels only (see the sequencer); proofs hash the other levels up from them.
  const readNodes = tileLevelReader((ids) => store.logNodes(ids), TILE_HEIGHT);

  async function head(): Promise<LogHead> {
    const h = await store.logHead();
    if (h.note === '') throw new ApiError('unavailable', { message: 'The transparency log has no checkpoint yet; try again in a second.' });
    return h;
  }

  return {
    origin,
    verifierKey: options.recordedVerifierKey ?? signer.verifierKey,
    sequencer,
    start: () => sequencer.start(),
    stop: () => sequencer.stop(),
    head,

    async checkpointNow() {
      // Integration can lose races to other instances for a while; a reader then gets the latest
      // published head (still exact for what it names) rather than an error.
      const h = await sequencer.integrate().catch(() => head());
      return { tree_size: h.size, root_hash: b64(h.root) };
    },

    async tile(ref: TileRef) {
      const h = await head();
      if (!tileExists(ref, h.size)) throw new ApiError('not_found', { message: 'The log has no such tile at its current size.' });
      const from = ref.index * TILE_WIDTH;
      const to = from + ref.width;
      if (ref.level < 0) {
        const entries = await store.logEntries(from, to);
        if (entries.length !== ref.width) throw new Error(`entry bundle ${ref.index}: ${entries.length} of ${ref.width} entries stored`);
        return encodeEntryBundle(entries.map((e) => Buffer.from(e, 'utf8')));
      }
      const hashes = await store.logNodeRange(ref.level * TILE_HEIGHT, from, to);
      if (hashes.length !== ref.width) throw new Error(`tile ${ref.level}/${ref.index}: ${hashes.length} of ${ref.width} hashes stored`);
      return Buffer.concat(hashes);
    },

    async proof(verificationId, receiptExists) {
      let found = await store.logEntryOf(verificationId);
      if (!found) {
        if (!(await receiptExists())) throw new ApiError('not_found', { message: 'No verification with this id.' });
        // Stored but not yet integrated (at most a fraction of a second): integrate now.
        await sequencer.integrate();
        found = await store.logEntryOf(verificationId);
        if (!found) throw new ApiError('unavailable', { message: 'The receipt is not in the log yet; try again in a second.' });
      }
      let h = await head();
      if (found.index >= h.size) h = await sequencer.integrate();
      const proof = await inclusionProof(found.index, h.size, readNodes);
      return {
        verification_id: verificationId,
        index: found.index,
        tree_size: h.size,
        root_hash: b64(h.root),
        leaf_hash: b64(leafHash(Buffer.from(found.entry, 'utf8'))),
        entry: found.entry,
        inclusion_proof: proof.map(b64),
        checkpoint: h.note,
      };
    },

    async consistency(from, to) {
      const h = await head();
      const problems = [];
      if (!Number.isSafeInteger(from) || from < 1) problems.push({ field: 'from', problem: 'must be an integer of at least 1', fix: 'pass the size of an earlier checkpoint' });
      if (!Number.isSafeInteger(to) || to > h.size) problems.push({ field: 'to', problem: `must be an integer no larger than the current tree size (${h.size})`, fix: 'pass the size of a published checkpoint' });
      if (problems.length === 0 && from > to) problems.push({ field: 'from', problem: 'must not be larger than to', fix: 'pass the older size as from' });
      if (problems.length > 0) throw invalidRequest(problems);
      const proof = await consistencyProof(from, to, readNodes);
      return { from, to, consistency_proof: proof.map(b64), checkpoint: h.note };
    },
  };
}
