/**
 * @module Field paths of rules and bounds (SPEC §1 "Paths"): `total`,
 * `line_items[].line_total`, `a.b[].c[].d`, bracket form `['a.b']` for keys
 * holding `.` or `[`, and `[n]` for one element. Parsed once per request;
 * selection returns every value with its concrete location (`$.x[1].y`).
 */
import type { Json } from './types.js';
import { formatSegments } from './strict-json.js';

export type PathSegment =
  | { kind: 'key'; key: string; inherited: boolean }
  | { kind: 'each' }
  | { kind: 'index'; index: number };

export interface FieldPath {
  /** The path exactly as written. */
  readonly source: string;
  readonly segments: readonly PathSegment[];
}

export interface Selected {
  readonly value: Json;
  /** Concrete location, e.g. `$.line_items[1].line_total`. */
  readonly location: string;
  /** The array indices chosen at each `[]` of the path, in order (for element-wise comparison). */
  readonly expansion: readonly number[];
}

/**
 * Locations are only formatted when a failure needs them (most selected
 * values pass): the path's keys plus the chosen `[]` indices rebuild it.
 */
class SelectedValue implements Selected {
  private loc: string | undefined;
  constructor(
    readonly value: Json,
    private readonly path: FieldPath,
    readonly expansion: readonly number[],
  ) {}
  get location(): string {
    return (this.loc ??= locationOf(this.path, this.expansion));
  }
}

export class PathSyntaxError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'PathSyntaxError';
  }
}

