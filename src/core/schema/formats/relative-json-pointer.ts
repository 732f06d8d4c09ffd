/** @module `relative-json-pointer` format: draft-handrews-relative-json-pointer-01. */
export { isRelativeJsonPointer } from './json-pointer.js';
