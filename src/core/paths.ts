/**
 * @module Field paths of rules and bounds (docs/protocol.md#paths): `total`,
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
  // `code` is frozen as a reference; the generated functions fill it on first use.
  const parsed: ParsedPath = { source, segments: Object.freeze(segments), code: newPathCode(segments) };
  return Object.freeze(parsed);
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

/** What sumPath found: how many values, how many of them were not numbers, and the sum of the numbers. */
export interface PathSum {
  readonly count: number;
  readonly nonNumbers: number;
  readonly total: number;
}

type GeneratedSum = (root: Json) => PathSum;
type GeneratedCollect = (root: Json, out: Json[]) => Json[];

/** The generated code of one path, made on first use of each form. */
interface PathCode {
  /** Number of `[]` segments (size of the live expansion array). */
  readonly eachCount: number;
  visit: GeneratedVisitor | undefined;
  sum: GeneratedSum | undefined;
  collect: GeneratedCollect | undefined;
}

function newPathCode(segments: readonly PathSegment[]): PathCode {
  let eachCount = 0;
  for (const s of segments) if (s.kind === 'each') eachCount++;
  return { eachCount, visit: undefined, sum: undefined, collect: undefined };
}

/** Paths made by parsePath carry their code slot: no side-table lookup per use. */
interface ParsedPath extends FieldPath {
  readonly code: PathCode;
}

/** For FieldPath objects built elsewhere. */
const foreignPathCode = new WeakMap<FieldPath, PathCode>();

function codeOf(path: FieldPath): PathCode {
  const own = (path as Partial<ParsedPath>).code;
  if (own !== undefined) return own;
  let code = foreignPathCode.get(path);
  if (code === undefined) {
    code = newPathCode(path.segments);
    foreignPathCode.set(path, code);
  }
  return code;
}

/**
 * The body of a straight-line walk of `path` from `r`: its keys as static
 * property reads and one loop per `[]`. `leaf(value, skip)` is the code run
 * for each value reached (`skip` leaves the current element); `result` is the
 * expression returned. Keys enter the code only as JSON string literals,
 * indices only as digits.
 */
function walkBody(path: FieldPath, init: string, leaf: (value: string, skip: string) => string, result: string, recordExpansion: boolean): string {
  let body = `${init}\n`;
  let cur = 'r';
  let n = 0;
  let loops = 0;
  for (const seg of path.segments) {
    const skip = loops > 0 ? 'continue' : `return ${result}`;
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
      body += `for (let i${n} = 0; i${n} < ${cur}.length; i${n}++) {\n`;
      if (recordExpansion) body += `x[${loops}] = i${n};\n`;
      body += `const ${next} = ${cur}[i${n}];\n`;
      loops++;
    }
    cur = next;
  }
  body += `${leaf(cur, loops > 0 ? 'continue' : `return ${result}`)}\n${'}\n'.repeat(loops)}return ${result};`;
  return body;
}

/**
 * One straight-line function per path: rules walk thousands of array elements
 * per request, and a generic walker costs several times more per element.
 */
function generateVisitor(path: FieldPath): GeneratedVisitor {
  const body = walkBody(path, 'let c = 0;', (v) => `c++;\nvisit(${v}, x);`, 'c', true);
  const factory = new Function('H', `"use strict"; return function visitPath(r, visit, x) {\n${body}\n};`) as (h: typeof hasOwn) => GeneratedVisitor;
  return factory(hasOwn);
}

/**
 * A summing walk: the running sum stays in local variables of one function.
 * Accumulating in a callback's closure would box every intermediate double
 * (a heap allocation per element), which dominated large-array rules.
 * Neumaier summation, in the same operation order as sum_equals always used.
 */
function generateSum(path: FieldPath): GeneratedSum {
  const body = walkBody(
    path,
    'let c = 0, bad = 0, s = 0, comp = 0;',
    (v, skip) =>
      `c++;\nif (typeof ${v} !== 'number') { bad++; ${skip}; }\n` +
      `const t = s + ${v};\ncomp += Math.abs(s) >= Math.abs(${v}) ? s - t + ${v} : ${v} - t + s;\ns = t;`,
    '{ count: c, nonNumbers: bad, total: s + comp }',
    false,
  );
  const factory = new Function('H', `"use strict"; return function sumPath(r) {\n${body}\n};`) as (h: typeof hasOwn) => GeneratedSum;
  return factory(hasOwn);
}

function generateCollect(path: FieldPath): GeneratedCollect {
  const body = walkBody(path, '', (v) => `out.push(${v});`, 'out', false);
  const factory = new Function('H', `"use strict"; return function collectPath(r, out) {\n${body}\n};`) as (h: typeof hasOwn) => GeneratedCollect;
  return factory(hasOwn);
}

/**
 * Call `visit` for every value the path yields, in document order, without
 * allocating per value: `expansion` is a live array (copy it to keep it).
 * Returns how many values were visited.
 */
export function visitPath(path: FieldPath, root: Json, visit: (value: Json, expansion: readonly number[]) => void): number {
  const code = codeOf(path);
  const v = (code.visit ??= generateVisitor(path));
  return v(root, visit, code.eachCount === 0 ? [] : new Array<number>(code.eachCount).fill(0));
}

/**
 * The values the path yields, counted and summed (numbers only, Neumaier
 * summation in document order); `total` is meaningless when `nonNumbers > 0`.
 */
export function sumPath(path: FieldPath, root: Json): PathSum {
  const code = codeOf(path);
  const s = (code.sum ??= generateSum(path));
  return s(root);
}

/**
 * The values the path yields, in document order, without their locations
 * (for checks that only need locations when something fails: see selectPath).
 */
export function pathValues(path: FieldPath, root: Json): Json[] {
  const code = codeOf(path);
  const c = (code.collect ??= generateCollect(path));
  return c(root, []);
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
