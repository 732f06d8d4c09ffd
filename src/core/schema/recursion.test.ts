/**
 * @module A reference cycle that never descends into the instance overflows V8's stack; the
 * verdict must not depend on how deep the stack is (machine, thread, closures or generated code).
 */
import { describe, expect, it } from 'vitest';
import { createSchemaEngine } from './index.js';

const CYCLE = {
  $defs: { a: { type: 'integer', $ref: '#/$defs/b' }, b: { minimum: 0, $ref: '#/$defs/a' } },
  $ref: '#/$defs/a',
};

function outcome(r: { valid: boolean; passed: number; total: number; failures: ReadonlyArray<{ keyword: string; found: string }> }) {
  return { valid: r.valid, passed: r.passed, total: r.total, failures: r.failures.map((f) => `${f.keyword}:${f.found}`) };
}

describe('endless recursion', () => {
  it('is one failed check, the same on the closures and on generated code, on every evaluation', () => {
    const compiled = createSchemaEngine().compile(CYCLE);
    const seen = [1, 2, 3, 4].map(() => outcome(compiled.evaluate(5)));
    expect(seen[0]).toEqual({ valid: false, passed: 0, total: 1, failures: ['$ref:endless recursion'] });
    for (const s of seen) expect(s).toEqual(seen[0]);
  });

  it('is the same when the evaluation starts with much of the stack already used', () => {
    const compiled = createSchemaEngine().compile(CYCLE);
    const shallow = outcome(compiled.evaluate(5));
    // The same evaluation from deep inside other calls: V8's stack overflows sooner.
    const deep = (n: number): ReturnType<typeof outcome> => (n === 0 ? outcome(compiled.evaluate(5)) : deep(n - 1));
    for (const depth of [1000, 3000, 6000]) expect(deep(depth)).toEqual(shallow);
    expect(outcome(createSchemaEngine().compile(CYCLE).evaluate(5))).toEqual(shallow);
  });
});
