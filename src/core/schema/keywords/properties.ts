/**
 * @module The applicators to an object's properties: `properties`,
 * `patternProperties`, `additionalProperties` and `unevaluatedProperties`
 * (transparent, except that `false` under additional/unevaluated is one check at
 * the object). `properties` and `additionalProperties: false` write their own
 * generated code.
 */
import type { JsonObject } from '../../types.js';
import { applyAt, countCheck, isObject, type KeywordContext, type KeywordDefinition } from '../keyword.js';
import { Check, has, matchCounted, PathSegment, PROTO_KEYS, quoteList, type Annotations, type EvalContext } from '../runtime.js';
import { patternOf } from './string.js';

export const propertiesKeyword: KeywordDefinition = {
  keyword: 'properties',
  group: 'object',
  compile(k) {
    if (!isObject(k.value)) return k.invalid('properties must be an object');
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
    if (!isObject(k.value)) return k.invalid('patternProperties must be an object');
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

const hasOwn = Object.prototype.hasOwnProperty;

/** Picks the properties `additionalProperties` or `unevaluatedProperties` applies to (charging what it does). */
type Select = (key: string, ctx: EvalContext, ev: Annotations | null) => boolean;

/**
 * `additionalProperties` and `unevaluatedProperties` on the own properties of
 * an object that `select` picks: `false` is one check that there are none (naming
 * them), a schema applies to each at its key, `true` accepts them. Except under
 * `false`, every property is declared (see EvalContext.declared).
 */
function otherProperties(k: KeywordContext, what: string, select: Select): (o: JsonObject, ctx: EvalContext, ev: Annotations | null) => boolean {
  const v = k.value;
  if (v === false) {
    const check = new Check(k.keyword, k.schemaPath, `no ${what} properties`, `have no ${what} properties`, null);
    return (o, ctx, ev) => {
      let extra: string[] | null = null;
      for (const key in o) {
        if (!hasOwn.call(o, key) || !select(key, ctx, ev)) continue;
        if (ctx.silent !== 0) return false;
        (extra ??= []).push(key);
      }
      countCheck(ctx, extra === null, check, extra === null ? '' : `${extra.length === 1 ? 'property' : 'properties'} ${quoteList(extra)}`);
      return extra === null;
    };
  }
  const sub = v === true ? null : k.sub(v, []);
  return (o, ctx, ev) => {
    if (ctx.declared !== null) ctx.declareAll(o);
    if (sub === null) return true;
    let ok = true;
    for (const key in o) {
      if (!hasOwn.call(o, key) || !select(key, ctx, ev)) continue;
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
    const props = k.dialect.keywords.has('properties') && isObject(k.schema.properties) ? new Set(Object.keys(k.schema.properties)) : new Set<string>();
    const patterns =
      k.dialect.keywords.has('patternProperties') && isObject(k.schema.patternProperties)
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
    if (k.value === false) return (data, ctx, ev) => apply(data as JsonObject, ctx, ev);
    return (data, ctx, ev) => {
      const ok = apply(data as JsonObject, ctx, ev);
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
      const declared = c.dialect.keywords.has('properties') && isObject(props) ? Object.keys(props) : [];
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

export const unevaluatedPropertiesKeyword: KeywordDefinition = {
  keyword: 'unevaluatedProperties',
  group: 'last',
  compile(k) {
    const apply = otherProperties(k, 'unevaluated', (key, _ctx, ev) => !ev!.hasProp(key));
    return (data, ctx, ev) => {
      if (typeof data !== 'object' || data === null || Array.isArray(data)) return true;
      ctx.steps += Object.keys(data).length;
      const ok = apply(data, ctx, ev);
      if (!ok && ctx.silent !== 0) return false;
      ev!.allProps = true;
      return ok;
    };
  },
};
