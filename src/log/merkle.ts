/**
 * @module RFC 6962 / RFC 9162 Merkle tree arithmetic for the transparency log:
 * leaf and node hashing, appending leaves to a tree kept as its "frontier"
 * (the hashes of its maximal complete subtrees), which stored node hashes an
 * inclusion or consistency proof needs, and the verifiers of both proofs.
 *
 * Nodes are named (level, index): the complete subtree of 2^level leaves that
 * starts at leaf index·2^level. Only complete subtrees are ever stored, so a
 * stored node never changes once written; every other hash (a root, the right
 * edge of a proof) is computed from them. Pure: no I/O.
 */
import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';

export type Hash = Buffer;

export interface NodeId {
  level: number;
  index: number;
}

export interface StoredNode extends NodeId {
  hash: Hash;
}

/** MTH of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Hash = createHash('sha256').digest();

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

// One-shot crypto.hash (Node ≥ 20.12) is several times cheaper than a Hash object per call; the sequencer
// hashes every entry and about one inner node per entry, so this is most of its hashing cost.
const oneShot = (crypto as unknown as { hash?: (alg: string, data: Uint8Array, enc: 'buffer') => Buffer }).hash;

/** SHA-256 of the concatenation of `parts`. */
export function sha256(...parts: Uint8Array[]): Hash {
  if (oneShot) return oneShot('sha256', parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts), 'buffer');
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
}

