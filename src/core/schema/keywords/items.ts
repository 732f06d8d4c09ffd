/**
 * @module The applicators to an array's items: `prefixItems`, `items` (with
 * draft-07 `additionalItems`) and `unevaluatedItems`, transparent, except that a
 * `false` subschema is one check at the array. `items` with one schema for
 * every item writes its own generated code (a loop).
 */
import type { Json } from '../../types.js';
import { applyAt, applyToItems, countCheck, type KeywordContext, type KeywordDefinition } from '../keyword.js';
import { Check, itemsText, type Validate } from '../runtime.js';

/** Apply subschemas position by position. */
function tuple(subs: Validate[]): Validate {
  const n = subs.length;
  return (data, ctx, ev) => {
    const a = data as Json[];
    const m = a.length < n ? a.length : n;
    let ok = true;
    for (let i = 0; i < m; i++) {
      if (!applyAt(subs[i], a[i], i, ctx)) {
        if (ctx.silent !== 0) return false;
        ok = false;
      }
    }
    if (ev !== null && m > ev.items) ev.items = m;
    return ok;
  };
}

/** Apply one subschema to every item from index `from`; `false` is one check at the array. */
function rest(k: KeywordContext, keyword: string, value: Json, from: number, segments: Array<string | number>, sibling?: string): Validate | null {
  if (value === true) {
    return (_data, _ctx, ev) => {
      if (ev !== null) ev.items = Infinity;
      return true;
    };
  }
  if (value === false) {
    const expected = from === 0 ? 'no items' : `at most ${from} items`;
    const check = new Check(keyword, k.pathOf(segments, sibling), expected, `have ${expected}`, itemsText);
    return (data, ctx) => {
      const n = (data as Json[]).length;
      countCheck(ctx, n <= from, check, n);
      return n <= from;
    };
  }
  const sub = k.sub(value, segments, sibling);
  return (data, ctx, ev) => {
    const ok = applyToItems(sub, data as Json[], from, ctx, null);
    if (!ok && ctx.silent !== 0) return false;
    if (ev !== null) ev.items = Infinity;
    return ok;
  };
}

export const prefixItemsKeyword: KeywordDefinition = {
  keyword: 'prefixItems',
  group: 'array',
  compile(k) {
    if (!Array.isArray(k.value)) return k.invalid('prefixItems must be an array');
    return tuple(k.value.map((s, i) => k.sub(s, [i])));
  },
};

export const itemsKeyword: KeywordDefinition = {
  keyword: 'items',
  group: 'array',
  compile(k) {
    const v = k.value;
    if (Array.isArray(v)) {
      if (k.dialect.version === 2020) return k.invalid('items must be a schema (use prefixItems for tuples)');
      const t = tuple(v.map((s, i) => k.sub(s, [i])));
      const addl = k.schema.additionalItems;
      if (addl === undefined || !k.dialect.keywords.has('additionalItems')) return t;
      const r = rest(k, 'additionalItems', addl, v.length, [], 'additionalItems')!;
      return (data, ctx, ev) => {
        const a = t(data, ctx, ev);
        if (!a && ctx.silent !== 0) return false;
        return r(data, ctx, ev) && a;
      };
    }
    let from = 0;
    if (k.dialect.version === 2020 && Array.isArray(k.schema.prefixItems)) from = k.schema.prefixItems.length;
    return rest(k, 'items', v, from, []);
  },
  code: {
    // one schema for every item: a loop (tuples, and items after prefixItems, call the closure)
    emit(c) {
      const v = c.value;
      if (Array.isArray(v) || (c.dialect.version === 2020 && c.schema.prefixItems !== undefined) || v === false) {
        c.closure();
        return;
      }
      if (v === true) return;
      const i = c.name('i');
      const item = c.name('d');
      c.emit(`for (let ${i} = 0; ${i} < ${c.data}.length; ${i}++) {`);
      c.emit(`const ${item} = ${c.data}[${i}];`);
      c.sub(v, item, i, undefined, true);
      c.emit('}');
    },
  },
};

export const unevaluatedItemsKeyword: KeywordDefinition = {
  keyword: 'unevaluatedItems',
  group: 'last',
  compile(k) {
    const v = k.value;
    const sub = typeof v === 'boolean' ? null : k.sub(v, []);
    const check = new Check('unevaluatedItems', k.schemaPath, 'no unevaluated items', 'have no unevaluated items', (i) => `item at index ${i}`);
    return (data, ctx, ev) => {
      if (!Array.isArray(data)) return true;
      const e = ev!;
      let ok = true;
      ctx.steps += data.length;
      if (v === false) {
        let bad = -1;
        for (let i = 0; i < data.length; i++) if (!e.hasItem(i)) { bad = i; break; }
        ok = bad < 0;
        countCheck(ctx, ok, check, bad);
      } else if (sub !== null) {
        ok = applyToItems(sub, data, 0, ctx, e);
        if (!ok && ctx.silent !== 0) return false;
      }
      e.items = Infinity;
      return ok;
    };
  },
};
