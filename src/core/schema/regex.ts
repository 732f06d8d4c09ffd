/**
 * @module Pattern compilation for `pattern`, `patternProperties` (and the syntax check of
 * the `regex` format).
 *
 * JSON Schema patterns are ECMA-262 regular expressions with Unicode (`u`) semantics.
 * A verifier evaluates patterns chosen by whoever sends the request, so a pattern must
 * never be able to hang the process (ReDoS). V8's backtracking engine can take
 * exponential time (`^(a+)+$` against `"aaaa…!"`) and even plain lookarounds are
 * quadratic on it (`(?!foo)[a-z]+$` takes seconds on 50k characters), so patterns do not
 * run on it, with one narrow exception (backreferences, below).
 *
 * Strategy, decided once per pattern at compile time:
 *  1. Validity is defined by ECMA-262: `new RegExp(source, 'u')` must accept the pattern,
 *     otherwise we throw an Error with V8's short reason.
 *  2. The pattern is parsed into a small AST (the grammar accepted under `u` is strict, so
 *     this parser can be simple). Every character class, escape and `.` becomes an explicit
 *     set of code points with ECMA-262 semantics (`\d`, `\w`, `\b` ASCII-only; `\s` the
 *     ECMA white-space set; `\p{…}` read from V8's own tables, so property names and the
 *     Unicode version match ECMA-262 exactly).
 *  3. Without lookarounds or backreferences: the AST is re-emitted in RE2 syntax using only
 *     explicit code point ranges and run with re2js (linear-time automata, matching by code
 *     point as `u` does). Nothing is left to RE2's own interpretation of classes.
 *  4. With lookarounds, or repetition counts beyond RE2's limit of 1000: our own automaton
 *     (bottom of this file), a Thompson NFA over code points in which `^ $ \b \B` and each
 *     lookaround are position predicates. A lookaround's truth at every position is computed
 *     by one extra linear pass, so a test costs O(input × states × (1 + lookarounds)).
 *     It is limited to 20 000 states; a larger pattern is refused ("too large").
 *  5. Backreferences cannot be matched by any automaton. They run on V8's backtracking `u`
 *     engine only when the pattern has no unbounded repetition and at most 10 000 ways to
 *     match from one start position (alternatives × repetition splits, computed statically),
 *     which bounds the backtracking work to input length × 10 000 × pattern size.
 *     Otherwise compilation fails with a PatternLimitError, which the schema engine reports
 *     as `too_complex` (a 422 naming the pattern and what to do) instead of risking a hang.
 *  6. Every pattern has a size (counted repetition expanded; refused above a limit before
 *     anything is built) and a weight: its worst-case steps per input character on the
 *     matcher chosen, which the evaluation charges before each test (work limits).
 *
 * We do not use V8's experimental linear engine (`--enable-experimental-regexp-engine`,
 * flag `l`): it cannot be combined with `u`, caps counted repetition at 16, rejects
 * lookarounds, and needs a process-wide V8 flag; steps 3–4 give the guarantee without it.
 *
 * Differences that cannot change a `test()` answer: lazy quantifiers are emitted greedy and
 * groups non-capturing. The first use of `\p{…}` builds a 2.2M-unit string of all code
 * points (kept for later property lookups); each distinct property then costs a few ms once.
 */
import { RE2JS } from 're2js';

export interface CompiledPattern {
  test(input: string): boolean;
}

/** Which engine runs a compiled pattern (exposed for tests and diagnostics). */
export type PatternEngine = 're2' | 'automaton' | 'backtracking';

export interface CompiledPatternInfo extends CompiledPattern {
  readonly source: string;
  readonly engine: PatternEngine;
  /** Size with counted repetition expanded (what WorkLimits.maxPatternSize bounds). */
  readonly size: number;
  /**
   * Worst-case cost of a test per input character, in evaluation steps (about
   * 10 ns each): the matcher's work per character grows with the program it runs.
   */
  readonly weight: number;
}

export interface CompilePatternOptions {
  /** Largest accepted size (counted repetition expanded); default 5 000. */
  maxSize?: number;
}

