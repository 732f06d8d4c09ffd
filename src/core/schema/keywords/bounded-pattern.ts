/**
 * @module A native fast path for the simplest patterns. `compilePattern` (../regex/index.ts)
 * decides validity and runs patterns on a linear-time engine, which costs a
 * microsecond even for `^INV-[0-9]{4}$`. A pattern made only of literals, simple
 * classes and bounded quantifiers (`?`, `{n}`, `{n,m}`: no `*`, `+`, `{n,}`,
 * groups, alternation, lookarounds or backreferences) can only try a bounded
 * number of paths per start position, so V8's own engine runs it in linear time
 * with identical ECMA-262 `u` semantics. Anything else keeps the safe engine.
 */

/** Most backtracking paths per start position we accept (product of quantifier ranges). */
const MAX_PATHS = 1000;
const MAX_COUNT = 100;
const CLASS_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S', ']', '\\', '-', '^', '.', '/', '[', '$', '|', '(', ')', '{', '}', '*', '+', '?']);
const ATOM_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S', '\\', '^', '$', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '/', '-']);
const SPECIAL = new Set(['\\', '^', '$', '.', '|', '?', '*', '+', '(', ')', '[', ']', '{', '}']);

/**
 * A native pattern with its work-limit figures (see WeightedPattern in ../runtime.ts).
 * The RegExp is held, not extended: a RegExp with own properties added leaves
 * V8's fast path, and `test` then costs several times the match itself.
 */
export class BoundedPattern {
  constructor(
    /** Never given properties of its own (see above); not global or sticky, so test() keeps no state. */
    readonly regexp: RegExp,
    readonly weight: number,
    readonly size: number,
  ) {}

  test(s: string): boolean {
    return this.regexp.test(s);
  }
}

/**
 * A native RegExp for `source` when it is in the bounded class above, else null.
 * Its weight (steps per input character) covers trying every path at every position.
 */
export function boundedPattern(source: string): BoundedPattern | null {
  const cps = Array.from(source);
  let i = 0;
  let paths = 1;
  if (cps[i] === '^') i++;
  const end = cps[cps.length - 1] === '$' && cps[cps.length - 2] !== '\\' ? cps.length - 1 : cps.length;
  while (i < end) {
    const c = cps[i];
    if (c === '\\') {
      if (i + 1 >= end || !ATOM_ESCAPES.has(cps[i + 1])) return null;
      i += 2;
    } else if (c === '[') {
      i++;
      if (cps[i] === '^') i++;
      let first = true;
      while (i < end && (cps[i] !== ']' || first)) {
        if (cps[i] === ']') return null; // `[]` / `[^]`: leave to the general engine
        if (cps[i] === '[') return null;
        if (cps[i] === '\\') {
          if (i + 1 >= end || !CLASS_ESCAPES.has(cps[i + 1])) return null;
          i++;
        }
        i++;
        first = false;
      }
      if (cps[i] !== ']') return null;
      i++;
    } else if (c === '.' || !SPECIAL.has(c)) {
      i++;
    } else {
      return null;
    }
    // optional bounded quantifier
    if (cps[i] === '?') {
      paths *= 2;
      i++;
    } else if (cps[i] === '{') {
      const close = cps.indexOf('}', i);
      if (close < 0 || close >= end) return null;
      const m = /^\{(\d{1,3})(?:,(\d{1,3}))?\}$/.exec(cps.slice(i, close + 1).join(''));
      if (m === null) return null;
      const lo = Number(m[1]);
      const hi = m[2] === undefined ? lo : Number(m[2]);
      if (hi < lo || hi > MAX_COUNT) return null;
      paths *= hi - lo + 1;
      i = close + 1;
    }
    if (cps[i] === '?' || cps[i] === '*' || cps[i] === '+' || cps[i] === '{') return null;
    if (paths > MAX_PATHS) return null;
  }
  let re: RegExp;
  try {
    re = new RegExp(source, 'u');
  } catch {
    return null;
  }
  // V8 compiles these small patterns cheaply: a tenth of the general size per character
  return new BoundedPattern(re, 1 + Math.floor((paths * cps.length) / 16), Math.ceil(cps.length / 10));
}
