/**
 * @module String assertions: `minLength`/`maxLength` (in code points), `pattern`
 * and `format` (counted only for the formats the engine asserts).
 */
import { getFormat } from '../formats/index.js';
import type { KeywordDefinition } from '../keyword.js';
import { compilePattern } from '../regex.js';
import { boundedPattern } from './bounded-pattern.js';
import { SchemaCompileError } from '../engine.js';
import { report, stringLength } from '../runtime.js';

function length(keyword: string, op: string, min: boolean): KeywordDefinition {
  return {
    keyword,
    group: 'string',
    compile(k) {
      if (typeof k.value !== 'number' || !Number.isInteger(k.value) || k.value < 0) return k.invalid(`${keyword} must be a non-negative integer`);
      const limit = k.value;
      const sp = k.schemaPath;
      const expected = `length ${op} ${limit}`;
      return (data, ctx) => {
        const s = data as string;
        // s.length bounds the code-point count from above and is at most twice it
        let ok: boolean;
        if (min) ok = s.length >= limit && (s.length >= 2 * limit || stringLength(s) >= limit);
        else ok = s.length <= limit || stringLength(s) <= limit;
        if (ok) {
          if (ctx.silent === 0) { ctx.passed++; ctx.total++; }
        } else if (ctx.silent === 0) report(ctx, keyword, sp, expected, `length ${stringLength(s)}`, `have ${expected}`);
        return ok;
      };
    },
  };
}

export const minLengthKeyword = length('minLength', '>=', true);
export const maxLengthKeyword = length('maxLength', '<=', false);

/** Compile a pattern, turning a bad one into a coded compile error. */
export function patternOf(source: string, path: string): { test(s: string): boolean } {
  try {
    // a bounded pattern is valid exactly when V8 accepts it with `u`, which boundedPattern checks
    return boundedPattern(source) ?? compilePattern(source);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new SchemaCompileError({ kind: 'invalid_pattern', path, reason }, `invalid pattern at ${path}: ${reason}`);
  }
}

export const patternKeyword: KeywordDefinition = {
  keyword: 'pattern',
  group: 'string',
  compile(k) {
    if (typeof k.value !== 'string') return k.invalid('pattern must be a string');
    const re = patternOf(k.value, k.schemaPath);
    const sp = k.schemaPath;
    const expected = `pattern ${k.value}`;
    return (data, ctx) => {
      const ok = re.test(data as string);
      if (ok) {
        if (ctx.silent === 0) { ctx.passed++; ctx.total++; }
      } else if (ctx.silent === 0) report(ctx, 'pattern', sp, expected, `string of length ${stringLength(data as string)}`, `match ${expected}`);
      return ok;
    };
  },
};

export const formatKeyword: KeywordDefinition = {
  keyword: 'format',
  group: 'string',
  compile(k) {
    if (typeof k.value !== 'string') return k.invalid('format must be a string');
    if (!k.state.assertFormats && !k.dialect.formatAssertion) return null;
    const check = getFormat(k.value, k.dialect.standard);
    if (check === undefined) return null;
    const sp = k.schemaPath;
    const expected = `format ${k.value}`;
    return (data, ctx) => {
      const ok = check(data as string);
      if (ok) {
        if (ctx.silent === 0) { ctx.passed++; ctx.total++; }
      } else if (ctx.silent === 0) report(ctx, 'format', sp, expected, `string of length ${stringLength(data as string)}`, `be a valid ${k.value}`);
      return ok;
    };
  },
};