/** A valid pattern refused because it cannot be matched within the work limits. */
export class PatternLimitError extends Error {
  constructor(
    message: string,
    readonly limit: 'maxPatternSize' | 'backreferencePaths',
    readonly max: number,
  ) {
    super(message);
    this.name = 'PatternLimitError';
  }
}

/** Most ways a backreference pattern may match from one start position. */
export const MAX_BACKREF_PATHS = 10_000;

/**
 * Whether `source` is a valid ECMA-262 pattern under the `u` flag (the `regex` format).
 * Only syntax is judged here: a valid pattern may still be refused by `compilePattern` as unsafe.
 */
export function isValidPattern(source: string): boolean {
  try {
    new RegExp(source, 'u');
    return true;
  } catch {
    return false;
  }
}

/**
 * Compile an ECMA-262 pattern. Throws an Error with a short reason when it is
 * invalid, a PatternLimitError when it is valid but over a work limit.
 */
export function compilePattern(source: string, options: CompilePatternOptions = {}): CompiledPatternInfo {
  const maxSize = options.maxSize ?? 5_000;
  let native: RegExp;
  try {
    native = new RegExp(source, 'u');
  } catch (e) {
    throw new Error(shortReason(e, source));
  }
  const ast = new Parser(source).parse();
  const size = sizeOf(ast, maxSize + 1);
  if (size > maxSize) {
    throw new PatternLimitError(`pattern is larger than ${maxSize} units once its counted repetition is expanded`, 'maxPatternSize', maxSize);
  }
  const analysis = analyse(ast);
  if (analysis.hasBackref) {
    // Backtracking cost is then bounded by input length × paths × pattern size.
    if (analysis.unbounded || analysis.paths > MAX_BACKREF_PATHS) {
      throw new PatternLimitError(
        `pattern combines a backreference with ${analysis.unbounded ? 'unbounded' : 'large'} repetition, which only a backtracking matcher can run, in time that can grow exponentially`,
        'backreferencePaths',
        MAX_BACKREF_PATHS,
      );
    }
    return { source, engine: 'backtracking', size, weight: Math.max(1, analysis.paths) * size, test: (s) => native.test(s) };
  }
  if (!analysis.hasLookaround) {
    try {
      const re2 = RE2JS.compile(emit(ast));
      return { source, engine: 're2', size, weight: 12 + 2 * size, test: (s) => re2.test(s) };
    } catch {
      // RE2 refused (its repetition count limit): the automaton below has no such limit.
    }
  }
  const automaton = compileAutomaton(ast);
  if (!automaton) throw new PatternLimitError('pattern is too large for the linear-time matcher', 'maxPatternSize', maxSize);
  return { source, engine: 'automaton', size, weight: 20 * size * (1 + automaton.lookarounds), test: (s) => automaton.test(s) };
}

/**
 * Size of a pattern with counted repetition expanded (each copy is compiled),
 * a large character class counting more (its ranges are stored per copy).
 * Saturates at `cap`.
 */
function sizeOf(n: Node, cap: number): number {
  const sat = (x: number): number => (x > cap ? cap : x);
  switch (n.t) {
    case 'set':
      return 1 + (n.ranges.length >> 5);
    case 'group':
      return sizeOf(n.body, cap);
    case 'look':
      return sat(1 + sizeOf(n.body, cap));
    case 'seq': {
      let t = 0;
      for (const x of n.items) t = sat(t + sizeOf(x, cap));
      return t;
    }
    case 'alt': {
      let t = n.items.length;
      for (const x of n.items) t = sat(t + sizeOf(x, cap));
      return t;
    }
    case 'rep': {
      // every copy is compiled, an optional one with a split of its own
      const copies = n.max === Infinity ? n.min + 1 : Math.max(n.max, 1);
      return sat(1 + (sizeOf(n.body, cap) + 1) * copies);
    }
    default:
      return 1;
  }
}

