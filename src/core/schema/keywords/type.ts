/**
 * @module `type`, `enum` and `const`: one check each at every location they apply to.
 * Each writes its generated code as one inline comparison (`enum` and `const`
 * of objects or arrays call their closure).
 */
import type { Json } from '../../types.js';
import { countPass, type KeywordDefinition } from '../keyword.js';
import { Check, clipText, describe, describeText, foundType, jsonEqual, reportText, reportValue, withReporter, type EvalContext, type RecordedPath, type Validate } from '../runtime.js';

const TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'integer', 'string']);

function typeMatcher(t: string): (v: Json) => boolean {
  switch (t) {
    case 'null':
      return (v) => v === null;
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'object':
      return (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
    case 'array':
      return (v) => Array.isArray(v);
    case 'number':
      return (v) => typeof v === 'number';
    case 'integer':
      return (v) => typeof v === 'number' && Number.isInteger(v);
    default:
      return (v) => typeof v === 'string';
  }
}

/** The generated test that the value in variable `d` is of JSON type `t` (codegen.ts selects keywords by it too). */
export function typeCode(t: string, d: string): string {
  switch (t) {
    case 'string':
      return `typeof ${d} === "string"`;
    case 'number':
      return `typeof ${d} === "number"`;
    case 'integer':
      return `(typeof ${d} === "number" && Number.isInteger(${d}))`;
    case 'boolean':
      return `typeof ${d} === "boolean"`;
    case 'null':
      return `${d} === null`;
    case 'array':
      return `Array.isArray(${d})`;
    default:
      return `(typeof ${d} === "object" && ${d} !== null && !Array.isArray(${d}))`;
  }
}

/**
 * enum/const failures: a primitive is described when the failure is read (`lazy`), a
 * container at once (it may change; `now`, the same check with the text as recorded).
 */
function reportFound(ctx: EvalContext, lazy: Check, now: Check, data: Json, path: RecordedPath | null, index: number): void {
  if (typeof data !== 'object' || data === null) reportValue(ctx, lazy, data, path, index);
  else reportText(ctx, now, describe(data), path, index);
}

/** The two checks reportFound() records with. */
function foundChecks(keyword: string, sp: string, expected: string): [Check, Check] {
  const must = `be ${expected}`;
  return [new Check(keyword, sp, expected, must, describeText), new Check(keyword, sp, expected, must, null)];
}

export const typeKeyword: KeywordDefinition = {
  keyword: 'type',
  group: 'any',
  compile(k) {
    const list = Array.isArray(k.value) ? k.value : [k.value];
    if (list.length === 0) return k.invalid('type must name at least one type');
    for (const t of list) if (typeof t !== 'string' || !TYPES.has(t)) return k.invalid(`unknown type ${JSON.stringify(t)}`);
    const names = list as string[];
    const sp = k.schemaPath;
    const expected = `type ${names.join(' or ')}`;
    const check = new Check('type', sp, expected, `be ${expected}`, null);
    const fail = (data: Json, ctx: EvalContext, path: RecordedPath | null = null, index = -1): false => {
      if (ctx.silent === 0) reportText(ctx, check, foundType(data), path, index);
      return false;
    };
    if (names.length === 1) {
      const t = names[0];
      const m = typeMatcher(t);
      // fast paths for the common single types
      if (t === 'string')
        return withReporter((data, ctx) => {
          if (typeof data !== 'string') return fail(data, ctx);
          countPass(ctx);
          return true;
        }, fail);
      if (t === 'integer')
        return withReporter((data, ctx) => {
          if (typeof data !== 'number' || !Number.isInteger(data)) return fail(data, ctx);
          countPass(ctx);
          return true;
        }, fail);
      if (t === 'object')
        return withReporter((data, ctx) => {
          if (typeof data !== 'object' || data === null || Array.isArray(data)) return fail(data, ctx);
          countPass(ctx);
          return true;
        }, fail);
      return withReporter((data, ctx) => {
        if (!m(data)) return fail(data, ctx);
        countPass(ctx);
        return true;
      }, fail);
    }
    const ms = names.map(typeMatcher);
    return withReporter((data, ctx) => {
      for (let i = 0; i < ms.length; i++) {
        if (ms[i](data)) {
          countPass(ctx);
          return true;
        }
      }
      return fail(data, ctx);
    }, fail);
  },
  code: {
    emit(c) {
      const list = Array.isArray(c.value) ? c.value : [c.value];
      c.check(list.map((t) => typeCode(t as string, c.data)).join(' || '));
    },
  },
};

function expectedValues(values: Json[]): string {
  const shown = values.slice(0, 5).map((v) => JSON.stringify(v)).join(', ');
  return values.length > 5 ? `one of ${shown}, … (${values.length - 5} more)` : `one of ${shown}`;
}

export const enumKeyword: KeywordDefinition = {
  keyword: 'enum',
  group: 'any',
  compile(k) {
    if (!Array.isArray(k.value)) return k.invalid('enum must be an array');
    const values = k.value;
    const sp = k.schemaPath;
    const prim = new Set<Json>();
    const complex: Json[] = [];
    for (const v of values) {
      if (typeof v === 'object' && v !== null) complex.push(v);
      else prim.add(v);
    }
    const [lazy, now] = foundChecks('enum', sp, expectedValues(values));
    const fn: Validate = (data, ctx) => {
      let ok: boolean;
      if (typeof data !== 'object' || data === null) ok = prim.has(data);
      else {
        ok = false;
        for (let i = 0; i < complex.length; i++) if (jsonEqual(complex[i], data)) { ok = true; break; }
      }
      if (ok) {
        countPass(ctx);
      } else if (ctx.silent === 0) reportFound(ctx, lazy, now, data, null, -1);
      return ok;
    };
    return withReporter(fn, (data, ctx, path, index) => reportFound(ctx, lazy, now, data, path, index));
  },
  code: {
    emit(c) {
      const values = c.value as Json[];
      const d = c.data;
      if (values.some((x) => typeof x === 'object' && x !== null)) c.closure();
      else if (values.length === 0) c.check('false');
      else if (values.length <= 4) c.check(values.map((x) => `${d} === ${JSON.stringify(x)}`).join(' || '));
      else c.check(`${c.constant(new Set(values))}.has(${d})`);
    },
  },
};

export const constKeyword: KeywordDefinition = {
  keyword: 'const',
  group: 'any',
  compile(k) {
    const c = k.value;
    const sp = k.schemaPath;
    const text = JSON.stringify(c);
    const [lazy, now] = foundChecks('const', sp, `value ${clipText(text, 60)}`);
    const fn: Validate = (data, ctx) => {
      const ok = jsonEqual(c, data);
      if (ok) {
        countPass(ctx);
      } else if (ctx.silent === 0) reportFound(ctx, lazy, now, data, null, -1);
      return ok;
    };
    return withReporter(fn, (data, ctx, path, index) => reportFound(ctx, lazy, now, data, path, index));
  },
  code: {
    emit(c) {
      if (typeof c.value === 'object' && c.value !== null) c.closure();
      else c.check(`${c.data} === ${JSON.stringify(c.value)}`);
    },
  },
};
