/**
 * @module Fixed-shape patterns without a RegExp: `^INV-[0-9]{4}$`, `^[A-Z]{3}$`,
 * `^\d{4}-\d{2}-\d{2}$` — anchored at both ends, each atom an ASCII character or a
 * class of ASCII characters and ranges, repeated an exact number of times. Such a
 * pattern matches exactly the strings of one length whose every UTF-16 unit is in
 * its atom's set, so a loop over char codes answers the same as the RegExp (with
 * or without the `u` flag: no ASCII set holds half of a surrogate pair) in a tenth
 * of the time of a RegExp call. Anything else (alternation, optional or unbounded
 * repetition, negated classes, `\w`, `.`, flags-dependent escapes) returns null
 * and keeps its RegExp. Generated code only (codegen.ts): the closures keep the RegExp.
 */

/** Code ranges one atom accepts, as [lo, hi] pairs. */
type CharSet = Array<[number, number]>;

interface Atom {
  set: CharSet;
  count: number;
}

/** Longest string a matcher is made for (longer patterns keep their RegExp). */
const MAX_LENGTH = 256;

/** Punctuation that stands for itself when escaped (an escaped letter or digit may mean something else). */
const ESCAPABLE = new Set('^$\\.*+?()[]{}|/-'.split(''));

/** Outside a class, these are syntax, not literals. */
const SPECIAL = new Set('^$\\.*+?()[]{}|'.split(''));

function printable(code: number): boolean {
  return code >= 0x20 && code <= 0x7e;
}

/** One class `[...]` starting after its `[`; returns the set and the index after `]`, or null. */
function parseClass(src: string, i: number): { set: CharSet; next: number } | null {
  const set: CharSet = [];
  if (src[i] === '^' || src[i] === ']') return null; // negated or empty-looking: not this module's job
  let prev: number | null = null; // last single character, for a range
  while (i < src.length && src[i] !== ']') {
    let code: number;
    if (src[i] === '\\') {
      const e = src[i + 1];
      if (e === 'd') {
        set.push([48, 57]);
        prev = null;
        i += 2;
        continue;
      }
      if (e === undefined || !ESCAPABLE.has(e)) return null;
      code = e.charCodeAt(0);
      i += 2;
    } else if (src[i] === '-' && prev !== null && i + 1 < src.length && src[i + 1] !== ']') {
      // a range prev-x
      let hi: number;
      if (src[i + 1] === '\\') {
        const e = src[i + 2];
        if (e === undefined || !ESCAPABLE.has(e)) return null;
        hi = e.charCodeAt(0);
        i += 3;
      } else {
        hi = src.charCodeAt(i + 1);
        i += 2;
      }
      if (!printable(hi) || hi < prev) return null;
      set[set.length - 1] = [prev, hi];
      prev = null;
      continue;
    } else {
      code = src.charCodeAt(i);
      if (src[i] === '[') return null; // nested-looking class syntax (v-flag sets)
      i += 1;
    }
    if (!printable(code)) return null;
    set.push([code, code]);
    prev = code;
  }
  if (i >= src.length || set.length === 0) return null;
  return { set, next: i + 1 };
}

/** The atoms of a fixed-shape pattern, or null when it is not one. */
function parse(source: string): Atom[] | null {
  if (source.length < 2 || source[0] !== '^' || source[source.length - 1] !== '$') return null;
  const body = source.slice(1, -1);
  // an escaped final `$` is a literal, not the anchor
  let slashes = 0;
  for (let k = body.length - 1; k >= 0 && body[k] === '\\'; k--) slashes++;
  if (slashes % 2 === 1) return null;
  const atoms: Atom[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i];
    let set: CharSet;
    if (c === '[') {
      const cls = parseClass(body, i + 1);
      if (cls === null) return null;
      set = cls.set;
      i = cls.next;
    } else if (c === '\\') {
      const e = body[i + 1];
      if (e === 'd') set = [[48, 57]];
      else if (e !== undefined && ESCAPABLE.has(e)) set = [[e.charCodeAt(0), e.charCodeAt(0)]];
      else return null;
      i += 2;
    } else if (SPECIAL.has(c) || !printable(body.charCodeAt(i))) {
      return null;
    } else {
      set = [[body.charCodeAt(i), body.charCodeAt(i)]];
      i += 1;
    }
    let count = 1;
    if (body[i] === '{') {
      const m = /^\{(\d{1,3})\}/.exec(body.slice(i));
      if (m === null) return null;
      count = Number(m[1]);
      if (count === 0) return null;
      i += m[0].length;
    }
    if (body[i] === '*' || body[i] === '+' || body[i] === '?' || body[i] === '{') return null;
    atoms.push({ set, count });
  }
  const length = atoms.reduce((n, a) => n + a.count, 0);
  return length === 0 || length > MAX_LENGTH ? null : atoms;
}

function inSet(set: CharSet): string {
  return set.map(([lo, hi]) => (lo === hi ? `c === ${lo}` : `(c >= ${lo} && c <= ${hi})`)).join(' || ');
}

/**
 * A function answering `new RegExp(source, 'u').test(s)` for a fixed-shape
 * pattern, or null when `source` is not one (see the module comment).
 */
export function simplePatternMatcher(source: string): ((s: string) => boolean) | null {
  const atoms = parse(source);
  if (atoms === null) return null;
  const length = atoms.reduce((n, a) => n + a.count, 0);
  const lines = [`if (s.length !== ${length}) return false;`, 'let c;'];
  let at = 0;
  for (const a of atoms) {
    const test = inSet(a.set);
    if (a.count === 1) {
      lines.push(`c = s.charCodeAt(${at}); if (!(${test})) return false;`);
    } else {
      lines.push(`for (let k = ${at}; k < ${at + a.count}; k++) { c = s.charCodeAt(k); if (!(${test})) return false; }`);
    }
    at += a.count;
  }
  lines.push('return true;');
  try {
    return new Function('s', `"use strict";\n${lines.join('\n')}`) as (s: string) => boolean;
  } catch {
    return null;
  }
}
