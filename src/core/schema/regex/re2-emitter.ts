/**
 * @module The RE2 emitter: re-writes a pattern without lookarounds or
 * backreferences in RE2 syntax using only explicit code point ranges, and
 * compiles it with re2js (linear-time automata matching by code point, as `u`
 * does). Nothing is left to RE2's own reading of classes.
 */
import { RE2JS } from 're2js';
import type { Ranges } from './code-points.js';
import type { Node } from './parser.js';
import { isAllocationFailure } from '../exhaustion.js';

function hex(cp: number): string {
  return `\\x{${cp.toString(16)}}`;
}

function emitSet(r: Ranges): string {
  if (r.length === 0) return '[^\\x{0}-\\x{10ffff}]';
  if (r.length === 1 && r[0][0] === r[0][1]) return hex(r[0][0]);
  return `[${r.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join('')}]`;
}

export function emit(n: Node): string {
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

/** A re2js matcher for `ast`, or undefined when RE2 refuses it (its repetition count limit of 1000). */
export function compileRe2(ast: Node): { test(input: string): boolean } | undefined {
  try {
    return RE2JS.compile(emit(ast));
  } catch (e) {
    // RE2 refusing the pattern falls back to the other matchers; running out of memory does not.
    if (isAllocationFailure(e)) throw e;
    return undefined;
  }
}
