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
 *     (automaton.ts), a Thompson NFA over code points in which `^ $ \b \B` and each
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
 *  7. Each distinct `\p{…}` table costs a scan of every code point the first time it is built
 *     in a process (a few ms each, more on a busy machine; 260 of them ran into the deadline).
 *     The tables a pattern needs are read from its text and counted against the caller's
 *     budget (WorkLimits.maxPropertyTables) before any is built, so the answer does not
 *     depend on which tables this process happens to have built already.
 *
 * We do not use V8's experimental linear engine (`--enable-experimental-regexp-engine`,
 * flag `l`): it cannot be combined with `u`, caps counted repetition at 16, rejects
 * lookarounds, and needs a process-wide V8 flag; steps 3–4 give the guarantee without it.
 *
 * Differences that cannot change a `test()` answer: lazy quantifiers are emitted greedy and
 * groups non-capturing.
 */
import { PatternLimitError } from './limits.js';
import { buildPropertyTables, propertyKeysOf } from './code-points.js';
import { analyse, backreferenceMatcher } from './backreference.js';
import { Parser, sizeOf } from './parser.js';
import { compileRe2 } from './re2-emitter.js';
import { compileAutomaton } from './automaton.js';

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
  /**
   * The Unicode property tables already counted for the caller (a schema) and how many it
   * may use (default: no limit). The pattern's new ones are added to `counted`, or it is
   * refused (PatternLimitError `maxPropertyTables`) before any table is built.
   */
  propertyTables?: { counted: Set<string>; max: number };
}

export { PatternLimitError } from './limits.js';
export { MAX_BACKREF_PATHS } from './backreference.js';

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
  const keys = propertyKeysOf(source);
  if (keys.length > 0) {
    const budget = options.propertyTables;
    if (budget !== undefined) countPropertyTables(keys, budget.counted, budget.max);
    buildPropertyTables(keys);
  }
  const ast = new Parser(source).parse();
  const size = sizeOf(ast, maxSize + 1);
  if (size > maxSize) {
    throw new PatternLimitError(`pattern is larger than ${maxSize} units once its counted repetition is expanded`, 'maxPatternSize', maxSize);
  }
  const analysis = analyse(ast);
  if (analysis.hasBackref) {
    const m = backreferenceMatcher(native, analysis, size);
    return { source, engine: 'backtracking', size, weight: m.weight, test: (s) => m.test(s) };
  }
  if (!analysis.hasLookaround) {
    const re2 = compileRe2(ast);
    if (re2 !== undefined) return { source, engine: 're2', size, weight: 12 + 2 * size, test: (s) => re2.test(s) };
    // RE2 refused (its repetition count limit): the automaton below has no such limit.
  }
  const automaton = compileAutomaton(ast);
  if (!automaton) throw new PatternLimitError('pattern is too large for the linear-time matcher', 'maxPatternSize', maxSize);
  return { source, engine: 'automaton', size, weight: 20 * size * (1 + automaton.lookarounds), test: (s) => automaton.test(s) };
}

function countPropertyTables(keys: readonly string[], counted: Set<string>, max: number): void {
  let total = counted.size;
  for (const k of keys) if (!counted.has(k)) total++;
  if (total > max) {
    const what = total === keys.length ? `pattern uses ${total}` : `schema's patterns use ${total}`;
    throw new PatternLimitError(`the ${what} distinct Unicode property classes (\\p{…}), each a table of code points to build`, 'maxPropertyTables', max);
  }
  for (const k of keys) counted.add(k);
}

function shortReason(e: unknown, source: string): string {
  const msg = e instanceof Error ? e.message : String(e);
  // V8: "Invalid regular expression: /src/u: Reason" → keep the reason only.
  const prefix = `Invalid regular expression: /${source}/u: `;
  if (msg.startsWith(prefix)) return msg.slice(prefix.length);
  const i = msg.lastIndexOf(': ');
  return i >= 0 ? msg.slice(i + 2) : msg;
}