export function leafHash(data: Uint8Array): Hash {
  return sha256(LEAF_PREFIX, data);
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Hash {
  return sha256(NODE_PREFIX, left, right);
}

function assertSize(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative integer, got ${n}`);
}

/** Largest power of two strictly less than n (n ≥ 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** The maximal complete subtrees of a tree of `size` leaves, left to right (largest first). */
export function frontierNodes(size: number): NodeId[] {
  assertSize(size, 'size');
  const out: NodeId[] = [];
  let start = 0;
  for (let level = 52; level >= 0; level--) {
    const width = 2 ** level;
    if (start + width <= size && Math.floor(size / width) % 2 === 1) {
      out.push({ level, index: start / width });
      start += width;
    }
  }
  return out;
}

/** Root of a tree given its frontier hashes (left to right), as RFC 6962 MTH defines it. */
function rootFromFrontier(frontier: readonly Hash[]): Hash {
  if (frontier.length === 0) return EMPTY_ROOT;
  let root = frontier[frontier.length - 1] as Hash;
  for (let i = frontier.length - 2; i >= 0; i--) root = nodeHash(frontier[i] as Hash, root);
  return root;
}

export interface AppendResult {
  /** Every node that became complete, leaves included, in creation order. */
  nodes: StoredNode[];
  /** Frontier hashes of the new tree, left to right. */
  frontier: Hash[];
  size: number;
  root: Hash;
}

/**
 * Appends leaf hashes to a tree of `size` leaves whose frontier hashes are
 * given (left to right, as {@link frontierNodes} lists them). Returns the
 * nodes to store and the new frontier and root; the work is proportional to
 * the number of new nodes, never to the size of the tree.
 */
export function appendLeaves(size: number, frontier: readonly Hash[], leaves: readonly Hash[]): AppendResult {
  const ids = frontierNodes(size);
  if (ids.length !== frontier.length) throw new RangeError(`a tree of ${size} leaves has ${ids.length} frontier hashes, got ${frontier.length}`);
  const stack: Array<{ level: number; hash: Hash }> = ids.map((id, i) => ({ level: id.level, hash: frontier[i] as Hash }));
  const nodes: StoredNode[] = [];
  let n = size;
  for (const leaf of leaves) {
    let cur = { level: 0, hash: leaf };
    nodes.push({ level: 0, index: n, hash: leaf });
    n += 1;
    // Merge while the top of the stack is a complete sibling of the same height; the merged
    // node ends at leaf n-1, so at `level` its index is floor((n-1) / 2^level).
    while (stack.length > 0 && (stack[stack.length - 1] as { level: number }).level === cur.level) {
      const left = stack.pop() as { level: number; hash: Hash };
      cur = { level: cur.level + 1, hash: nodeHash(left.hash, cur.hash) };
      nodes.push({ level: cur.level, index: Math.floor((n - 1) / 2 ** cur.level), hash: cur.hash });
    }
    stack.push(cur);
  }
  const newFrontier = stack.map((s) => s.hash);
  return { nodes, frontier: newFrontier, size: n, root: rootFromFrontier(newFrontier) };
}

/** A half-open range of leaves [lo, hi) whose Merkle Tree Hash a proof needs. */
export interface LeafRange {
  lo: number;
  hi: number;
}

/**
 * The complete subtrees whose hashes make up MTH(D[lo:hi]), left to right.
 * Ranges produced by RFC 9162 proofs start at a multiple of a power of two at
 * least as large as their widest piece, so the decomposition is the binary
 * expansion of the width, largest first.
 */
function rangeNodes(range: LeafRange): NodeId[] {
  const { lo, hi } = range;
  if (!(Number.isSafeInteger(lo) && Number.isSafeInteger(hi) && 0 <= lo && lo < hi)) throw new RangeError(`bad leaf range [${lo}, ${hi})`);
  const out: NodeId[] = [];
  let start = lo;
  for (let level = 52; level >= 0; level--) {
    const width = 2 ** level;
    if (start + width <= hi && start % width === 0) {
      out.push({ level, index: start / width });
      start += width;
    }
  }
  if (start !== hi) throw new RangeError(`leaf range [${lo}, ${hi}) is not aligned`);
  return out;
}

/** MTH of a range from the hashes of its {@link rangeNodes}, left to right. */
function rangeHashFrom(hashes: readonly Hash[]): Hash {
  return rootFromFrontier(hashes);
}

/** RFC 9162 §2.1.3.1 PATH(m, D[0:n]) as leaf ranges, bottom-up (the order of the proof). */
function inclusionRanges(index: number, size: number): LeafRange[] {
  assertSize(index, 'index');
  assertSize(size, 'size');
  if (index >= size) throw new RangeError(`index ${index} is not in a tree of ${size} leaves`);
  const path = (m: number, lo: number, n: number): LeafRange[] => {
    if (n <= 1) return [];
    const k = splitPoint(n);
    if (m < k) return [...path(m, lo, k), { lo: lo + k, hi: lo + n }];
    return [...path(m - k, lo + k, n - k), { lo, hi: lo + k }];
  };
  return path(index, 0, size);
}

/** RFC 9162 §2.1.4.1 PROOF(m, D[0:n]) as leaf ranges, in proof order. Empty when m = n or m = 0. */
function consistencyRanges(m: number, n: number): LeafRange[] {
  assertSize(m, 'from');
  assertSize(n, 'to');
  if (m > n) throw new RangeError(`from (${m}) is larger than to (${n})`);
  if (m === 0 || m === n) return [];
  const sub = (m1: number, lo: number, n1: number, whole: boolean): LeafRange[] => {
    if (m1 === n1) return whole ? [] : [{ lo, hi: lo + m1 }];
    const k = splitPoint(n1);
    if (m1 <= k) return [...sub(m1, lo, k, whole), { lo: lo + k, hi: lo + n1 }];
    return [...sub(m1 - k, lo + k, n1 - k, false), { lo, hi: lo + k }];
  };
  return sub(m, 0, n, true);
}

/** Reads stored node hashes (in the order asked); throws when one is missing. */
export type NodeReader = (ids: readonly NodeId[]) => Promise<Hash[]> | Hash[];

/**
 * A reader of every complete node over a store that keeps only the levels a tile holds (multiples
 * of `stride`, as C2SP tlog-tiles serves them): a node at level b + r (0 < r < stride) is hashed up
 * from its 2^r descendants at level b, which are complete whenever it is. Storing the other levels
 * would double the rows the log writes per receipt for nodes that only proofs and the frontier
 * read, and those are rare and bounded (at most 2^(stride-1) stored hashes per node asked).
 */
export function tileLevelReader(read: NodeReader, stride: number): NodeReader {
  return async (ids) => {
    const wanted: NodeId[] = [];
    for (const id of ids) {
      const width = 2 ** (id.level % stride);
      const base = id.level - (id.level % stride);
      for (let i = 0; i < width; i++) wanted.push({ level: base, index: id.index * width + i });
    }
    const got = wanted.length > 0 ? await read(wanted) : [];
    if (got.length !== wanted.length) throw new Error(`node reader returned ${got.length} hashes for ${wanted.length} nodes`);
    let at = 0;
    return ids.map((id) => {
      const width = 2 ** (id.level % stride);
      let row = got.slice(at, at + width);
      at += width;
      while (row.length > 1) {
        const up: Hash[] = [];
        for (let i = 0; i < row.length; i += 2) up.push(nodeHash(row[i] as Hash, row[i + 1] as Hash));
        row = up;
      }
      return row[0] as Hash;
    });
  };
}

/** Computes the hashes of leaf ranges, reading all needed nodes in one call. */
async function rangeHashes(ranges: readonly LeafRange[], read: NodeReader): Promise<Hash[]> {
  const perRange = ranges.map(rangeNodes);
  const all = perRange.flat();
  const hashes = all.length > 0 ? await read(all) : [];
  if (hashes.length !== all.length) throw new Error(`node reader returned ${hashes.length} hashes for ${all.length} nodes`);
  let at = 0;
  return perRange.map((ids) => {
    const part = hashes.slice(at, at + ids.length);
    at += ids.length;
    return rangeHashFrom(part);
  });
}

export async function inclusionProof(index: number, size: number, read: NodeReader): Promise<Hash[]> {
  return rangeHashes(inclusionRanges(index, size), read);
}

export async function consistencyProof(m: number, n: number, read: NodeReader): Promise<Hash[]> {
  return rangeHashes(consistencyRanges(m, n), read);
}

/** Root of the tree of `size` leaves from stored nodes. */
export async function treeRoot(size: number, read: NodeReader): Promise<Hash> {
  const ids = frontierNodes(size);
  return rootFromFrontier(ids.length > 0 ? await read(ids) : []);
}

/**
 * The walk up the tree that RFC 9162's inclusion (§2.1.3.2) and consistency (§2.1.4.2) checks
 * share: from node `fn` of a tree whose last node is `sn`, one proof hash per level, `left(c)` where
 * `c` is a left sibling (hashed before the running value) and `right(c)` where it is a right one.
 * True when the proof ends at the root (sn = 0), false when it is longer or shorter than the path.
 */
function walkProof(fn: number, sn: number, proof: readonly Uint8Array[], left: (c: Uint8Array) => void, right: (c: Uint8Array) => void): boolean {
  for (const c of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      left(c);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      right(c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0;
}

/** RFC 9162 §2.1.3.2: does `proof` show that `leaf` is at `index` in the tree of `size` with `root`? */
export function verifyInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let r: Buffer = Buffer.from(leaf);
  const ended = walkProof(index, size - 1, proof, (c) => (r = nodeHash(c, r)), (c) => (r = nodeHash(r, c)));
  return ended && r.equals(Buffer.from(root));
}

/** RFC 9162 §2.1.4.2: does `proof` show the tree of size `m` (root `first`) is a prefix of the one of size `n` (root `second`)? */
export function verifyConsistency(m: number, n: number, proof: readonly Uint8Array[], first: Uint8Array, second: Uint8Array): boolean {
  if (!Number.isSafeInteger(m) || !Number.isSafeInteger(n) || m < 0 || m > n) return false;
  const a = Buffer.from(first);
  const b = Buffer.from(second);
  if (m === n) return proof.length === 0 && a.equals(b);
  if (m === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  let path = proof.map((p) => Buffer.from(p));
  // When m is an exact power of two the first tree's root is itself a node of the second: prepend it.
  if (isPowerOfTwo(m)) path = [a, ...path];
  let fn = m - 1;
  let sn = n - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Buffer;
  let sr = path[0] as Buffer;
  const bothTrees = (c: Uint8Array) => {
    fr = nodeHash(c, fr);
    sr = nodeHash(c, sr);
  };
  const ended = walkProof(fn, sn, path.slice(1), bothTrees, (c) => (sr = nodeHash(sr, c)));
  return ended && fr.equals(a) && sr.equals(b);
}

function isPowerOfTwo(x: number): boolean {
  if (x < 1) return false;
  while (x % 2 === 0) x /= 2;
  return x === 1;
}
