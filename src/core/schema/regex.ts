/**
 * @module Pattern compilation for `pattern`, `patternProperties` and the `regex` format.
 *
 * JSON Schema patterns are ECMA-262 regular expressions with Unicode (`u`) semantics.
 * A verifier evaluates patterns chosen by whoever sends the request, so a pattern must
 * never be able to hang the process (ReDoS). V8's backtracking engine can take
 * exponential time (`^(a+)+$` against `"aaaa…!"`), so patterns do not run on it by default.
 *
 * Strategy (decided once per pattern, at compile time):
 *  1. Validity is defined by ECMA-262: `new RegExp(source, 'u')` must accept the pattern,
 *     otherwise we throw an Error with V8's short reason.
 *  2. The pattern is parsed into a small AST (the grammar accepted by the `u` flag is
 *     strict, so this parser can be simple). Every character class, escape and `.` is
 *     turned into an explicit set of code points, computed with ECMA-262 semantics
 *     (`\d`, `\w`, `\b` ASCII-only; `\s` the ECMA white-space set; `\p{…}` enumerated
 *     with V8's own Unicode tables, so property names and versions match exactly).
 *  3. The AST is re-emitted in RE2 syntax using only explicit code point ranges and run
 *     with re2js, a linear-time automaton engine that matches by code point (as `u` does).
 *     Because no named class, `.` or property escape is left to RE2's interpretation,
 *     the only semantic differences are the ones listed below, which cannot change a
 *     boolean "does it match" answer.
 *  4. Patterns RE2 cannot express — backreferences, lookahead/lookbehind, or counted
 *     repetitions whose product exceeds RE2's limit of 1000 — run on V8's backtracking
 *     `u` engine only when a static check finds no nested or alternated repetition (the
 *     shape behind exponential backtracking). Otherwise compilation fails with
 *     "pattern may backtrack catastrophically and cannot be run in linear time", which
 *     the engine reports as an invalid pattern (a 422 naming it) rather than risking a hang.
 *     A residual polynomial cost (e.g. `(.*)\1` is quadratic) is bounded by the request
 *     size limit.
 *
 * We do not use V8's experimental linear engine (`--enable-experimental-regexp-engine`,
 * flag `l`): it rejects the `u` flag, caps counted repetition at 16 and needs a global
 * V8 flag set at run time; re2js gives the same guarantee for every pattern step 3 accepts.
 *
 * Differences that do not affect `test()`: lazy quantifiers are emitted greedy and groups
 * are emitted non-capturing (neither changes whether some match exists). Lone surrogates
 * cannot appear in instances (the strict I-JSON parser rejects them); direct library
 * callers passing one get RE2's decoding of it.
 */
import { RE2JS } from 're2js';

export interface CompiledPattern {
  test(input: string): boolean;
}

/** Which engine runs a compiled pattern (exposed for tests and diagnostics). */
export type PatternEngine = 'linear' | 'backtracking';

export interface CompiledPatternInfo extends CompiledPattern {
  readonly source: string;
  readonly engine: PatternEngine;
}

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

/** Compile an ECMA-262 pattern. Throws an Error with a short reason when it is invalid or unsafe. */
export function compilePattern(source: string): CompiledPatternInfo {
  let native: RegExp;
  try {
    native = new RegExp(source, 'u');
  } catch (e) {
    throw new Error(shortReason(e, source));
  }
  const ast = new Parser(source).parse();
  const analysis = analyse(ast);
  if (!analysis.needsBacktracking) {
    try {
      const re2 = RE2JS.compile(emit(ast));
      return { source, engine: 'linear', test: (s) => re2.test(s) };
    } catch {
      // RE2 refused (repetition count limit): fall through to the guarded path.
    }
  }
  if (analysis.nestedRepetition) {
    throw new Error('pattern may backtrack catastrophically and cannot be run in linear time');
  }
  return { source, engine: 'backtracking', test: (s) => native.test(s) };
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

/** The code points of `\p{body}`, using V8's tables so names and Unicode version match ECMA-262 exactly. */
function propertyRanges(body: string): Ranges {
  const cached = propertyCache.get(body);
  if (cached) return cached;
  const re = new RegExp(`^\\p{${body}}$`, 'u');
  const out: Ranges = [];
  let start = -1;
  for (let cp = 0; cp <= MAX_CP + 1; cp++) {
    const inSet = cp <= MAX_CP && (cp < 0xd800 || cp > 0xdfff) && re.test(String.fromCodePoint(cp));
    if (inSet && start < 0) start = cp;
    else if (!inSet && start >= 0) {
      out.push([start, cp - 1]);
      start = -1;
    }
  }
  propertyCache.set(body, out);
  return out;
}

// ---------------------------------------------------------------------------
// AST

type Node =
  | { t: 'alt'; items: Node[] }
  | { t: 'seq'; items: Node[] }
  | { t: 'set'; ranges: Ranges }
  | { t: 'group'; body: Node }
  | { t: 'look'; body: Node }
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
      let look = false;
      if (this.s.startsWith('?:', this.i)) this.i += 2;
      else if (/^\?<?[=!]/.test(this.s.slice(this.i, this.i + 3))) {
        look = true;
        this.i += this.peek(1) === '<' ? 3 : 2;
      } else if (this.s.startsWith('?<', this.i)) {
        this.i = this.s.indexOf('>', this.i) + 1;
      }
      const body = this.disjunction();
      this.i++; // ')'
      return look ? { t: 'look', body } : { t: 'group', body };
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
      return { t: 'set', ranges: this.escape(false) };
    }
    const cp = this.s.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return { t: 'set', ranges: [[cp, cp]] };
  }

  /** Parses `\…` at the cursor; returns its set. */
  private escape(inClass: boolean): Ranges {
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
        void inClass;
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
    if (this.peek() === '\\') return this.escape(true);
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
  /** Backreferences or lookarounds: RE2 cannot express them. */
  needsBacktracking: boolean;
  /** A repetition (max > 1) containing another repetition or an alternation. */
  nestedRepetition: boolean;
}

function analyse(root: Node): Analysis {
  const a: Analysis = { needsBacktracking: false, nestedRepetition: false };
  const walk = (n: Node, underRep: boolean): boolean => {
    // Returns whether `n` contains a repetition or alternation that can vary in length.
    switch (n.t) {
      case 'alt': {
        if (underRep) a.nestedRepetition = true;
        n.items.forEach((x) => walk(x, underRep));
        return true;
      }
      case 'seq': {
        let any = false;
        for (const x of n.items) any = walk(x, underRep) || any;
        return any;
      }
      case 'group':
        return walk(n.body, underRep);
      case 'look':
        a.needsBacktracking = true;
        return walk(n.body, underRep);
      case 'backref':
        a.needsBacktracking = true;
        if (underRep) a.nestedRepetition = true;
        return true;
      case 'rep': {
        const repeats = n.max > 1;
        if (repeats && underRep) a.nestedRepetition = true;
        walk(n.body, underRep || repeats);
        return true;
      }
      default:
        return false;
    }
  };
  walk(root, false);
  return a;
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