function shortReason(e: unknown, source: string): string {
  const msg = e instanceof Error ? e.message : String(e);
  // V8: "Invalid regular expression: /src/u: Reason" → keep the reason only.
  const prefix = `Invalid regular expression: /${source}/u: `;
  if (msg.startsWith(prefix)) return msg.slice(prefix.length);
  const i = msg.lastIndexOf(': ');
  return i >= 0 ? msg.slice(i + 2) : msg;
}

// ---------------------------------------------------------------------------
// Code point sets: sorted, non-overlapping, non-adjacent [lo, hi] ranges.

type Ranges = Array<[number, number]>;
const MAX_CP = 0x10ffff;

function normalize(r: Ranges): Ranges {
  const s = [...r].sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of s) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function complement(r: Ranges): Ranges {
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

const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
const SPACE: Ranges = normalize([
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
]);
const LINE_TERMINATORS: Ranges = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];
const DOT: Ranges = complement(LINE_TERMINATORS);

const propertyCache = new Map<string, Ranges>();

/** Every scalar value, in three segments (surrogates excluded), built once on first use of `\p`. */
let segments: Array<{ text: string; first: number; unit: number }> | undefined;

function allCodePoints(): Array<{ text: string; first: number; unit: number }> {
  if (!segments) {
    const build = (lo: number, hi: number): string => {
      const parts: string[] = [];
      for (let cp = lo; cp <= hi; cp += 4096) {
        const chunk: number[] = [];
        for (let c = cp; c <= Math.min(hi, cp + 4095); c++) chunk.push(c);
        parts.push(String.fromCodePoint(...chunk));
      }
      return parts.join('');
    };
    segments = [
      { text: build(0, 0xd7ff), first: 0, unit: 1 },
      { text: build(0xe000, 0xffff), first: 0xe000, unit: 1 },
      { text: build(0x10000, MAX_CP), first: 0x10000, unit: 2 },
    ];
  }
  return segments;
}

/**
 * The code points of `\p{body}`, using V8's own tables so property names and the Unicode
 * version match ECMA-262 exactly. Two sticky regexes consume alternating runs of members
 * and non-members natively, so the cost is a few native passes, not a call per code point.
 */
