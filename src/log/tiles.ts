/**
 * @module The C2SP tlog-tiles layout: which stored node hashes make up the
 * tile <L>/<N>[.p/<W>], how a tile index is written in a path
 * (1234067 → x001/x234/067), which tiles a tree of a given size has, and the
 * entry-bundle encoding (each entry prefixed by its big-endian uint16 length).
 */

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 256;

export interface TileRef {
  /** Tile level L (0 = leaf hashes). Entry bundles use level -1. */
  level: number;
  index: number;
  /** Number of hashes (or entries): 256 for a full tile, 1–255 for a partial one. */
  width: number;
}

/** 1234067 → "x001/x234/067"; 5 → "005". */
export function encodeTileIndex(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`tile index must be a non-negative integer, got ${n}`);
  let s = String(n);
  s = s.padStart(Math.ceil(s.length / 3) * 3, '0');
  const parts: string[] = [];
  for (let i = 0; i < s.length; i += 3) parts.push(s.slice(i, i + 3));
  return parts.map((p, i) => (i < parts.length - 1 ? `x${p}` : p)).join('/');
}

/** Path of a tile or entry bundle below the log prefix, e.g. "tile/0/x001/234.p/5". */
export function tilePath(t: TileRef): string {
  const level = t.level < 0 ? 'entries' : String(t.level);
  return `tile/${level}/${encodeTileIndex(t.index)}${t.width < TILE_WIDTH ? `.p/${t.width}` : ''}`;
}

/**
 * Parses what follows "tile/" in a request path: "<L>/<N>[.p/<W>]" or
 * "entries/<N>[.p/<W>]". Returns null for anything not in the canonical form
 * (leading zeroes, a missing x, a width outside 1–255), so each resource has
 * exactly one URL.
 */
export function parseTilePath(rest: string): TileRef | null {
  const m = /^(entries|0|[1-9][0-9]?)\/((?:x[0-9]{3}\/)*[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/.exec(rest);
  if (!m) return null;
  const level = m[1] === 'entries' ? -1 : Number(m[1]);
  if (level > 63) return null;
  const digits = (m[2] as string).replace(/[x/]/g, '');
  // The canonical form has no leading all-zero groups: 000/001 is written 001.
  if (digits.length > 3 && digits.startsWith('000')) return null;
  const index = Number(digits);
  if (!Number.isSafeInteger(index)) return null;
  const width = m[3] === undefined ? TILE_WIDTH : Number(m[3]);
  if (width < 1 || width >= TILE_WIDTH + (m[3] === undefined ? 1 : 0)) return null;
  return { level, index, width };
}

/** Number of hashes a complete tree of `size` leaves has at tile level L (nodes of Merkle level 8L). */
function hashesAtTileLevel(size: number, level: number): number {
  return Math.floor(size / TILE_WIDTH ** level);
}

/** Whether a tree of `size` leaves holds every hash (or entry) of this tile. */
export function tileExists(t: TileRef, size: number): boolean {
  const available = hashesAtTileLevel(size, Math.max(0, t.level));
  return t.index * TILE_WIDTH + t.width <= available;
}

/** Every tile (and entry bundle) of a tree of `size` leaves, as a client would fetch them. */
export function tilesOfTree(size: number): TileRef[] {
  const out: TileRef[] = [];
  for (let level = 0; hashesAtTileLevel(size, level) > 0; level++) {
    const n = hashesAtTileLevel(size, level);
    const full = Math.floor(n / TILE_WIDTH);
    for (let i = 0; i < full; i++) out.push({ level, index: i, width: TILE_WIDTH });
    if (n % TILE_WIDTH > 0) out.push({ level, index: full, width: n % TILE_WIDTH });
  }
  return out;
}

/** Entries as an entry bundle: each one prefixed by its big-endian uint16 length. */
export function encodeEntryBundle(entries: readonly Uint8Array[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    if (e.length > 0xffff) throw new RangeError('a log entry is longer than 65535 bytes');
    const len = Buffer.alloc(2);
    len.writeUInt16BE(e.length, 0);
    parts.push(len, Buffer.from(e));
  }
  return Buffer.concat(parts);
}

export function decodeEntryBundle(bundle: Uint8Array): Buffer[] {
  const b = Buffer.from(bundle);
  const out: Buffer[] = [];
  let at = 0;
  while (at < b.length) {
    if (at + 2 > b.length) throw new RangeError('truncated entry bundle');
    const len = b.readUInt16BE(at);
    if (at + 2 + len > b.length) throw new RangeError('truncated entry bundle');
    out.push(b.subarray(at + 2, at + 2 + len));
    at += 2 + len;
  }
  return out;
}
