/**
 * @module What a pattern needs (lookarounds, backreferences, unbounded repetition)
 * and the backreference matcher: no automaton can match a backreference, so such
 * a pattern runs on V8's backtracking `u` engine, but only when the ways it can
 * match from one start position are statically bounded (MAX_BACKREF_PATHS).
 */
import type { Node } from './parser.js';
import { PatternLimitError } from './limits.js';

/** Most ways a backreference pattern may match from one start position. */
export const MAX_BACKREF_PATHS = 10_000;

export interface Analysis {
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

export function analyse(root: Node): Analysis {
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

/**
 * The backtracking matcher for a pattern with backreferences, with its weight
 * (steps per input character); throws PatternLimitError when its backtracking
 * is not bounded. Its cost is then bounded by input length × paths × pattern size.
 */
export function backreferenceMatcher(native: RegExp, analysis: Analysis, size: number): { test(input: string): boolean; weight: number } {
  if (analysis.unbounded || analysis.paths > MAX_BACKREF_PATHS) {
    throw new PatternLimitError(
      `pattern combines a backreference with ${analysis.unbounded ? 'unbounded' : 'large'} repetition, which only a backtracking matcher can run, in time that can grow exponentially`,
      'backreferencePaths',
      MAX_BACKREF_PATHS,
    );
  }
  return { weight: Math.max(1, analysis.paths) * size, test: (s) => native.test(s) };
}