function propertyRanges(body: string): Ranges {
  const cached = propertyCache.get(body);
  if (cached) return cached;
  const inside = new RegExp(`\\p{${body}}*`, 'uy');
  const outside = new RegExp(`\\P{${body}}*`, 'uy');
  const out: Ranges = [];
  for (const seg of allCodePoints()) {
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
  const ranges = normalize(out);
  propertyCache.set(body, ranges);
  return ranges;
}

// ---------------------------------------------------------------------------
// AST

type Node =
  | { t: 'alt'; items: Node[] }
  | { t: 'seq'; items: Node[] }
  | { t: 'set'; ranges: Ranges }
  | { t: 'group'; body: Node }
  | { t: 'look'; behind: boolean; negate: boolean; body: Node }
  | { t: 'backref' }
  | { t: 'assert'; kind: '^' | '$' | 'b' | 'B' }
  | { t: 'rep'; body: Node; min: number; max: number };

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parse(): Node {
    const n = this.disjunction();
    if (this.i < this.s.length) throw new Error(`unexpected '${this.s[this.i]}'`);
    return n;
  }

  private peek(k = 0): string {
    return this.s[this.i + k] ?? '';
  }

  private disjunction(): Node {
    const alts: Node[] = [this.alternative()];
    while (this.peek() === '|') {
      this.i++;
      alts.push(this.alternative());
    }
    return alts.length === 1 ? alts[0] : { t: 'alt', items: alts };
  }

  private alternative(): Node {
    const items: Node[] = [];
    while (this.i < this.s.length && this.peek() !== '|' && this.peek() !== ')') {
      const atom = this.term();
      items.push(this.quantifier(atom));
    }
    return { t: 'seq', items };
  }

  private quantifier(atom: Node): Node {
    let min: number;
    let max: number;
    const c = this.peek();
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i));
      if (!m) return atom;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      this.i += m[0].length - 1;
    } else return atom;
    this.i++;
    if (this.peek() === '?') this.i++; // laziness does not change whether a match exists
    return { t: 'rep', body: atom, min, max };
  }

  private term(): Node {
    const c = this.peek();
    if (c === '^' || c === '$') {
      this.i++;
      return { t: 'assert', kind: c };
    }
    if (c === '(') {
      this.i++;
      let look: { behind: boolean; negate: boolean } | undefined;
      if (this.s.startsWith('?:', this.i)) this.i += 2;
      else if (/^\?<?[=!]/.test(this.s.slice(this.i, this.i + 3))) {
        const behind = this.peek(1) === '<';
        look = { behind, negate: this.peek(behind ? 2 : 1) === '!' };
        this.i += behind ? 3 : 2;
      } else if (this.s.startsWith('?<', this.i)) {
        this.i = this.s.indexOf('>', this.i) + 1;
      }
      const body = this.disjunction();
      this.i++; // ')'
      return look ? { t: 'look', ...look, body } : { t: 'group', body };
    }
    if (c === '.') {
      this.i++;
      return { t: 'set', ranges: DOT };
    }
    if (c === '[') return { t: 'set', ranges: this.classRanges() };
    if (c === '\\') {
      const n = this.peek(1);
      if (n === 'b' || n === 'B') {
        this.i += 2;
        return { t: 'assert', kind: n };
      }
      if ((n >= '1' && n <= '9') || n === 'k') {
        // Only valid as a backreference under `u` (validity was checked already).
        this.i += 2;
        if (n === 'k') this.i = this.s.indexOf('>', this.i) + 1;
        else while (/[0-9]/.test(this.peek())) this.i++;
        return { t: 'backref' };
      }
      return { t: 'set', ranges: this.escape() };
    }
    const cp = this.s.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return { t: 'set', ranges: [[cp, cp]] };
  }

  /** Parses `\…` at the cursor; returns its set. */
  private escape(): Ranges {
    this.i++; // '\'
    const c = this.peek();
    this.i++;
    switch (c) {
      case 'd': return DIGIT;
      case 'D': return complement(DIGIT);
      case 'w': return WORD;
      case 'W': return complement(WORD);
      case 's': return SPACE;
      case 'S': return complement(SPACE);
      case 'p':
      case 'P': {
        const end = this.s.indexOf('}', this.i);
        const body = this.s.slice(this.i + 1, end);
        this.i = end + 1;
        const r = propertyRanges(body);
        return c === 'p' ? r : complement(r);
      }
      case 't': return single(9);
      case 'n': return single(10);
      case 'v': return single(11);
      case 'f': return single(12);
      case 'r': return single(13);
      case 'b': return single(8); // only reachable inside a class
      case '0': return single(0);
      case 'c': {
        const letter = this.s.charCodeAt(this.i);
        this.i++;
        return single(letter % 32);
      }
      case 'x': {
        const v = parseInt(this.s.slice(this.i, this.i + 2), 16);
        this.i += 2;
        return single(v);
      }
      case 'u': {
        if (this.peek() === '{') {
          const end = this.s.indexOf('}', this.i);
          const v = parseInt(this.s.slice(this.i + 1, end), 16);
          this.i = end + 1;
          return single(v);
        }
        let v = parseInt(this.s.slice(this.i, this.i + 4), 16);
        this.i += 4;
        // A surrogate pair written as two \u escapes is one code point under `u`.
        if (v >= 0xd800 && v <= 0xdbff && this.s.startsWith('\\u', this.i)) {
          const lo = parseInt(this.s.slice(this.i + 2, this.i + 6), 16);
          if (lo >= 0xdc00 && lo <= 0xdfff && /^[0-9a-fA-F]{4}$/.test(this.s.slice(this.i + 2, this.i + 6))) {
            v = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
            this.i += 6;
          }
        }
        return single(v);
      }
      default: {
        // Identity escape of a syntax character, '/', or '-' in a class.
        const cp = this.s.codePointAt(this.i - 1)!;
        if (cp > 0xffff) this.i++;
        return single(cp);
      }
    }
  }

  private classRanges(): Ranges {
    this.i++; // '['
    let negate = false;
    if (this.peek() === '^') {
      negate = true;
      this.i++;
    }
    const acc: Ranges = [];
    while (this.peek() !== ']') {
      const a = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== '') {
        this.i++;
        const b = this.classAtom();
        // Under `u` both ends of a range are single characters (checked by V8).
        acc.push([a[0][0], b[0][0]]);
      } else acc.push(...a);
    }
    this.i++; // ']'
    return negate ? complement(acc) : normalize(acc);
  }

  private classAtom(): Ranges {
    if (this.peek() === '\\') return this.escape();
    const cp = this.s.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return single(cp);
  }
}

