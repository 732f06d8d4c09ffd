/**
 * @module Logical applicators. `allOf` is transparent (its subschemas' checks
 * count); `anyOf`, `oneOf` and `not` are one check each with nothing inside
 * counted; `if` is never counted itself, and only the branch that applies
 * (`then` or `else`) is transparent.
 */
import type { Json } from '../../types.js';
import { countCheck, runAll, type KeywordContext, type KeywordDefinition } from '../keyword.js';
import { Annotations, Check, type Validate } from '../runtime.js';

function schemaList(k: KeywordContext): Validate[] {
  if (!Array.isArray(k.value) || k.value.length === 0) return k.invalid(`${k.keyword} must be a non-empty array of schemas`);
  return (k.value as Json[]).map((s, i) => k.sub(s, [i]));
}

export const allOfKeyword: KeywordDefinition = {
  keyword: 'allOf',
  group: 'any',
  compile(k) {
    const subs = schemaList(k);
    return (data, ctx, ev) => runAll(subs, data, ctx, ev);
  },
};

/** The check of an applicator whose subschemas run silent: what it found is the text recorded. */
function silentCheck(k: KeywordContext, expected: string, must: string): Check {
  return new Check(k.keyword, k.schemaPath, expected, must, null);
}

export const anyOfKeyword: KeywordDefinition = {
  keyword: 'anyOf',
  group: 'any',
  compile(k) {
    const subs = schemaList(k);
    const check = silentCheck(k, `a match for at least one of ${subs.length} schemas`, 'match at least one schema of anyOf');
    return (data, ctx, ev) => {
      ctx.silent++;
      let ok = false;
      if (ev === null) {
        for (let i = 0; i < subs.length; i++) if (subs[i](data, ctx, null)) { ok = true; break; }
      } else {
        for (let i = 0; i < subs.length; i++) {
          const a = new Annotations();
          if (subs[i](data, ctx, a)) {
            ok = true;
            ctx.steps += ev.merge(a);
          }
        }
      }
      ctx.silent--;
      countCheck(ctx, ok, check, 'no match');
      return ok;
    };
  },
};

export const oneOfKeyword: KeywordDefinition = {
  keyword: 'oneOf',
  group: 'any',
  compile(k) {
    const subs = schemaList(k);
    const check = silentCheck(k, `a match for exactly one of ${subs.length} schemas`, 'match exactly one schema of oneOf');
    return (data, ctx, ev) => {
      ctx.silent++;
      let n = 0;
      let matched: Annotations | null = null;
      for (let i = 0; i < subs.length && n < 2; i++) {
        const a = ev === null ? null : new Annotations();
        if (subs[i](data, ctx, a)) {
          n++;
          matched = a;
        }
      }
      ctx.silent--;
      const ok = n === 1;
      if (ok && ev !== null && matched !== null) ctx.steps += ev.merge(matched);
      countCheck(ctx, ok, check, n === 0 ? 'no match' : 'more than one match');
      return ok;
    };
  },
};

export const notKeyword: KeywordDefinition = {
  keyword: 'not',
  group: 'any',
  compile(k) {
    const sub = k.sub(k.value, []);
    const check = silentCheck(k, 'no match for the schema in not', 'not match the schema in not');
    return (data, ctx) => {
      ctx.silent++;
      const ok = !sub(data, ctx, null);
      ctx.silent--;
      countCheck(ctx, ok, check, 'a match');
      return ok;
    };
  },
};

export const ifKeyword: KeywordDefinition = {
  keyword: 'if',
  group: 'any',
  compile(k) {
    const cond = k.sub(k.value, []);
    const has = (name: string): boolean => k.schema[name] !== undefined && k.dialect.keywords.has(name);
    const then = has('then') ? k.sub(k.schema.then, [], 'then') : null;
    const otherwise = has('else') ? k.sub(k.schema.else, [], 'else') : null;
    if (then === null && otherwise === null) {
      // nothing to apply, but a passing condition still contributes annotations to unevaluated*
      return (data, ctx, ev) => {
        if (ev === null) return true;
        const a = new Annotations();
        ctx.silent++;
        const c = cond(data, ctx, a);
        ctx.silent--;
        if (c) ctx.steps += ev.merge(a);
        return true;
      };
    }
    return (data, ctx, ev) => {
      const a = ev === null ? null : new Annotations();
      ctx.silent++;
      const c = cond(data, ctx, a);
      ctx.silent--;
      if (c) {
        if (a !== null) ctx.steps += ev!.merge(a);
        return then === null ? true : then(data, ctx, ev);
      }
      return otherwise === null ? true : otherwise(data, ctx, ev);
    };
  },
};
