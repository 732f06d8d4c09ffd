/**
 * @module `required` and its conditional forms: `dependentRequired` and the
 * array entries of draft-07 `dependencies` (one check each), `dependentSchemas`
 * and the schema entries of `dependencies` (transparent). `required` writes its
 * own generated code, reading each property once with the other keywords.
 */
import type { Json, JsonObject } from '../../types.js';
import { countPass, isObject, verdict, type KeywordContext, type KeywordDefinition } from '../keyword.js';
import { checkOf, has, MissingCheck, quoteList, report, reportMissing, withReporter, type Reporter, type Validate } from '../runtime.js';

function isStringArray(v: Json): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}

export const requiredKeyword: KeywordDefinition = {
  keyword: 'required',
  group: 'object',
  compile(k) {
    if (!isStringArray(k.value)) return k.invalid('required must be an array of strings');
    const keys = k.value;
    if (keys.length === 0) return null;
    const check = new MissingCheck('required', k.schemaPath);
    const test = (o: JsonObject): boolean => {
      for (let i = 0; i < keys.length; i++) if (!has(o, keys[i])) return false;
      return true;
    };
    const reporter: Reporter = (data, ctx, path, index) => reportMissing(ctx, check, keys.filter((key) => !has(data as JsonObject, key)), path, index);
    return withReporter((data, ctx) => verdict(test(data as JsonObject), data, ctx, reporter), reporter, check);
  },
  code: {
    reads: (value) => value as string[],
    emit(c) {
      const keys = c.value as string[];
      const cond = keys.map((key) => `${c.own(key)} !== undefined`).join(' && ');
      const check = checkOf(c.fn);
      if (!(check instanceof MissingCheck)) {
        c.check(cond);
        return;
      }
      // A failure is recorded by a function of the generated factory that reads the
      // properties again with static reads, as the closure's reporter would find them
      // missing (its read per name, with the name a variable, costs more than the rest
      // of the failure). The failure branch stays one call with the object: handing it
      // the values read already made the code around it slower.
      const f = c.name('m');
      const body = keys.map((key) => `if (${c.read('o', key)} === undefined) m.push(${JSON.stringify(key)});`).join(' ');
      c.helper(`function ${f}(o, ctx, path, index) { const m = []; ${body} ${c.constant(reportMissing)}(ctx, ${c.constant(check)}, m, path, index); }`);
      c.check(cond, { reporter: f });
    },
  },
};

/**
 * `dependentRequired` and the array entries of `dependencies`, one rule in two drafts: each
 * entry a list of names the object must have when its key is present (empty lists require
 * nothing), one check per location; null when nothing is required.
 */
function dependentRequired(k: KeywordContext, entries: Array<[string, Json]>, invalid: string): Validate | null {
  const deps: Array<[string, string[]]> = [];
  for (const [key, v] of entries) {
    if (!isStringArray(v)) return k.invalid(invalid);
    if (v.length > 0) deps.push([key, v]);
  }
  if (deps.length === 0) return null;
  const keyword = k.keyword;
  const sp = k.schemaPath;
  return (data, ctx) => {
    const o = data as JsonObject;
    for (let i = 0; i < deps.length; i++) {
      const [key, needed] = deps[i];
      if (!has(o, key)) continue;
      for (let j = 0; j < needed.length; j++) {
        if (!has(o, needed[j])) {
          if (ctx.silent === 0) {
            const missing = needed.filter((n) => !has(o, n));
            report(ctx, keyword, sp, `${quoteList(missing)} when '${key}' is present`, 'missing', `have ${quoteList(missing)} because '${key}' is present`);
          }
          return false;
        }
      }
    }
    countPass(ctx);
    return true;
  };
}

/** `dependentSchemas` and the schema entries of `dependencies`: applied in place when the key is present. */
function dependentSchemas(k: KeywordContext, entries: Array<[string, Json]>): Validate {
  const subs: Array<[string, Validate]> = entries.map(([key, s]) => [key, k.sub(s, [key])]);
  return (data, ctx, ev) => {
    const o = data as JsonObject;
    let ok = true;
    for (let i = 0; i < subs.length; i++) {
      if (!has(o, subs[i][0])) continue;
      if (!subs[i][1](data, ctx, ev)) {
        if (ctx.silent !== 0) return false;
        ok = false;
      }
    }
    return ok;
  };
}

export const dependentRequiredKeyword: KeywordDefinition = {
  keyword: 'dependentRequired',
  group: 'object',
  compile(k) {
    if (!isObject(k.value)) return k.invalid('dependentRequired must be an object');
    return dependentRequired(k, Object.entries(k.value), 'dependentRequired values must be arrays of strings');
  },
};

export const dependentSchemasKeyword: KeywordDefinition = {
  keyword: 'dependentSchemas',
  group: 'object',
  compile(k) {
    if (!isObject(k.value)) return k.invalid('dependentSchemas must be an object');
    return dependentSchemas(k, Object.entries(k.value));
  },
};

export const dependenciesKeyword: KeywordDefinition = {
  keyword: 'dependencies',
  group: 'object',
  compile(k) {
    if (!isObject(k.value)) return k.invalid('dependencies must be an object');
    const entries = Object.entries(k.value);
    const a = dependentRequired(k, entries.filter(([, v]) => Array.isArray(v)), 'dependencies arrays must hold strings');
    const schemas = entries.filter(([, v]) => !Array.isArray(v));
    const b = schemas.length > 0 ? dependentSchemas(k, schemas) : null;
    if (a === null) return b;
    if (b === null) return a;
    return (data, ctx, ev) => {
      const r = a(data, ctx, ev);
      if (!r && ctx.silent !== 0) return false;
      return b(data, ctx, ev) && r;
    };
  },
};
