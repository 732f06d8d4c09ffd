/**
 * @module String assertions: `minLength`/`maxLength` (in code points), `pattern`
 * and `format` (counted only for the formats the engine asserts). In generated
 * code each is one inline test that charges the same steps as its closure.
 */
import { getFormat } from '../formats/index.js';
import { countOf, valueReporter, verdict, type KeywordDefinition } from '../keyword.js';
import { compilePattern, PatternLimitError } from '../regex/index.js';
import { BoundedPattern, boundedPattern } from './bounded-pattern.js';
import { simplePatternMatcher } from '../simple-pattern.js';
import { SchemaCompileError } from '../engine.js';
import { isAllocationFailure } from '../exhaustion.js';
import type { CompileState } from '../keyword.js';
import { unknownFormatWarning } from '../unknown.js';
import {
  Check, countedLength, lengthText, matchCounted, PATTERN_CALL_STEPS, StepLimitError, stringLength, stringText, withReporter, type WeightedPattern,
} from '../runtime.js';

function length(keyword: string, op: string, min: boolean): KeywordDefinition {
  return {
    keyword,
    group: 'string',
    compile(k) {
      const limit = countOf(k);
      const expected = `length ${op} ${limit}`;
      const reporter = valueReporter(new Check(keyword, k.schemaPath, expected, `have ${expected}`, lengthText));
      // s.length bounds the code-point count from above and is at most twice it
      if (min) {
        return withReporter((data, ctx) => {
          const s = data as string;
          return verdict(s.length >= limit && (s.length >= 2 * limit || countedLength(s, ctx) >= limit), data, ctx, reporter);
        }, reporter);
      }
      return withReporter((data, ctx) => {
        const s = data as string;
        return verdict(s.length <= limit || countedLength(s, ctx) <= limit, data, ctx, reporter);
      }, reporter);
    },
    code: {
      // countedLength() on the local step count
      emit(c) {
        const d = c.data;
        const limit = c.value as number;
        const counted = `((st += ${d}.length >> 4), ${c.constant(stringLength)}(${d}))`;
        if (min) c.check(`(${d}.length >= ${limit} && (${d}.length >= ${2 * limit} || ${counted} >= ${limit}))`, { charges: true });
        else c.check(`(${d}.length <= ${limit} || ${counted} <= ${limit})`, { charges: true });
      },
    },
  };
}

export const minLengthKeyword = length('minLength', '>=', true);
export const maxLengthKeyword = length('maxLength', '<=', false);

/**
 * Compile a pattern, turning a bad one into a coded compile error (invalid_pattern,
 * or too_complex for a valid one over a work limit), and charge its size to the
 * schema's compiled size when `state` is given.
 */
export function patternOf(source: string, path: string, state?: CompileState): WeightedPattern {
  // Building a pattern's program costs far more per unit than a subschema: its size is
  // charged PATTERN_UNIT_COST times, and refused before anything is built when over.
  let maxSize = state?.limits.maxPatternSize;
  let byTotal = false;
  if (state !== undefined) {
    const left = Math.floor((state.limits.maxCompiledSize - state.compiledSize) / PATTERN_UNIT_COST);
    if (left < state.limits.maxPatternSize) {
      maxSize = Math.max(0, left);
      byTotal = true;
    }
  }
  let p: WeightedPattern;
  try {
    // a bounded pattern is valid exactly when V8 accepts it with `u`, which boundedPattern checks
    // the schema's Unicode property tables are counted across all its patterns
    const propertyTables = state === undefined ? undefined : { counted: state.propertyTables, max: state.limits.maxPropertyTables };
    p = boundedPattern(source) ?? compilePattern(source, { maxSize, propertyTables });
  } catch (e) {
    if (e instanceof PatternLimitError) {
      if (byTotal && e.limit === 'maxPatternSize') compiledSizeExceeded(state!, path);
      throw new SchemaCompileError({ kind: 'too_complex', path, limit: e.limit, max: e.max, reason: e.message }, `pattern at ${path} is too complex: ${e.message}`);
    }
    // Out of memory is not the pattern's fault: never a 422 (see exhaustion.ts).
    if (isAllocationFailure(e)) throw e;
    const reason = e instanceof Error ? e.message : String(e);
    throw new SchemaCompileError({ kind: 'invalid_pattern', path, reason }, `invalid pattern at ${path}: ${reason}`);
  }
  if (state !== undefined) {
    state.compiledSize += p.size * PATTERN_UNIT_COST;
    if (state.compiledSize > state.limits.maxCompiledSize) compiledSizeExceeded(state, path);
  }
  return p;
}

