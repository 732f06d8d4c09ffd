/**
 * @module `$ref`, `$dynamicRef` (2020-12) and `$recursiveRef` (2019-09). All are
 * resolved at compile time; the dynamic ones pick a target from the dynamic scope
 * at run time. A reference is transparent: only the keywords it reaches count.
 * Generated code inlines the target of a `$ref` where it can.
 */
import type { KeywordCode, KeywordContext } from '../keyword.js';
import type { Holder, Validate } from '../runtime.js';
import { splitRef } from '../uri.js';

export function compileRefKeyword(k: KeywordContext): Validate {
  if (typeof k.value !== 'string') return k.invalid(`${k.keyword} must be a string`);
  const ref = k.value;
  const state = k.state;
  const t = k.resolve(ref);
  const target = t.holder;
  const res = t.resource;
  if (k.keyword === '$ref') {
    if (res === k.resource) return (data, ctx, ev) => target.fn(data, ctx, ev);
    return (data, ctx, ev) => {
      if (!state.dynamic) return target.fn(data, ctx, ev);
      ctx.dyn.push(res);
      const ok = target.fn(data, ctx, ev);
      ctx.dyn.pop();
      return ok;
    };
  }
  state.dynamic = true;
  const node = t.node;
  if (k.keyword === '$dynamicRef') {
    const { uri, fragment } = splitRef(ref);
    void uri;
    const name =
      fragment !== '' && !fragment.startsWith('/') && typeof node === 'object' && node !== null && !Array.isArray(node) &&
      node.$dynamicAnchor === fragment
        ? fragment
        : null;
    return (data, ctx, ev) => {
      let h: Holder = target;
      if (name !== null) {
        for (let i = 0; i < ctx.dyn.length; i++) {
          const dh = ctx.dyn[i].dynamicHolders.get(name);
          if (dh !== undefined) {
            h = dh;
            break;
          }
        }
      }
      ctx.dyn.push(res);
      const ok = h.fn(data, ctx, ev);
      ctx.dyn.pop();
      return ok;
    };
  }
  // $recursiveRef
  const anchored = typeof node === 'object' && node !== null && !Array.isArray(node) && node.$recursiveAnchor === true;
  return (data, ctx, ev) => {
    let h: Holder = target;
    if (anchored) {
      for (let i = 0; i < ctx.dyn.length; i++) {
        const r = ctx.dyn[i];
        if (r.recursiveAnchor && r.rootHolder !== null) {
          h = r.rootHolder;
          break;
        }
      }
    }
    ctx.dyn.push(res);
    const ok = h.fn(data, ctx, ev);
    ctx.dyn.pop();
    return ok;
  };
}

/** `$ref` in generated code: its target in place (the dynamic references call their closures). */
export const refCode: KeywordCode = {
  emit(c) {
    c.inline(c.target);
  },
};
