/** @module `json-pointer` format (RFC 6901), and the grammar shared with `relative-json-pointer`. */

const POINTER = /^(?:\/(?:[^~/]|~[01])*)*$/u;
// draft-bhutton-relative-json-pointer-00: non-negative-integer [index-manipulation] (json-pointer / "#"),
// index-manipulation = ("+" / "-") positive-integer
const RELATIVE = /^(?:0|[1-9][0-9]*)(?:[+-][1-9][0-9]*)?(?:#|(?:\/(?:[^~/]|~[01])*)*)$/u;

export function isJsonPointer(value: string): boolean {
  return POINTER.test(value);
}

export function isRelativeJsonPointer(value: string): boolean {
  return RELATIVE.test(value);
}
