/**
 * @module Logical applicators. `allOf` is transparent (its subschemas' checks
 * count); `anyOf`, `oneOf` and `not` are one check each with nothing inside
 * counted; `if` is never counted itself, and only the branch that applies
 * (`then` or `else`) is transparent.
 */
import type { Json } from '../../types.js';
import { countCheck, runAll, type KeywordContext, type KeywordDefinition } from '../keyword.js';
import { Annotations, Check, type EvalContext, type Validate } from '../runtime.js';

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

/**
 * An applicator that is one check of its own with its subschemas run silent (`anyOf`, `oneOf`,
 * `not`): nothing inside is counted or recorded, and the check is counted once the silent section
 * is over. `run` evaluates the subschemas and returns what it found when the check fails, null
 * when it passes.
 */
function silentApplicator(k: KeywordContext, expected: string, must: string, run: (data: Json, ctx: EvalContext, ev: Annotations | null) => string | null): Validate {
  const check = new Check(k.keyword, k.schemaPath, expected, must, null);
  return (data, ctx, ev) => {
    ctx.silent++;
    const found = run(data, ctx, ev);
    ctx.silent--;
    countCheck(ctx, found === null, check, found);
    return found === null;
  };
}

export const anyOfKeyword: KeywordDefinition = {
  keyword: 'anyOf',
  group: 'any',
  compile(k) {
    const subs = schemaList(k);
    return silentApplicator(k, `a match for at least one of ${subs.length} schemas`, 'match at least one schema of anyOf', (data, ctx, ev) => {
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
      return ok ? null : 'no match';
    });
  },
};

export const oneOfKeyword: KeywordDefinition = {
  keyword: 'oneOf',
  group: 'any',
  compile(k) {
    const subs = schemaList(k);
    return silentApplicator(k, `a match for exactly one of ${subs.length} schemas`, 'match exactly one schema of oneOf', (data, ctx, ev) => {
      let n = 0;
      let matched: Annotations | null = null;
      for (let i = 0; i < subs.length && n < 2; i++) {
        const a = ev === null ? null : new Annotations();
        if (subs[i](data, ctx, a)) {
          n++;
          matched = a;
        }
      }
      if (n === 1 && ev !== null && matched !== null) ctx.steps += ev.merge(matched);
      return n === 1 ? null : n === 0 ? 'no match' : 'more than one match';
    });
  },
};

export const notKeyword: KeywordDefinition = {
  keyword: 'not',
  group: 'any',
  compile(k) {
    const sub = k.sub(k.value, []);
    return silentApplicator(k, 'no match for the schema in not', 'not match the schema in not', (data, ctx) => (sub(data, ctx, null) ? 'a match' : null));
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
