/**
 * @module The operator's audit of the store against its log: every logged
 * entry still has its receipt row, unchanged (its entry recomputed from the
 * row is byte-identical); the stored leaves and the rebuilt root match the
 * head; the head's checkpoint is signed by the note key; and every stored
 * receipt is in the log (or still queued, waiting for the sequencer). A
 * deleted or edited receipt row, or a receipt that never reached the log, is
 * a finding. Given a checkpoint published earlier (kept by a monitor, or read
 * from the service before a restore), the store's tree must still contain it:
 * a store restored from an older backup shows its lost tail here.
 */
import type { TransparencyLogStore } from '../store/log-store.js';
import { encodeLogEntry, logEntryOf } from './entry.js';
import { appendLeaves, leafHash, type Hash } from './merkle.js';
import { openCheckpoint } from './note.js';

export interface AuditFinding {
  kind:
    | 'receipt_deleted'
    | 'receipt_changed'
    | 'leaf_mismatch'
    | 'index_gap'
    | 'root_mismatch'
    | 'checkpoint_invalid'
    | 'not_logged'
    | 'tail_lost'
    | 'checkpoint_fork';
  index?: number;
  verification_id?: string;
  detail: string;
}

export interface AuditReport {
  ok: boolean;
  tree_size: number;
  root_hash: string;
  entries_checked: number;
  /** Stored receipts waiting in the queue (integrated within a second by a running service). */
  queued: number;
  findings: AuditFinding[];
}

const PAGE = 1000;
const MAX_FINDINGS = 1000;

export interface AuditOptions {
  /**
   * The verifier key of the note key, given the origin the head checkpoint names (the key name is the
   * origin, so the operator's key file alone identifies the key); omit to skip the signature check.
   */
  verifierKeyFor?: (origin: string) => string;
  /** A tree head published earlier, which the store's tree must contain (same root at that size). */
  published?: { size: number; root: Buffer };
}

export async function auditLog(store: TransparencyLogStore, options: AuditOptions = {}): Promise<AuditReport> {
  const findings: AuditFinding[] = [];
  const add = (f: AuditFinding) => {
    if (findings.length < MAX_FINDINGS) findings.push(f);
  };
  const head = await store.logHead();
  if (options.verifierKeyFor) {
    try {
      const origin = head.note.slice(0, Math.max(0, head.note.indexOf('\n')));
      const c = openCheckpoint(head.note, options.verifierKeyFor(origin), origin);
      if (c.size !== head.size || !c.root.equals(head.root)) add({ kind: 'checkpoint_invalid', detail: 'the signed checkpoint does not match the stored head' });
    } catch (e) {
      add({ kind: 'checkpoint_invalid', detail: `the head checkpoint does not verify: ${(e as Error).message}` });
    }
  }
  let size = 0;
  let frontier: Hash[] = [];
  let checked = 0;
  const published = options.published;
  let rootAtPublished: Hash | null = published?.size === 0 ? appendLeaves(0, [], []).root : null;
  for (;;) {
    const rows = await store.logAuditPage(size, PAGE);
    if (rows.length === 0) break;
    const leaves: Hash[] = [];
    for (const r of rows) {
      if (r.index !== size + leaves.length) {
        add({ kind: 'index_gap', index: size + leaves.length, detail: `entry ${size + leaves.length} is missing (next stored is ${r.index})` });
        return report();
      }
      const leaf = leafHash(Buffer.from(r.entry, 'utf8'));
      if (!r.leaf || !r.leaf.equals(leaf)) add({ kind: 'leaf_mismatch', index: r.index, verification_id: r.verificationId, detail: 'the stored leaf hash is not the hash of the stored entry' });
      if (!r.receipt) {
        add({ kind: 'receipt_deleted', index: r.index, verification_id: r.verificationId, detail: 'the logged receipt is no longer in the store' });
      } else if (encodeLogEntry(logEntryOf(r.receipt)) !== r.entry) {
        add({ kind: 'receipt_changed', index: r.index, verification_id: r.verificationId, detail: 'the stored receipt no longer matches its logged entry' });
      }
      leaves.push(leaf);
    }
    if (published && size < published.size && size + leaves.length >= published.size) {
      rootAtPublished = appendLeaves(size, frontier, leaves.slice(0, published.size - size)).root;
    }
    const grown = appendLeaves(size, frontier, leaves);
    size = grown.size;
    frontier = grown.frontier;
    checked += rows.length;
  }
  return report();

  async function report(): Promise<AuditReport> {
    const root = appendLeaves(size, frontier, []).root;
    if (size !== head.size || !root.equals(head.root)) {
      add({ kind: 'root_mismatch', detail: `the entries rebuild a tree of ${size} with root ${root.toString('base64')}; the head says ${head.size} with ${head.root.toString('base64')}` });
    }
    if (published && size < published.size) {
      add({ kind: 'tail_lost', detail: `the store's log has ${size} entries; a checkpoint published ${published.size}: entries ${size}–${published.size - 1} are not in this store` });
    } else if (published && rootAtPublished && !rootAtPublished.equals(published.root)) {
      add({ kind: 'checkpoint_fork', detail: `the store's first ${published.size} entries hash to ${rootAtPublished.toString('base64')}, not to the published root ${published.root.toString('base64')}` });
    }
    let queued = 0;
    for (const u of await store.logUnlogged(MAX_FINDINGS)) {
      if (u.queued) queued += 1;
      else add({ kind: 'not_logged', verification_id: u.verificationId, detail: 'a stored receipt is neither in the log nor queued for it' });
    }
    return { ok: findings.length === 0, tree_size: head.size, root_hash: head.root.toString('base64'), entries_checked: checked, queued, findings };
  }
}
