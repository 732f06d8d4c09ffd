/**
 * @module JSON equality (docs/protocol.md#rules `exists_in` / `unique`): two values are
 * equal when they are the same JSON value, whatever the key order of their
 * objects. `jsonEqual` compares two values structurally (the schema keywords'
 * `const` and `enum`, JSON Patch `test`); `jsonKey` writes a canonical string,
 * so the rules compare sets of values in linear time.
 */
import type { Json } from './types.js';

/** A string that is equal for two values exactly when they are equal as JSON. */
export function jsonKey(value: Json): string {
  // A top-level string needs no escaping: its leading quote already sets it
  // apart from every other key (numbers, true/false/null, [..], {..}), and
  // rules compute one key per selected value, often thousands of strings.
  if (typeof value === 'string') return `"${value}`;
  return nestedKey(value);
}

/** The key of a value inside an array or object: strings in JSON form, so the text is unambiguous. */
function nestedKey(value: Json): string {
  if (value === null || typeof value !== 'object') {
    // String(-0) is "0": JSON does not distinguish them either.
    return typeof value === 'string' ? JSON.stringify(value) : String(value);
  }
  if (Array.isArray(value)) return `[${value.map(nestedKey).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${nestedKey(value[k])}`).join(',')}}`;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** JSON equality: numbers by value, objects regardless of key order. */
export function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!hasOwn.call(b, k) || !jsonEqual(a[k], b[k])) return false;
  }
  return true;
}
