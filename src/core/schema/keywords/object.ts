/**
 * @module Object keywords: `required`, `minProperties`, `maxProperties`,
 * `dependentRequired` and the array form of draft-07 `dependencies` (checks);
 * `properties`, `patternProperties`, `additionalProperties`, `propertyNames`,
 * `dependentSchemas`, `unevaluatedProperties` (transparent, except that a `false`
 * subschema under additional/unevaluated/propertyNames is one check at the object).
 * `required`, `properties` and `additionalProperties: false` write their own
 * generated code; the properties both of the first two read are read once.
 */
import type { Json, JsonObject } from '../../types.js';
import { applyAt, assertion, countCheck, countOf, countPass, type KeywordContext, type KeywordDefinition } from '../keyword.js';
import {
  Check, checkOf, has, matchCounted, MissingCheck, PathSegment, propertiesText, PROTO_KEYS, quoteList, report, reportMissing, type Annotations, type EvalContext, type Reporter,
  type Validate,
} from '../runtime.js';
import { patternOf } from './string.js';

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
    return assertion(test, reporter, check);
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

function propCount(keyword: string, op: string, cmp: (n: number, l: number) => boolean): KeywordDefinition {
  return {
    keyword,
    group: 'object',
    compile(k) {
      const limit = countOf(k);
      const expected = `${op} ${limit} properties`;
      const check = new Check(keyword, k.schemaPath, expected, `have ${expected}`, propertiesText);
      return (data, ctx) => {
        const n = Object.keys(data as JsonObject).length;
        ctx.steps += n >> 2;
        const ok = cmp(n, limit);
        countCheck(ctx, ok, check, n);
        return ok;
      };
    },
  };
}

export const minPropertiesKeyword = propCount('minProperties', '>=', (n, l) => n >= l);
export const maxPropertiesKeyword = propCount('maxProperties', '<=', (n, l) => n <= l);

