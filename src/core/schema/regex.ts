/**
 * @module Pattern compilation for `pattern`, `patternProperties` and the `regex` format.
 * (Initial version: plain ECMA-262 with the `u` flag; to be replaced by a version that
 * cannot backtrack catastrophically.)
 */

export interface CompiledPattern {
  test(input: string): boolean;
}

/** Compile an ECMA-262 pattern. Throws an Error with a short reason when it is invalid. */
export function compilePattern(source: string): CompiledPattern {
  const re = new RegExp(source, 'u');
  return { test: (s) => re.test(s) };
}