const NAME_CHAR = /[^.[\]'"\s]/;

/** `inherited`: the name exists on Object.prototype, so reading it needs an own-property test. */
function keySegment(key: string): PathSegment {
  return { kind: 'key', key, inherited: key in Object.prototype };
}

const parsedPaths = new Map<string, FieldPath>();
const PARSED_PATHS_MAX = 1024;

/** Parse a path (memoized: the same few paths are used on every request). Throws PathSyntaxError. */
export function parsePath(source: string): FieldPath {
  let p = parsedPaths.get(source);
  if (p === undefined) {
    p = parsePathUncached(source);
    if (parsedPaths.size >= PARSED_PATHS_MAX) parsedPaths.clear();
    parsedPaths.set(source, p);
  }
  return p;
}

/** Parse a path. Throws PathSyntaxError with a reason that never repeats the path. */
function parsePathUncached(source: string): FieldPath {
  if (source.length === 0) throw new PathSyntaxError('is empty');
  const segments: PathSegment[] = [];
  let i = 0;
  const n = source.length;
  let expectName = true; // at start or after '.'
  while (i < n) {
    const c = source[i];
    if (c === '[') {
      if (source[i + 1] === ']') {
        segments.push({ kind: 'each' });
        i += 2;
      } else if (source[i + 1] === "'" || source[i + 1] === '"') {
        const quote = source[i + 1];
        let j = i + 2;
        let key = '';
        for (;;) {
          if (j >= n) throw new PathSyntaxError(`has an unterminated quoted key at position ${i}`);
          const d = source[j];
          if (d === '\\' && j + 1 < n) {
            key += source[j + 1];
            j += 2;
            continue;
          }
          if (d === quote) break;
          key += d;
          j++;
        }
        if (source[j + 1] !== ']') throw new PathSyntaxError(`is missing ']' after the quoted key at position ${i}`);
        segments.push(keySegment(key));
        i = j + 2;
      } else {
        let j = i + 1;
        while (j < n && source[j] >= '0' && source[j] <= '9') j++;
        if (j === i + 1 || source[j] !== ']') {
          throw new PathSyntaxError(`has an invalid bracket at position ${i} (use [], [n] or ['key'])`);
        }
        segments.push({ kind: 'index', index: Number(source.slice(i + 1, j)) });
        i = j + 1;
      }
      expectName = false;
      continue;
    }
    if (c === '.') {
      if (expectName) throw new PathSyntaxError(`has an empty key at position ${i}`);
      i++;
      expectName = true;
      if (i >= n) throw new PathSyntaxError('ends with a dot');
      if (source[i] === '[' && source[i + 1] !== "'" && source[i + 1] !== '"') {
        throw new PathSyntaxError(`has '[' without a key before it at position ${i}`);
      }
      if (source[i] === '[') expectName = false;
      continue;
    }
    if (!expectName) throw new PathSyntaxError(`is missing a '.' at position ${i}`);
    let j = i;
    while (j < n && NAME_CHAR.test(source[j])) j++;
    if (j === i) throw new PathSyntaxError(`has an invalid character at position ${i}`);
    segments.push(keySegment(source.slice(i, j)));
    i = j;
    expectName = false;
  }
  return Object.freeze({ source, segments: Object.freeze(segments) });
}

const hasOwn = Object.prototype.hasOwnProperty;
const NO_EXPANSION: readonly number[] = Object.freeze([]);

/** The concrete location of the value reached through `path` with the given `[]` indices. */
export function locationOf(path: FieldPath, expansion: readonly number[]): string {
  const segs: Array<string | number> = [];
  let e = 0;
  for (const seg of path.segments) segs.push(seg.kind === 'key' ? seg.key : seg.kind === 'index' ? seg.index : expansion[e++]);
  return formatSegments(segs);
}

type GeneratedVisitor = (root: Json, visit: (value: Json, expansion: readonly number[]) => void, expansion: number[]) => number;

const visitors = new WeakMap<FieldPath, GeneratedVisitor>();

/**
 * One straight-line function per path, with its keys as static property reads
 * and one loop per `[]`: rules walk thousands of array elements per request,
 * and a generic walker costs several times more per element. Keys enter the
 * code only as JSON string literals, indices only as digits.
 */
function generateVisitor(path: FieldPath): GeneratedVisitor {
  let body = 'let c = 0;\n';
  let cur = 'r';
  let n = 0;
  let loops = 0;
  for (const seg of path.segments) {
    const skip = loops > 0 ? 'continue' : 'return c';
    const next = `v${++n}`;
    if (seg.kind === 'key') {
      const key = JSON.stringify(seg.key);
      body += `if (${cur} === null || typeof ${cur} !== 'object' || Array.isArray(${cur})) ${skip};\n`;
      body += `const ${next} = ${cur}[${key}];\n`;
      // JSON values are never undefined; only Object.prototype names need the own-property test.
      body += `if (${next} === undefined${seg.inherited ? ` || !H.call(${cur}, ${key})` : ''}) ${skip};\n`;
    } else if (seg.kind === 'index') {
      body += `if (!Array.isArray(${cur}) || ${cur}.length <= ${seg.index}) ${skip};\n`;
      body += `const ${next} = ${cur}[${seg.index}];\n`;
    } else {
      body += `if (!Array.isArray(${cur})) ${skip};\n`;
      body += `for (let i${n} = 0; i${n} < ${cur}.length; i${n}++) {\nx[${loops++}] = i${n};\nconst ${next} = ${cur}[i${n}];\n`;
    }
    cur = next;
  }
  body += `c++;\nvisit(${cur}, x);\n${'}\n'.repeat(loops)}return c;`;
  const factory = new Function('H', `"use strict"; return function visitPath(r, visit, x) {\n${body}\n};`) as (h: typeof hasOwn) => GeneratedVisitor;
  return factory(hasOwn);
}

/**
 * Call `visit` for every value the path yields, in document order, without
 * allocating per value: `expansion` is a live array (copy it to keep it).
 * Returns how many values were visited.
 */
export function visitPath(path: FieldPath, root: Json, visit: (value: Json, expansion: readonly number[]) => void): number {
  let v = visitors.get(path);
  if (v === undefined) {
    v = generateVisitor(path);
    visitors.set(path, v);
  }
  const eachCount = path.segments.reduce((k, s) => (s.kind === 'each' ? k + 1 : k), 0);
  return v(root, visit, eachCount === 0 ? [] : new Array<number>(eachCount).fill(0));
}

/** Every value the path yields in `root`, in document order. Missing branches yield nothing. */
export function selectPath(path: FieldPath, root: Json): Selected[] {
  const out: Selected[] = [];
  visitPath(path, root, (value, exp) => {
    out.push(new SelectedValue(value, path, exp.length === 0 ? NO_EXPANSION : exp.slice()));
  });
  return out;
}

/**
 * How many leading `[]` expansions two paths share: the number of `each`
 * segments in their longest common segment prefix. Values of the two paths
 * whose first N expansion indices agree belong to the same array element.
 */
export function sharedExpansions(a: FieldPath, b: FieldPath): number {
  let shared = 0;
  let eachSeen = 0;
  const n = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const x = a.segments[i];
    const y = b.segments[i];
    if (x.kind !== y.kind) break;
    if (x.kind === 'key' && x.key !== (y as { key: string }).key) break;
    if (x.kind === 'index' && x.index !== (y as { index: number }).index) break;
    if (x.kind === 'each') shared = ++eachSeen;
  }
  return shared;
}

/** The path as shown in error output: `$.` + the path as written. */
export function displayPath(path: FieldPath): string {
  return path.source.startsWith('[') ? `$${path.source}` : `$.${path.source}`;
}
