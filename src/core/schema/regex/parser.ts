/**
 * @module The pattern parser: ECMA-262 pattern syntax under the `u` flag (strict
 * enough that a small recursive-descent parser suffices) into an AST in which
 * every class, escape and `.` is an explicit code point set; and the size of
 * an AST with counted repetition expanded (what WorkLimits.maxPatternSize bounds).
 */
import { complement, DIGIT, DOT, normalize, propertyRanges, single, SPACE, WORD, type Ranges } from './code-points.js';

export type Node =
  | { t: 'alt'; items: Node[] }
  | { t: 'seq'; items: Node[] }
  | { t: 'set'; ranges: Ranges }
  | { t: 'group'; body: Node }
  | { t: 'look'; behind: boolean; negate: boolean; body: Node }
  | { t: 'backref' }
  | { t: 'assert'; kind: '^' | '$' | 'b' | 'B' }
  | { t: 'rep'; body: Node; min: number; max: number };

export class Parser {
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

/**
 * Size of a pattern with counted repetition expanded (each copy is compiled),
 * a large character class counting more (its ranges are stored per copy).
 * Saturates at `cap`.
 */
export function sizeOf(n: Node, cap: number): number {
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
