/**
 * @module JSON equality (docs/protocol.md#rules `exists_in` / `unique`): two values are
 * equal when they are the same JSON value, whatever the key order of their
 * objects. Implemented as a canonical string so sets of values compare in
 * linear time.
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

export function jsonEqual(a: Json, b: Json): boolean {
  return jsonKey(a) === jsonKey(b);
}
