/**
 * @module The size and names of an object: `minProperties`, `maxProperties`
 * (checks) and `propertyNames` (transparent, except that `false` is one check
 * at the object).
 */
import type { Json, JsonObject } from '../../types.js';
import { applyAt, countCheck, type KeywordDefinition } from '../keyword.js';
import { Check, propertiesText } from '../runtime.js';
import { sizeLimit, type Measure } from './size-limit.js';

const propertyCount = (data: Json): number => Object.keys(data as JsonObject).length;
const PROPERTIES: Measure = {
  group: 'object',
  noun: 'properties',
  text: propertiesText,
  // one step per four keys listed
  size(data, ctx) {
    const n = propertyCount(data);
    ctx.steps += n >> 2;
    return n;
  },
  found: propertyCount,
};

export const minPropertiesKeyword = sizeLimit('minProperties', '>=', PROPERTIES);
export const maxPropertiesKeyword = sizeLimit('maxProperties', '<=', PROPERTIES);

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
