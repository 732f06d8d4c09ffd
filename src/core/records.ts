/**
 * @module The wire form of an agent's record (GET /reputation/{agent_id}, the trust
 * score's log checkpoint), written once: the store returns it, the service sends it,
 * the client reads it. Types only, so the browser client can import them without
 * pulling code.
 */

/** A transparency-log tree head, as reputation and the trust score name it. */
export interface CheckpointRef {
  tree_size: number;
  /** Standard base64 of the 32-byte root hash, as in GET /log/checkpoint. */
  root_hash: string;
}

/** One verification in an agent's history. */
export interface HistoryEntry {
  verification_id: string;
  task_id: string;
  result: 'pass' | 'fail';
  overall_ratio: number;
  verified_at: string;
}

/** GET /reputation/{agent_id}: one page of an agent's history, newest first. */
export interface ReputationPage {
  agent_id: string;
  verifications: number;
  passes: number;
  fails: number;
  /** passes / verifications rounded to 6 decimals; 0 when none. */
  pass_rate: number;
  first_seen: string | null;
  last_seen: string | null;
  history: HistoryEntry[];
  /** Opaque cursor: pass it as `cursor` for the next (older) page; null on the last page. */
  next_cursor: string | null;
  /** The transparency-log checkpoint this page was read at (it covers every receipt stored before the request), when the service keeps a log. */
  log_checkpoint?: CheckpointRef;
}