function single(cp: number): Ranges {
  return [[cp, cp]];
}

// ---------------------------------------------------------------------------
// Analysis and emission

interface Analysis {
  hasLookaround: boolean;
  hasBackref: boolean;
  /** Any `*`, `+` or `{n,}`. */
  unbounded: boolean;
  /**
   * An upper bound on the number of ways a backtracking matcher can try to match the pattern
   * from one start position (alternatives × repetition splits), saturating at MAX_SAFE_INTEGER.
   */
  paths: number;
}

const CAP = Number.MAX_SAFE_INTEGER;

function analyse(root: Node): Analysis {
  const a = { hasLookaround: false, hasBackref: false, unbounded: false };
  const paths = (n: Node): number => {
    switch (n.t) {
      case 'seq':
        return n.items.reduce((acc, x) => Math.min(acc * paths(x), CAP), 1);
      case 'alt':
        return n.items.reduce((acc, x) => Math.min(acc + paths(x), CAP), 0);
      case 'group':
        return paths(n.body);
      case 'look':
        a.hasLookaround = true;
        return paths(n.body);
      case 'backref':
        a.hasBackref = true;
        return 1;
      case 'rep': {
        const body = paths(n.body);
        if (n.max === Infinity) {
          a.unbounded = true;
          return CAP;
        }
        // Σ_{k=min..max} body^k ≤ (max + 1) · body^max
        return Math.min((n.max + 1) * Math.pow(body, n.max), CAP);
      }
      default:
        return 1;
    }
  };
  const total = paths(root);
  return { ...a, paths: total };
}

function hex(cp: number): string {
  return `\\x{${cp.toString(16)}}`;
}

function emitSet(r: Ranges): string {
  if (r.length === 0) return '[^\\x{0}-\\x{10ffff}]';
  if (r.length === 1 && r[0][0] === r[0][1]) return hex(r[0][0]);
  return `[${r.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join('')}]`;
}

function emit(n: Node): string {
  switch (n.t) {
    case 'alt':
      return n.items.map(emit).join('|');
    case 'seq':
      return n.items.map(emit).join('');
    case 'set':
      return emitSet(n.ranges);
    case 'group':
      return `(?:${emit(n.body)})`;
    case 'assert':
      return n.kind === '^' ? '^' : n.kind === '$' ? '$' : `\\${n.kind}`;
    case 'rep': {
      const body = `(?:${emit(n.body)})`;
      if (n.max === Infinity) return n.min === 0 ? `${body}*` : n.min === 1 ? `${body}+` : `${body}{${n.min},}`;
      return `${body}{${n.min},${n.max}}`;
    }
    default:
      throw new Error('not expressible in linear time');
  }
}

// ---------------------------------------------------------------------------
// Lookaround automaton: a Thompson NFA over code points whose assertion states test
// position predicates. Each lookaround is turned into a boolean array over input positions
// by one extra simulation (a lookahead runs its body backwards from the end, a lookbehind
// runs it forwards), innermost first, so a test costs O(input × states × (1 + lookarounds)).

type State =
  | { k: 'char'; ranges: Ranges; out: number }
  | { k: 'split'; out: number; out2: number }
  | { k: 'assert'; pred: number; out: number }
  | { k: 'match' };

/** A position predicate: an anchor, a word boundary, or the result of a lookaround. */
type Predicate =
  | { k: '^' | '$' | 'b' | 'B' }
  | { k: 'look'; negate: boolean; behind: boolean; nfa: Nfa };

interface Nfa {
  states: State[];
  start: number;
  /** Whether the automaton reads the input right to left. */
  backward: boolean;
}

const MAX_STATES = 20_000;

