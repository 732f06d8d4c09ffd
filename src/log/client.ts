/**
 * @module What a third party does with a service's log, over HTTP only:
 * prove that a receipt file is the one logged (inclusion against a signed
 * checkpoint), and monitor the log — check each new checkpoint extends the
 * last one seen and read the new entries from the tiles, per agent. The
 * monitor keeps the tree's frontier in its state, so the new entries and the
 * old state must hash to exactly the new root: no entry can be hidden,
 * changed or reordered without the check failing.
 */
import { decodeLogEntry, receiptSha256, type LogEntry } from './entry.js';
import { appendLeaves, leafHash, verifyConsistency, verifyInclusion } from './merkle.js';
import { openCheckpoint, parseVerifierKey, type Checkpoint } from './note.js';
import { decodeEntryBundle, encodeTileIndex, TILE_WIDTH } from './tiles.js';

export type Fetch = (url: string) => Promise<{ ok: boolean; status: number; text(): Promise<string>; arrayBuffer(): Promise<ArrayBuffer> }>;

/** The log prefix of a service URL: `https://host` and `https://host/log` both give `https://host/log`. */
function logPrefix(url: string): string {
  const u = url.replace(/\/+$/, '');
  return u.endsWith('/log') ? u : `${u}/log`;
}

async function get(fetcher: Fetch, url: string): Promise<{ text(): Promise<string>; arrayBuffer(): Promise<ArrayBuffer> }> {
  const res = await fetcher(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

export interface ReceiptCheck {
  ok: boolean;
  problems: string[];
  verificationId: string | null;
  index: number | null;
  checkpoint: Checkpoint | null;
}

/**
 * Checks that the receipt (its exact bytes) is in the log: the served entry
 * hashes those bytes and names the receipt's id, task, agent, result and time,
 * the checkpoint's signature verifies with the log key, and the inclusion
 * proof leads from the entry to the checkpoint's root.
 */
export async function checkReceiptInLog(options: { receiptText: string; logUrl: string; verifierKey?: string; fetch?: Fetch }): Promise<ReceiptCheck> {
  const fetcher = options.fetch ?? (fetch as unknown as Fetch);
  const prefix = logPrefix(options.logUrl);
  const problems: string[] = [];
  let receipt: Record<string, unknown>;
  try {
    receipt = JSON.parse(options.receiptText) as Record<string, unknown>;
  } catch {
    return { ok: false, problems: ['the receipt file is not JSON'], verificationId: null, index: null, checkpoint: null };
  }
  const id = typeof receipt.verification_id === 'string' ? receipt.verification_id : null;
  if (!id) return { ok: false, problems: ['the receipt has no verification_id'], verificationId: null, index: null, checkpoint: null };
  const vkey = options.verifierKey ?? (await (await get(fetcher, `${prefix}/key`)).text()).trim();
  parseVerifierKey(vkey);
  const proof = JSON.parse(await (await get(fetcher, `${prefix}/proof/${encodeURIComponent(id)}`)).text()) as {
    index: number;
    tree_size: number;
    root_hash: string;
    entry: string;
    inclusion_proof: string[];
    checkpoint: string;
  };
  let checkpoint: Checkpoint | null = null;
  try {
    checkpoint = openCheckpoint(proof.checkpoint, vkey);
  } catch (e) {
    problems.push(`checkpoint: ${(e as Error).message}`);
  }
  const entry = decodeLogEntry(proof.entry);
  if (!entry) problems.push('the served entry is not a log entry');
  else {
    if (entry.receipt_sha256 !== receiptSha256(options.receiptText)) problems.push('the logged receipt_sha256 is not the SHA-256 of this receipt file (is it the exact bytes GET /verifications/{id} serves?)');
    const expect: Array<[keyof LogEntry, unknown]> = [
      ['verification_id', receipt.verification_id],
      ['task_id', receipt.task_id],
      ['agent_id', receipt.agent_id],
      ['result', receipt.result],
      ['verified_at', receipt.verified_at],
    ];
    for (const [k, v] of expect) if (entry[k] !== v) problems.push(`the logged ${k} differs from the receipt's`);
  }
  if (checkpoint) {
    if (checkpoint.size !== proof.tree_size || b64(checkpoint.root) !== proof.root_hash) problems.push('the proof is not against the checkpoint it names');
    const ok = verifyInclusion(
      proof.index,
      checkpoint.size,
      leafHash(Buffer.from(proof.entry, 'utf8')),
      proof.inclusion_proof.map((p) => Buffer.from(p, 'base64')),
      checkpoint.root,
    );
    if (!ok) problems.push('the inclusion proof does not lead to the checkpoint root');
  }
  return { ok: problems.length === 0, problems, verificationId: id, index: proof.index, checkpoint };
}

/** What a monitor remembers between runs. */
export interface MonitorState {
  log: string;
  verifier_key: string;
  origin: string;
  size: number;
  root_hash: string;
  /** Frontier hashes (base64) of the tree at `size`: enough to extend it with new entries. */
  frontier: string[];
}

export interface AgentDelta {
  agent_id: string | null;
  added: number;
  passes: number;
  fails: number;
  verification_ids: string[];
}

export interface MonitorReport {
  ok: boolean;
  problems: string[];
  from: number;
  to: number;
  agents: AgentDelta[];
  state: MonitorState;
}

/**
 * One monitor run: fetch and verify the newest checkpoint, check it extends the
 * last one seen (RFC 9162 consistency proof, and the new entries from the
 * tiles extend the remembered frontier to exactly the new root), and report
 * what each agent gained.
 */
export async function monitorLog(options: { logUrl: string; state?: MonitorState | null; verifierKey?: string; fetch?: Fetch }): Promise<MonitorReport> {
  const fetcher = options.fetch ?? (fetch as unknown as Fetch);
  const prefix = logPrefix(options.logUrl);
  const old = options.state ?? null;
  const problems: string[] = [];
  const vkey = options.verifierKey ?? old?.verifier_key ?? (await (await get(fetcher, `${prefix}/key`)).text()).trim();
  if (old && old.verifier_key !== vkey) throw new Error('the log key differs from the one in the state file');
  const note = await (await get(fetcher, `${prefix}/checkpoint`)).text();
  const cp = openCheckpoint(note, vkey, old?.origin);
  const from = old?.size ?? 0;
  const fail = (p: string): MonitorReport => ({ ok: false, problems: [...problems, p], from, to: cp.size, agents: [], state: old as MonitorState });
  if (old && cp.size < old.size) return fail(`the log shrank: checkpoint size ${cp.size} < ${old.size} seen before`);
  if (old && cp.size === old.size && b64(cp.root) !== old.root_hash) return fail('fork: same size, different root');
  if (old && old.size > 0 && cp.size > old.size) {
    const c = JSON.parse(await (await get(fetcher, `${prefix}/consistency?from=${old.size}&to=${cp.size}`)).text()) as { consistency_proof: string[] };
    const ok = verifyConsistency(old.size, cp.size, c.consistency_proof.map((p) => Buffer.from(p, 'base64')), Buffer.from(old.root_hash, 'base64'), cp.root);
    if (!ok) return fail('fork: the new checkpoint is not consistent with the last one seen');
  }
  // Read the new entries from the entry bundles.
  const entries: Buffer[] = [];
  for (let n = Math.floor(from / TILE_WIDTH); n * TILE_WIDTH < cp.size; n++) {
    const width = Math.min(TILE_WIDTH, cp.size - n * TILE_WIDTH);
    const url = `${prefix}/tile/entries/${encodeTileIndex(n)}${width < TILE_WIDTH ? `.p/${width}` : ''}`;
    const bundle = decodeEntryBundle(new Uint8Array(await (await get(fetcher, url)).arrayBuffer()));
    if (bundle.length !== width) return fail(`entry bundle ${n} has ${bundle.length} entries, expected ${width}`);
    const skip = Math.max(0, from - n * TILE_WIDTH);
    entries.push(...bundle.slice(skip));
  }
  const frontier = (old?.frontier ?? []).map((h) => Buffer.from(h, 'base64'));
  const grown = appendLeaves(from, frontier, entries.map((e) => leafHash(e)));
  if (!grown.root.equals(cp.root)) return fail('the entries served by the tiles do not hash to the checkpoint root');
  const agents = new Map<string, AgentDelta>();
  for (const raw of entries) {
    const e = decodeLogEntry(raw.toString('utf8'));
    if (!e) {
      problems.push('an entry is not a log entry');
      continue;
    }
    const key = JSON.stringify(e.agent_id);
    const d = agents.get(key) ?? { agent_id: e.agent_id, added: 0, passes: 0, fails: 0, verification_ids: [] };
    d.added += 1;
    if (e.result === 'pass') d.passes += 1;
    else d.fails += 1;
    d.verification_ids.push(e.verification_id);
    agents.set(key, d);
  }
  const state: MonitorState = {
    log: prefix,
    verifier_key: vkey,
    origin: cp.origin,
    size: cp.size,
    root_hash: b64(cp.root),
    frontier: grown.frontier.map(b64),
  };
  return { ok: problems.length === 0, problems, from, to: cp.size, agents: [...agents.values()], state };
}
