/**
 * @module Code point sets for the pattern compiler: sorted, non-overlapping,
 * non-adjacent [lo, hi] ranges; the ECMA-262 class escapes (`\d \w \s .`) as
 * such sets, and `\p{…}` read from V8's own Unicode tables.
 */

export type Ranges = Array<[number, number]>;
const MAX_CP = 0x10ffff;

export function normalize(r: Ranges): Ranges {
  const s = [...r].sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of s) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export function complement(r: Ranges): Ranges {
  const n = normalize(r);
  const out: Ranges = [];
  let next = 0;
  for (const [lo, hi] of n) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

export const DIGIT: Ranges = [[0x30, 0x39]];
export const WORD: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
export const SPACE: Ranges = normalize([
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
]);
const LINE_TERMINATORS: Ranges = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];
export const DOT: Ranges = complement(LINE_TERMINATORS);

/** Built `\p{…}` tables by property key (see propertyKey), kept for the life of the process. */
const propertyCache = new Map<string, Ranges>();

/** Scalar values per text scanned: 16,384 (64 KiB of UTF-16 for astral ones). */
const CHUNK = 1 << 14;

/**
 * Every scalar value (surrogates excluded) as a series of short texts, each with its first code
 * point and its UTF-16 units per code point. The units are written into one array and decoded
 * natively (String.fromCodePoint over a million values took ~0.6 s). Short texts, made again for
 * each build and dropped after it, rather than the whole range kept as one 4 MB string: scanning
 * that string grew a verification worker's resident memory by ~25 MB for its first `\p{…}` and
 * ~16 MB for each further one; in short texts the scan costs the same time and ~8 MB in all.
 */
function* scalarTexts(): Generator<{ text: string; first: number; unit: 1 | 2 }> {
  const decoder = new TextDecoder('utf-16le');
  const units = new Uint16Array(CHUNK * 2);
  const planes: Array<[number, number, 1 | 2]> = [[0, 0xd7ff, 1], [0xe000, 0xffff, 1], [0x10000, MAX_CP, 2]];
  for (const [lo, hi, unit] of planes) {
    for (let first = lo; first <= hi; first += CHUNK) {
      const last = Math.min(hi, first + CHUNK - 1);
      let i = 0;
      for (let cp = first; cp <= last; cp++) {
        if (unit === 1) units[i++] = cp;
        else {
          const v = cp - 0x10000;
          units[i++] = 0xd800 + (v >> 10);
          units[i++] = 0xdc00 + (v & 0x3ff);
        }
      }
      yield { text: decoder.decode(units.subarray(0, i)), first, unit };
    }
  }
}

/**
 * The table a `\p{body}` (or `\P{body}`) needs, named one way: `gc=Lu` and
 * `General_Category=Lu` are `Lu`, `sc=` is `Script=`, `scx=` is `Script_Extensions=`.
 * Value aliases (`Latn`, `Latin`) stay distinct keys: the same table built twice at most.
 */
export function propertyKey(body: string): string {
  const eq = body.indexOf('=');
  if (eq < 0) return body;
  const name = body.slice(0, eq);
  const value = body.slice(eq + 1);
  if (name === 'gc' || name === 'General_Category') return value;
  if (name === 'sc') return `Script=${value}`;
  if (name === 'scx') return `Script_Extensions=${value}`;
  return body;
}

/**
 * The distinct property tables (propertyKey) a pattern needs, in order of first use, read
 * from its text without building anything. `source` must be valid under `u`: every `\`
 * then starts an escape whose next character belongs to it.
 */
export function propertyKeysOf(source: string): string[] {
  const keys = new Set<string>();
  let i = source.indexOf('\\');
  while (i >= 0) {
    const c = source[i + 1];
    if ((c === 'p' || c === 'P') && source[i + 2] === '{') {
      const end = source.indexOf('}', i + 3);
      keys.add(propertyKey(source.slice(i + 3, end)));
      i = source.indexOf('\\', end + 1);
    } else {
      i = source.indexOf('\\', i + 2);
    }
  }
  return [...keys];
}

/**
 * Builds the tables of `keys` not built yet, in one pass over the scalar texts (making the
 * texts costs more than scanning them for one property). Each table uses V8's own Unicode
 * data, so property names and the Unicode version match ECMA-262 exactly: two sticky regexes
 * consume alternating runs of members and non-members natively, a few native passes per
 * property rather than a call per code point.
 */
export function buildPropertyTables(keys: readonly string[]): void {
  const pending = keys.filter((k) => !propertyCache.has(k));
  if (pending.length === 0) return;
  const scans = pending.map((key) => ({
    key,
    inside: new RegExp(`\\p{${key}}*`, 'uy'),
    outside: new RegExp(`\\P{${key}}*`, 'uy'),
    out: [] as Ranges,
  }));
  for (const seg of scalarTexts()) {
    for (const { inside, outside, out } of scans) {
      let i = 0;
      while (i < seg.text.length) {
        inside.lastIndex = i;
        inside.test(seg.text);
        const j = inside.lastIndex;
        if (j > i) out.push([seg.first + i / seg.unit, seg.first + j / seg.unit - 1]);
        outside.lastIndex = j;
        outside.test(seg.text);
        // Every scalar value is either in or out, so this advances; the guard is for safety.
        i = outside.lastIndex > i ? outside.lastIndex : i + seg.unit;
      }
    }
  }
  // Runs that continue across two texts are joined here.
  for (const { key, out } of scans) propertyCache.set(key, normalize(out));
}

/** The code points of `\p{body}` (built on first use, see buildPropertyTables). */
export function propertyRanges(body: string): Ranges {
  const key = propertyKey(body);
  let ranges = propertyCache.get(key);
  if (ranges === undefined) {
    buildPropertyTables([key]);
    ranges = propertyCache.get(key)!;
  }
  return ranges;
}

export function single(cp: number): Ranges {
  return [[cp, cp]];
}

export function inRanges(r: Ranges, cp: number): boolean {
  let lo = 0;
  let hi = r.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < r[mid][0]) hi = mid - 1;
    else if (cp > r[mid][1]) lo = mid + 1;
    else return true;
  }
  return false;
}
