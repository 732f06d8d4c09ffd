/** @module `regex` format: the string is a valid ECMA-262 regular expression under the `u` flag. */
import { isValidPattern } from '../regex/index.js';

export function isRegex(value: string): boolean {
  return isValidPattern(value);
}