/** `dependentRequired` and the array entries of `dependencies`: one check per location. */
function dependentChecker(keyword: string, sp: string, deps: Array<[string, string[]]>): Validate {
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

function isObj(v: Json): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export const dependentRequiredKeyword: KeywordDefinition = {
  keyword: 'dependentRequired',
  group: 'object',
  compile(k) {
    if (!isObj(k.value)) return k.invalid('dependentRequired must be an object');
    const deps: Array<[string, string[]]> = [];
    for (const [key, v] of Object.entries(k.value)) {
      if (!isStringArray(v)) return k.invalid('dependentRequired values must be arrays of strings');
      if (v.length > 0) deps.push([key, v]);
    }
    return deps.length === 0 ? null : dependentChecker('dependentRequired', k.schemaPath, deps);
  },
};

export const dependentSchemasKeyword: KeywordDefinition = {
  keyword: 'dependentSchemas',
  group: 'object',
  compile(k) {
    if (!isObj(k.value)) return k.invalid('dependentSchemas must be an object');
    return dependentSchemas(k, Object.entries(k.value));
  },
};

export const dependenciesKeyword: KeywordDefinition = {
  keyword: 'dependencies',
  group: 'object',
  compile(k) {
    if (!isObj(k.value)) return k.invalid('dependencies must be an object');
    const deps: Array<[string, string[]]> = [];
    const schemas: Array<[string, Json]> = [];
    for (const [key, v] of Object.entries(k.value)) {
      if (Array.isArray(v)) {
        if (!isStringArray(v)) return k.invalid('dependencies arrays must hold strings');
        if (v.length > 0) deps.push([key, v]);
      } else schemas.push([key, v]);
    }
    const a = deps.length > 0 ? dependentChecker('dependencies', k.schemaPath, deps) : null;
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

export const propertiesKeyword: KeywordDefinition = {
  keyword: 'properties',
  group: 'object',
  compile(k) {
    if (!isObj(k.value)) return k.invalid('properties must be an object');
    const keys = Object.keys(k.value);
    const subs = keys.map((key) => k.sub((k.value as JsonObject)[key], [key]));
    const proto = keys.map((key) => PROTO_KEYS.has(key));
    const segs = keys.map((key) => new PathSegment(key));
    const n = keys.length;
    return (data, ctx, ev) => {
      const o = data as JsonObject;
      let ok = true;
      for (let i = 0; i < n; i++) {
        const key = keys[i];
        const v = o[key];
        if (v === undefined || (proto[i] && !has(o, key))) continue;
        if (!applyAt(subs[i], v, segs[i], ctx)) {
          if (ctx.silent !== 0) return false;
          ok = false;
        }
        if (ev !== null) ev.addProp(key);
      }
      if (ctx.declared !== null) ctx.declareKeys(o, keys);
      return ok;
    };
  },
  code: {
    reads: (value) => Object.keys(value as JsonObject).filter((key) => (value as JsonObject)[key] !== true),
    emit(c) {
      const props = c.value as JsonObject;
      const keys = Object.keys(props);
      if (keys.length > 0) c.emit(`if (D) ctx.declareKeys(${c.data}, ${c.constant(keys)});`);
      for (const key of keys) {
        const sub = props[key];
        if (sub === true) continue;
        const v = c.own(key);
        c.emit(`if (${v} !== undefined) {`);
        c.sub(sub, v, c.constant(new PathSegment(key)), key, false);
        c.emit('}');
      }
    },
  },
};

export const patternPropertiesKeyword: KeywordDefinition = {
  keyword: 'patternProperties',
  group: 'object',
  compile(k) {
    if (!isObj(k.value)) return k.invalid('patternProperties must be an object');
    const entries = Object.keys(k.value).map((p) => ({
      re: patternOf(p, k.pathOf([p]), k.state),
      path: k.pathOf([p]),
      sub: k.sub((k.value as JsonObject)[p], [p]),
    }));
    return (data, ctx, ev) => {
      const o = data as JsonObject;
      let ok = true;
      for (const key of Object.keys(o)) {
        for (let i = 0; i < entries.length; i++) {
          if (!matchCounted(entries[i].re, key, ctx, entries[i].path)) continue;
          if (ctx.declared !== null) ctx.declare(o, key);
          if (ev !== null) ev.addProp(key);
          if (!applyAt(entries[i].sub, o[key], key, ctx)) {
            if (ctx.silent !== 0) return false;
            ok = false;
          }
        }
      }
      return ok;
    };
  },
};

/** Picks the properties `additionalProperties` or `unevaluatedProperties` applies to (charging what it does). */
type Select = (key: string, ctx: EvalContext, ev: Annotations | null) => boolean;

/**
 * `additionalProperties` and `unevaluatedProperties` on the properties among
 * `keys` that `select` picks: `false` is one check that there are none (naming
 * them), a schema applies to each at its key, `true` accepts them. Except under
 * `false`, every property is declared (see EvalContext.declared).
 */
function otherProperties(k: KeywordContext, what: string, select: Select): (o: JsonObject, keys: readonly string[], ctx: EvalContext, ev: Annotations | null) => boolean {
  const v = k.value;
  if (v === false) {
    const check = new Check(k.keyword, k.schemaPath, `no ${what} properties`, `have no ${what} properties`, null);
    return (_o, keys, ctx, ev) => {
      let extra: string[] | null = null;
      for (const key of keys) {
        if (!select(key, ctx, ev)) continue;
        if (ctx.silent !== 0) return false;
        (extra ??= []).push(key);
      }
      countCheck(ctx, extra === null, check, extra === null ? '' : `${extra.length === 1 ? 'property' : 'properties'} ${quoteList(extra)}`);
      return extra === null;
    };
  }
  const sub = v === true ? null : k.sub(v, []);
  return (o, keys, ctx, ev) => {
    if (ctx.declared !== null) ctx.declareAll(o);
    if (sub === null) return true;
    let ok = true;
    for (const key of keys) {
      if (!select(key, ctx, ev)) continue;
      if (!applyAt(sub, o[key], key, ctx)) {
        if (ctx.silent !== 0) return false;
        ok = false;
      }
    }
    return ok;
  };
}

export const additionalPropertiesKeyword: KeywordDefinition = {
  keyword: 'additionalProperties',
  group: 'object',
  compile(k) {
    const props = k.dialect.keywords.has('properties') && isObj(k.schema.properties) ? new Set(Object.keys(k.schema.properties)) : new Set<string>();
    const patterns =
      k.dialect.keywords.has('patternProperties') && isObj(k.schema.patternProperties)
        ? Object.keys(k.schema.patternProperties).map((p) => ({ re: patternOf(p, k.pathOf([p], 'patternProperties')), path: k.pathOf([p], 'patternProperties') }))
        : [];
    // one step per own key examined
    const isAdditional: Select = (key, ctx) => {
      ctx.steps++;
      if (props.has(key)) return false;
      for (let i = 0; i < patterns.length; i++) if (matchCounted(patterns[i].re, key, ctx, patterns[i].path)) return false;
      return true;
    };
    const apply = otherProperties(k, 'additional', isAdditional);
    if (k.value === false) return (data, ctx, ev) => apply(data as JsonObject, Object.keys(data as JsonObject), ctx, ev);
    return (data, ctx, ev) => {
      const ok = apply(data as JsonObject, Object.keys(data as JsonObject), ctx, ev);
      if (!ok && ctx.silent !== 0) return false;
      if (ev !== null) ev.allProps = true;
      return ok;
    };
  },
  code: {
    emit(c) {
      if (c.value !== false || c.schema.patternProperties !== undefined) {
        c.closure();
        return;
      }
      // the shape strict structured-output schemas use everywhere: an inline key scan
      const props = c.schema.properties;
      const declared = c.dialect.keywords.has('properties') && isObj(props) ? Object.keys(props) : [];
      const d = c.data;
      const key = c.name('k');
      const extra = c.name('x');
      const test =
        declared.length === 0 ? 'true' : declared.length <= 8 ? declared.map((p) => `${key} !== ${JSON.stringify(p)}`).join(' && ') : `!${c.constant(new Set(declared))}.has(${key})`;
      c.emit(`let ${extra} = false; S = st;`);
      // one step per own key examined, as the closure's key scan charges
      c.emit(`for (const ${key} in ${d}) { if (H.call(${d}, ${key})) { st++; if (${test}) { ${extra} = true; break; } } }`);
      c.check(`!${extra}`, { charges: 'marked' });
    },
  },
};

export const propertyNamesKeyword: KeywordDefinition = {
  keyword: 'propertyNames',
  group: 'object',
  compile(k) {
    const v = k.value;
    if (v === true) return null;
    if (v === false) {
      const check = new Check('propertyNames', k.schemaPath, 'no properties', 'have no properties', propertiesText);
      return (data, ctx) => {
        const n = Object.keys(data as JsonObject).length;
        countCheck(ctx, n === 0, check, n);
        return n === 0;
      };
    }
    const sub = k.sub(v, []);
    return (data, ctx) => {
      let ok = true;
      for (const key of Object.keys(data as JsonObject)) {
        if (!applyAt(sub, key, key, ctx)) {
          if (ctx.silent !== 0) return false;
          ok = false;
        }
      }
      return ok;
    };
  },
};

export const unevaluatedPropertiesKeyword: KeywordDefinition = {
  keyword: 'unevaluatedProperties',
  group: 'last',
  compile(k) {
    const apply = otherProperties(k, 'unevaluated', (key, _ctx, ev) => !ev!.hasProp(key));
    return (data, ctx, ev) => {
      if (typeof data !== 'object' || data === null || Array.isArray(data)) return true;
      const keys = Object.keys(data);
      ctx.steps += keys.length;
      const ok = apply(data, keys, ctx, ev);
      if (!ok && ctx.silent !== 0) return false;
      ev!.allProps = true;
      return ok;
    };
  },
};