/** Compiled-size units per unit of pattern size (building a program is the costly part of compiling). */
const PATTERN_UNIT_COST = 40;

/** Throws too_complex for a schema whose compiled artefacts passed WorkLimits.maxCompiledSize at `path`. */
export function compiledSizeExceeded(state: CompileState, path: string): never {
  const max = state.limits.maxCompiledSize;
  const reason = `the compiled schema (subschemas, keywords, patterns, enum and const values) is larger than ${max} units`;
  throw new SchemaCompileError({ kind: 'too_complex', path, limit: 'maxCompiledSize', max, reason }, `schema at ${path} is too complex: ${reason}`);
}

export const patternKeyword: KeywordDefinition = {
  keyword: 'pattern',
  group: 'string',
  compile(k) {
    if (typeof k.value !== 'string') return k.invalid('pattern must be a string');
    const re = patternOf(k.value, k.schemaPath, k.state);
    const sp = k.schemaPath;
    const expected = `pattern ${k.value}`;
    // the reporter does not run the match again
    const reporter = valueReporter(new Check('pattern', sp, expected, `match ${expected}`, stringText));
    return withReporter((data, ctx) => verdict(matchCounted(re, data as string, ctx, sp), data, ctx, reporter), reporter);
  },
  code: {
    // matchCounted() on the local step count
    emit(c) {
      const d = c.data;
      const source = c.value as string;
      const p = patternOf(source, c.schemaPath);
      const charge = `(st += ${PATTERN_CALL_STEPS} + ${p.weight} * (${d}.length + 1)) > M`;
      // a fixed-shape pattern is a loop over char codes; another native pattern's RegExp is called directly
      const simple = p instanceof BoundedPattern ? simplePatternMatcher(source) : null;
      const test =
        simple !== null ? `${c.constant(simple)}(${d})` : p instanceof BoundedPattern ? `${c.constant(p.regexp)}.test(${d})` : `${c.constant(p)}.test(${d})`;
      c.check(`(${charge} ? ${c.constant(stepLimit)}(${JSON.stringify(c.schemaPath)}) : ${test})`, { charges: true });
    },
  },
};

function stepLimit(schemaPath: string): never {
  throw new StepLimitError(schemaPath);
}

/** Steps charged for a format check: the checkers are linear in the string. */
export function formatSteps(s: string): number {
  return 10 + (s.length >> 2);
}

export const formatKeyword: KeywordDefinition = {
  keyword: 'format',
  group: 'string',
  compile(k) {
    if (typeof k.value !== 'string') return k.invalid('format must be a string');
    const warning = unknownFormatWarning(k.value, k.schemaPath);
    if (warning !== null) k.state.warnings.push(warning);
    if (!k.state.assertFormats && !k.dialect.formatAssertion) return null;
    const check = getFormat(k.value, k.dialect.standard);
    if (check === undefined) return null;
    const expected = `format ${k.value}`;
    const reporter = valueReporter(new Check('format', k.schemaPath, expected, `be a valid ${k.value}`, stringText));
    return withReporter((data, ctx) => {
      ctx.steps += formatSteps(data as string);
      return verdict(check(data as string), data, ctx, reporter);
    }, reporter);
  },
  code: {
    emit(c) {
      const check = getFormat(c.value as string, c.dialect.standard);
      if (check === undefined) c.closure();
      else c.check(`((st += ${c.constant(formatSteps)}(${c.data})), ${c.constant(check)}(${c.data}))`, { charges: true });
    },
  },
};
