/**
 * @module The size and names of an object: `minProperties`, `maxProperties`
 * (checks) and `propertyNames` (transparent, except that `false` is one check
 * at the object).
 */
import type { JsonObject } from '../../types.js';
import { applyAt, countCheck, countOf, type KeywordDefinition } from '../keyword.js';
import { Check, propertiesText } from '../runtime.js';

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
