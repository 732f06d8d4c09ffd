import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { applyPatch, JsonPatchError, parseJsonPointer, toJsonPointer, type JsonPatchOperation } from './json-patch.js';

const apply = (doc: unknown, patch: JsonPatchOperation[]) => applyPatch(doc, patch);

describe('applyPatch (RFC 6902 appendix A)', () => {
  it('adds an object member, an array element, appends with "-"', () => {
    expect(apply({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }])).toEqual({ foo: 'bar', baz: 'qux' });
    expect(apply({ foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }])).toEqual({ foo: ['bar', 'qux', 'baz'] });
    expect(apply({ foo: [1] }, [{ op: 'add', path: '/foo/-', value: 2 }])).toEqual({ foo: [1, 2] });
    expect(apply({ foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }])).toEqual({ foo: 'bar', child: { grandchild: {} } });
  });

  it('removes and replaces', () => {
    expect(apply({ baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }])).toEqual({ foo: 'bar' });
    expect(apply({ foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }])).toEqual({ foo: ['bar', 'baz'] });
    expect(apply({ baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }])).toEqual({ baz: 'boo', foo: 'bar' });
    expect(apply({ a: 1 }, [{ op: 'replace', path: '', value: [1] }])).toEqual([1]);
  });

  it('moves and copies', () => {
    expect(apply({ foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } }, [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }])).toEqual({
      foo: { bar: 'baz' },
      qux: { corge: 'grault', thud: 'fred' },
    });
    expect(apply({ foo: ['all', 'grass', 'cows', 'eat'] }, [{ op: 'move', from: '/foo/1', path: '/foo/3' }])).toEqual({ foo: ['all', 'cows', 'eat', 'grass'] });
    expect(apply({ a: { b: 1 } }, [{ op: 'copy', from: '/a', path: '/c' }])).toEqual({ a: { b: 1 }, c: { b: 1 } });
  });

  it('tests values with JSON equality (key order and 1 vs 1.0 do not matter)', () => {
    expect(apply({ baz: 'qux', foo: ['a', 2, 'c'] }, [
      { op: 'test', path: '/baz', value: 'qux' },
      { op: 'test', path: '/foo/1', value: 2 },
    ])).toEqual({ baz: 'qux', foo: ['a', 2, 'c'] });
    expect(apply({ o: { a: 1, b: 2 } }, [{ op: 'test', path: '/o', value: { b: 2, a: 1 } }])).toEqual({ o: { a: 1, b: 2 } });
    expect(() => apply({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }])).toThrow(/test failed/);
    expect(() => apply({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }])).toThrow(JsonPatchError);
  });

  it('unescapes ~0 and ~1 in pointers', () => {
    expect(apply({ 'a/b': 1, 'm~n': 2 }, [{ op: 'replace', path: '/a~1b', value: 3 }, { op: 'remove', path: '/m~0n' }])).toEqual({ 'a/b': 3 });
    expect(toJsonPointer(['a/b', 'm~n', 0])).toBe('/a~1b/m~0n/0');
    expect(parseJsonPointer('/a~1b/m~0n/0')).toEqual(['a/b', 'm~n', '0']);
  });
});

describe('applyPatch errors', () => {
  const cases: Array<[unknown, JsonPatchOperation[], RegExp]> = [
    [{ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }], /"\/baz" does not exist/],
    [{ a: 1 }, [{ op: 'remove', path: '/b' }], /does not exist/],
    [{ a: 1 }, [{ op: 'replace', path: '/b', value: 1 }], /does not exist/],
    [{ a: [1] }, [{ op: 'add', path: '/a/2', value: 1 }], /out of range/],
    [{ a: [1] }, [{ op: 'replace', path: '/a/01', value: 1 }], /not an array index/],
    [{ a: [1] }, [{ op: 'remove', path: '/a/-' }], /not an array index/],
    [{ a: 1 }, [{ op: 'add', path: 'a', value: 1 }], /must be empty or start with/],
    [{ a: 1 }, [{ op: 'add', path: '/a~2', value: 1 }], /~/],
    [{ a: 1 }, [{ op: 'add', path: '/a/b', value: 1 }], /not an object or array/],
    [{ a: 1 }, [{ op: 'remove', path: '' }], /whole document/],
    [{ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/b/c' }], /into itself/],
    [{ a: 1 }, [{ op: 'frob', path: '/a' } as unknown as JsonPatchOperation], /unknown op/],
    [{ a: 1 }, [{ op: 'add', path: '/b', value: undefined }], /not JSON/],
    [{ a: 1 }, [{ op: 'add', path: '/b', value: Number.NaN }], /finite/],
  ];
  it.each(cases.map((c, i) => [i, ...c] as const))('case %i throws a JsonPatchError with a reason', (_i, doc, patch, reason) => {
    let err: unknown;
    try {
      apply(doc, patch);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JsonPatchError);
    expect((err as Error).message).toMatch(reason);
  });

  it('names the failing operation and leaves the input untouched', () => {
    const doc = { a: 1, list: [1, 2] };
    let err: JsonPatchError | undefined;
    try {
      apply(doc, [{ op: 'replace', path: '/a', value: 2 }, { op: 'remove', path: '/list/5' }]);
    } catch (e) {
      err = e as JsonPatchError;
    }
    expect(err?.index).toBe(1);
    expect(err?.message).toMatch(/^patch operation 1: remove "\/list\/5"/);
    expect(doc).toEqual({ a: 1, list: [1, 2] });
  });
});

describe('applyPatch purity', () => {
  it('never mutates the document and shares nothing with it', () => {
    const doc = { a: { b: [1, 2] } };
    const out = apply(doc, [{ op: 'add', path: '/a/b/-', value: 3 }]) as { a: { b: number[] } };
    expect(doc).toEqual({ a: { b: [1, 2] } });
    out.a.b.push(4);
    expect(doc.a.b).toEqual([1, 2]);
  });

  it('treats __proto__ as an ordinary key', () => {
    const doc = JSON.parse('{"__proto__":{"x":1}}') as unknown;
    const out = apply(doc, [{ op: 'replace', path: '/__proto__/x', value: 2 }, { op: 'add', path: '/constructor', value: 1 }]) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"x":2},"constructor":1}');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(() => apply({}, [{ op: 'remove', path: '/__proto__' }])).toThrow(/does not exist/);
    expect(() => apply({}, [{ op: 'test', path: '/toString', value: 1 }])).toThrow(/does not exist/);
  });

  it('replace then test round-trips any value at any existing key (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.jsonValue(), (obj, value) => {
        const key = Object.keys(obj)[0];
        const path = toJsonPointer([key]);
        const before = JSON.stringify(obj);
        const out = applyPatch(obj, [{ op: 'replace', path, value }, { op: 'test', path, value }]) as Record<string, unknown>;
        expect(JSON.stringify(obj)).toBe(before);
        expect(Object.keys(out)).toEqual(Object.keys(obj));
        expect(parseJsonPointer(path)).toEqual([key]);
      }),
      { numRuns: 300 },
    );
  });
});
