import { describe, it, expect } from 'vitest';
import { parsePath, selectPath, sharedExpansions, PathSyntaxError, displayPath } from './paths.js';
import type { Json } from './types.js';

const at = (path: string, doc: Json) => selectPath(parsePath(path), doc).map((s) => [s.location, s.value]);

describe('parsePath', () => {
  it('parses keys, [] expansions, [n] and quoted bracket keys', () => {
    expect(parsePath('total').segments).toEqual([{ kind: 'key', key: 'total', inherited: false }]);
    expect(parsePath('a.__proto__.toString').segments.map((s) => s.kind === 'key' && s.inherited)).toEqual([false, true, true]);
    expect(parsePath('a.b[].c[].d').segments.map((s) => s.kind)).toEqual(['key', 'key', 'each', 'key', 'each', 'key']);
    expect(parsePath("['a.b'].c").segments).toMatchObject([{ kind: 'key', key: 'a.b' }, { kind: 'key', key: 'c' }]);
    expect(parsePath("x['it\\'s'][]").segments).toMatchObject([{ kind: 'key', key: 'x' }, { kind: 'key', key: "it's" }, { kind: 'each' }]);
    expect(parsePath('a[2].b').segments[1]).toEqual({ kind: 'index', index: 2 });
    expect(parsePath('[].id').segments[0]).toEqual({ kind: 'each' });
    expect(parsePath('a.["b[c"]').segments[1]).toMatchObject({ kind: 'key', key: 'b[c' });
  });

  it('rejects invalid syntax with a reason that does not repeat the path', () => {
    for (const p of ['', '.a', 'a.', 'a..b', 'a[', 'a[x]', "a['b", "a['b'", 'a]', 'a b', 'a[]b', 'a.[]', 'a[-1]']) {
      let err: unknown;
      try {
        parsePath(p);
      } catch (e) {
        err = e;
      }
      expect(err, p).toBeInstanceOf(PathSyntaxError);
    }
  });
});

describe('selectPath', () => {
  const doc: Json = {
    total: 3,
    line_items: [{ line_total: 1 }, { line_total: 2 }, { other: 1 }],
    a: { b: [{ c: [{ d: 1 }, { d: 2 }] }, { c: [] }, { c: [{ d: 3 }] }] },
    'a.b': 'dotted',
    s: 'str',
  };
  it('yields every value with its concrete location', () => {
    expect(at('total', doc)).toEqual([['$.total', 3]]);
    expect(at('line_items[].line_total', doc)).toEqual([
      ['$.line_items[0].line_total', 1],
      ['$.line_items[1].line_total', 2],
    ]);
    expect(at('a.b[].c[].d', doc).map((x) => x[0])).toEqual(['$.a.b[0].c[0].d', '$.a.b[0].c[1].d', '$.a.b[2].c[0].d']);
    expect(at("['a.b']", doc)).toEqual([["$['a.b']", 'dotted']]);
    expect(at('line_items[1]', doc)).toEqual([['$.line_items[1]', { line_total: 2 }]]);
  });
  it('yields nothing for missing branches and type mismatches', () => {
    expect(at('missing', doc)).toEqual([]);
    expect(at('s[]', doc)).toEqual([]);
    expect(at('total.x', doc)).toEqual([]);
    expect(at('line_items[9]', doc)).toEqual([]);
    expect(at('toString', doc)).toEqual([]);
  });
  it('treats any key text as data (quotes, backslashes, line separators, code)', () => {
    const keys = ['"]; throw new Error("x"); //', "a\\b", 'a\u2028b', '${x}', '__proto__', 'constructor', '`'];
    for (const key of keys) {
      const esc = key.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
      const doc = JSON.parse(`{${JSON.stringify(key)}:[{"v":1},{"v":2}]}`) as Json;
      expect(at(`['${esc}'][].v`, doc).map((x) => x[1]), key).toEqual([1, 2]);
    }
    expect(at('constructor', {})).toEqual([]);
    expect(at('__proto__', {})).toEqual([]);
    expect(at('length', [1, 2] as Json)).toEqual([]);
  });

  it('records expansion indices for element-wise pairing', () => {
    const sel = selectPath(parsePath('a.b[].c[].d'), doc);
    expect(sel.map((s) => s.expansion)).toEqual([[0, 0], [0, 1], [2, 0]]);
  });
  it('counts shared [] expansions', () => {
    expect(sharedExpansions(parsePath('items[].price'), parsePath('items[].cost'))).toBe(1);
    expect(sharedExpansions(parsePath('a[].b[].x'), parsePath('a[].b[].y'))).toBe(2);
    expect(sharedExpansions(parsePath('a[].b[].x'), parsePath('a[].z'))).toBe(1);
    expect(sharedExpansions(parsePath('items[].price'), parsePath('max_price'))).toBe(0);
    expect(sharedExpansions(parsePath('a[].x'), parsePath('b[].x'))).toBe(0);
  });
  it('displays paths with $.', () => {
    expect(displayPath(parsePath('line_items[].line_total'))).toBe('$.line_items[].line_total');
    expect(displayPath(parsePath("['a.b']"))).toBe("$['a.b']");
  });
});
