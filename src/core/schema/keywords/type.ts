/**
 * @module `type`, `enum` and `const`: one check each at every location they apply to.
 * Each writes its generated code as one inline comparison (`enum` and `const`
 * of objects or arrays call their closure).
 */
import type { Json } from '../../types.js';
import { verdict, type KeywordDefinition } from '../keyword.js';
import { Check, clipText, describe, describeText, foundType, jsonEqual, reportText, reportValue, withReporter, type Reporter } from '../runtime.js';

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
function foundReporter(keyword: string, sp: string, expected: string): Reporter {
  const must = `be ${expected}`;
  const lazy = new Check(keyword, sp, expected, must, describeText);
  const now = new Check(keyword, sp, expected, must, null);
  return (data, ctx, path, index) => {
    if (typeof data !== 'object' || data === null) reportValue(ctx, lazy, data, path, index);
    else reportText(ctx, now, describe(data), path, index);
  };
}

export const typeKeyword: KeywordDefinition = {
  keyword: 'type',
  group: 'any',
  compile(k) {
    const list = Array.isArray(k.value) ? k.value : [k.value];
    if (list.length === 0) return k.invalid('type must name at least one type');
    for (const t of list) if (typeof t !== 'string' || !TYPES.has(t)) return k.invalid(`unknown type ${JSON.stringify(t)}`);
    const names = list as string[];
    const expected = `type ${names.join(' or ')}`;
    const check = new Check('type', k.schemaPath, expected, `be ${expected}`, null);
    const reporter: Reporter = (data, ctx, path, index) => reportText(ctx, check, foundType(data), path, index);
    // a closure of its own for the common single types, the test inline
    if (names.length === 1) {
      const t = names[0];
      if (t === 'string') return withReporter((data, ctx) => verdict(typeof data === 'string', data, ctx, reporter), reporter);
      if (t === 'integer') return withReporter((data, ctx) => verdict(typeof data === 'number' && Number.isInteger(data), data, ctx, reporter), reporter);
      if (t === 'object') return withReporter((data, ctx) => verdict(typeof data === 'object' && data !== null && !Array.isArray(data), data, ctx, reporter), reporter);
      const m = typeMatcher(t);
      return withReporter((data, ctx) => verdict(m(data), data, ctx, reporter), reporter);
    }
    const ms = names.map(typeMatcher);
    const some = (data: Json): boolean => {
      for (let i = 0; i < ms.length; i++) if (ms[i](data)) return true;
      return false;
    };
    return withReporter((data, ctx) => verdict(some(data), data, ctx, reporter), reporter);
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
    const prim = new Set<Json>();
    const complex: Json[] = [];
    for (const v of values) {
      if (typeof v === 'object' && v !== null) complex.push(v);
      else prim.add(v);
    }
    const test = (data: Json): boolean => {
      if (typeof data !== 'object' || data === null) return prim.has(data);
      for (let i = 0; i < complex.length; i++) if (jsonEqual(complex[i], data)) return true;
      return false;
    };
    const reporter = foundReporter('enum', k.schemaPath, expectedValues(values));
    return withReporter((data, ctx) => verdict(test(data), data, ctx, reporter), reporter);
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
    const reporter = foundReporter('const', k.schemaPath, `value ${clipText(JSON.stringify(c), 60)}`);
    return withReporter((data, ctx) => verdict(jsonEqual(c, data), data, ctx, reporter), reporter);
  },
  code: {
    emit(c) {
      if (typeof c.value === 'object' && c.value !== null) c.closure();
      else c.check(`${c.data} === ${JSON.stringify(c.value)}`);
    },
  },
};