class TooLarge extends Error {}

interface Fragment {
  start: number;
  /** Indices of states whose `out` (or `out2` for splits marked with -2) are still dangling. */
  holes: Array<[number, 'out' | 'out2']>;
}

class NfaBuilder {
  readonly predicates: Predicate[] = [];
  private readonly lookPredicates = new Map<Node, number>();
  private states: State[] = [];

  build(node: Node, backward: boolean): Nfa {
    const saved = this.states;
    this.states = [];
    const frag = this.frag(node, backward);
    const match = this.add({ k: 'match' });
    this.patch(frag, match);
    const nfa: Nfa = { states: this.states, start: frag.start, backward };
    this.states = saved;
    return nfa;
  }

  private add(st: State): number {
    if (this.states.length >= MAX_STATES) throw new TooLarge();
    this.states.push(st);
    return this.states.length - 1;
  }

  private patch(f: Fragment, target: number): void {
    for (const [i, field] of f.holes) (this.states[i] as Record<string, unknown>)[field] = target;
  }

  private empty(): Fragment {
    const i = this.add({ k: 'split', out: -1, out2: -1 });
    // A split whose both exits go to the same place is an epsilon move.
    return { start: i, holes: [[i, 'out'], [i, 'out2']] };
  }

  private frag(n: Node, backward: boolean): Fragment {
    switch (n.t) {
      case 'set': {
        const i = this.add({ k: 'char', ranges: n.ranges, out: -1 });
        return { start: i, holes: [[i, 'out']] };
      }
      case 'assert': {
        this.predicates.push({ k: n.kind });
        const i = this.add({ k: 'assert', pred: this.predicates.length - 1, out: -1 });
        return { start: i, holes: [[i, 'out']] };
      }
      case 'look': {
        // Copies made by counted repetition share one predicate (one table per test).
        let pred = this.lookPredicates.get(n);
        if (pred === undefined) {
          // A lookahead's body is read right to left, a lookbehind's left to right (see `test`).
          const nfa = this.build(n.body, !n.behind);
          this.predicates.push({ k: 'look', negate: n.negate, behind: n.behind, nfa });
          pred = this.predicates.length - 1;
          this.lookPredicates.set(n, pred);
        }
        const i = this.add({ k: 'assert', pred, out: -1 });
        return { start: i, holes: [[i, 'out']] };
      }
      case 'group':
        return this.frag(n.body, backward);
      case 'seq': {
        if (n.items.length === 0) return this.empty();
        const items = backward ? [...n.items].reverse() : n.items;
        const first = this.frag(items[0], backward);
        let holes = first.holes;
        for (const item of items.slice(1)) {
          const f = this.frag(item, backward);
          this.patch({ start: 0, holes }, f.start);
          holes = f.holes;
        }
        return { start: first.start, holes };
      }
      case 'alt': {
        const frags = n.items.map((x) => this.frag(x, backward));
        let start = frags[frags.length - 1].start;
        for (let j = frags.length - 2; j >= 0; j--) start = this.add({ k: 'split', out: frags[j].start, out2: start });
        return { start, holes: frags.flatMap((f) => f.holes) };
      }
      case 'rep': {
        const parts: Fragment[] = [];
        for (let j = 0; j < n.min; j++) parts.push(this.frag(n.body, backward));
        if (n.max === Infinity) {
          const body = this.frag(n.body, backward);
          const loop = this.add({ k: 'split', out: body.start, out2: -1 });
          this.patch(body, loop);
          parts.push({ start: loop, holes: [[loop, 'out2']] });
        } else {
          // Optional copies nest: x{0,2} = (x(x)?)?
          let tail: Fragment | undefined;
          for (let j = n.min; j < n.max; j++) {
            const body = this.frag(n.body, backward);
            const opt = this.add({ k: 'split', out: body.start, out2: -1 });
            if (tail) this.patch(body, tail.start);
            const holes: Fragment['holes'] = [[opt, 'out2'], ...(tail ? tail.holes : body.holes)];
            tail = { start: opt, holes };
          }
          if (tail) parts.push(tail);
        }
        if (parts.length === 0) return this.empty();
        for (let j = 0; j + 1 < parts.length; j++) this.patch(parts[j], parts[j + 1].start);
        return { start: parts[0].start, holes: parts[parts.length - 1].holes };
      }
      default:
        throw new TooLarge(); // backreferences never reach the automaton
    }
  }
}

