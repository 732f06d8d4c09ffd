/** @module `relative-json-pointer` format: draft-bhutton-relative-json-pointer-00 (with index manipulation: `0+1`, `1-2/bar`). */
export { isRelativeJsonPointer } from './json-pointer.js';