function inRanges(r: Ranges, cp: number): boolean {
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

function isWordChar(cp: number | undefined): boolean {
  return cp !== undefined && inRanges(WORD, cp);
}

/**
 * Runs `nfa` over `cps`, starting a thread at every position, and returns for each position
 * whether a thread reached the match state there. Forward automata move left to right,
 * backward ones right to left.
 */
function simulate(nfa: Nfa, cps: number[], holds: (pred: number, pos: number) => boolean, stopAtFirst: boolean): boolean[] {
  const n = cps.length;
  const reached: boolean[] = new Array<boolean>(n + 1).fill(false);
  const mark = new Int32Array(nfa.states.length).fill(-1);
  let current: number[] = [];
  let next: number[] = [];
  const stack: number[] = [];
  const addClosure = (list: number[], s0: number, pos: number, gen: number): boolean => {
    let matched = false;
    stack.push(s0);
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (s < 0 || mark[s] === gen) continue;
      mark[s] = gen;
      const st = nfa.states[s];
      switch (st.k) {
        case 'char':
          list.push(s);
          break;
        case 'split':
          stack.push(st.out2, st.out);
          break;
        case 'assert':
          if (holds(st.pred, pos)) stack.push(st.out);
          break;
        case 'match':
          matched = true;
          break;
      }
    }
    return matched;
  };
  const positions = nfa.backward ? n : 0;
  const step = nfa.backward ? -1 : 1;
  let pos = positions;
  for (let count = 0; count <= n; count++, pos += step) {
    const gen = count;
    // Carry over the threads that consumed a character into this position, then start a new one.
    let matched = false;
    const list: number[] = [];
    for (const s of current) if (addClosure(list, s, pos, gen)) matched = true;
    if (addClosure(list, nfa.start, pos, gen)) matched = true;
    if (matched) {
      reached[pos] = true;
      if (stopAtFirst) return reached;
    }
    if (count === n) break;
    const cp = nfa.backward ? cps[pos - 1] : cps[pos];
    next = [];
    for (const s of list) {
      const st = nfa.states[s] as Extract<State, { k: 'char' }>;
      if (inRanges(st.ranges, cp)) next.push(st.out);
    }
    current = next;
  }
  return reached;
}

function compileAutomaton(ast: Node): { test(input: string): boolean; lookarounds: number } | undefined {
  const builder = new NfaBuilder();
  let main: Nfa;
  try {
    main = builder.build(ast, false);
  } catch (e) {
    if (e instanceof TooLarge) return undefined;
    throw e;
  }
  const predicates = builder.predicates;
  return {
    lookarounds: predicates.filter((p) => p.k === 'look').length,
    test(input: string): boolean {
      const cps = Array.from(input, (c) => c.codePointAt(0)!);
      const n = cps.length;
      // Lookaround tables are filled lazily, innermost first (an inner table is needed while
      // simulating the outer body, and is computed on that first use).
      const tables: Array<boolean[] | undefined> = [];
      const holds = (pred: number, pos: number): boolean => {
        const p = predicates[pred];
        switch (p.k) {
          case '^':
            return pos === 0;
          case '$':
            return pos === n;
          case 'b':
            return isWordChar(cps[pos - 1]) !== isWordChar(cps[pos]);
          case 'B':
            return isWordChar(cps[pos - 1]) === isWordChar(cps[pos]);
          default: {
            let table = tables[pred];
            if (!table) {
              // A lookahead at i holds when its body, read backwards from some j >= i, reaches i.
              const reached = simulate(p.nfa, cps, holds, false);
              table = p.negate ? reached.map((r) => !r) : reached;
              tables[pred] = table;
            }
            return table[pos];
          }
        }
      };
      return simulate(main, cps, holds, true).some(Boolean);
    },
  };
}
