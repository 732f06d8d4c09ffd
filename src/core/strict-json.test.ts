import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { parseStrictJson, StrictJsonError, formatSegments } from './strict-json.js';

function kindOf(text: string, maxDepth?: number): string {
  try {
    parseStrictJson(text, { maxDepth });
    return 'ok';
  } catch (e) {
    expect(e).toBeInstanceOf(StrictJsonError);
    return (e as StrictJsonError).kind;
  }
}

function errorAt(text: string): string {
  try {
    parseStrictJson(text);
  } catch (e) {
    return formatSegments((e as StrictJsonError).segments);
  }
  return 'no error';
}

describe('parseStrictJson', () => {
  it('returns what JSON.parse returns for ordinary documents', () => {
    const docs = [
      '{"a":[1,2.5,-3e2,true,false,null,"x\\n\\u00e9\\ud83d\\ude00"],"b":{}}',
      '[]',
      ' "s" ',
      '0',
      '-0.0e-0',
      '{"k":"caf\u00e9 \u2713 \ud83d\ude00"}',
      '{"esc":"\\"\\\\\\/\\b\\f\\n\\r\\t"}',
    ];
    for (const d of docs) expect(parseStrictJson(d).value).toEqual(JSON.parse(d));
  });

  it('agrees with JSON.parse on arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        expect(parseStrictJson(text).value).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('reads numbers exactly as JSON.parse does', () => {
    for (const t of ['-0', '0', '7', '-12', '999999999999999', '-999999999999999', '1234567890123456', '0.1', '-1.5e-7', '1E+2', '123456789012345678901234567890']) {
      expect(Object.is(parseStrictJson(t).value, JSON.parse(t)), t).toBe(true);
    }
  });

  it('accepts UTF-8 bytes and rejects invalid UTF-8', () => {
    expect(parseStrictJson(Buffer.from('{"n":"café"}')).value).toEqual({ n: 'café' });
    expect(kindOf('')).toBe('invalid_json');
    expect(() => parseStrictJson(Buffer.from([0x22, 0xff, 0x22]))).toThrow(StrictJsonError);
  });

  it('rejects invalid JSON', () => {
    for (const t of ['', '{', '{"a":1,}', '[1,]', '{a:1}', "{'a':1}", '01', '1.', '.5', '+1', 'NaN', 'Infinity', '[1] x', '"\u0001"', '"\\x"', '"\\u12g4"', 'tru', '{"a" 1}', '"abc']) {
      expect(kindOf(t), t).toBe('invalid_json');
    }
  });

  it('rejects lone surrogates, escaped or raw, in strings and keys, with their location', () => {
    expect(kindOf('{"a":"\\ud800"}')).toBe('lone_surrogate');
    expect(kindOf('{"a":"\\udc00x"}')).toBe('lone_surrogate');
    expect(kindOf('{"a":"x\\ud83d"}')).toBe('lone_surrogate');
    expect(kindOf('{"\\ud800":1}')).toBe('lone_surrogate');
    expect(kindOf('{"a":"\ud800"}')).toBe('lone_surrogate');
    expect(kindOf('["\udfff"]')).toBe('lone_surrogate');
    expect(kindOf('"\\ud83d\\ude00"')).toBe('ok');
    expect(errorAt('{"a":{"b":["ok","\\ud800"]}}')).toBe('$.a.b[1]');
    expect(errorAt('{"a":{"\\udc00":1}}')).toBe('$.a');
  });

  it('rejects numbers that overflow to infinity', () => {
    expect(kindOf('1e400')).toBe('non_finite');
    expect(kindOf('{"a":[-1e309]}')).toBe('non_finite');
    expect(kindOf('1e308')).toBe('ok');
    expect(parseStrictJson('1e-400').value).toBe(0); // underflow is a finite number
  });

  it('limits nesting depth (default 64)', () => {
    const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(kindOf(nest(64))).toBe('ok');
    expect(kindOf(nest(65))).toBe('too_deep');
    expect(kindOf('{"a":'.repeat(65) + '1' + '}'.repeat(65))).toBe('too_deep');
    expect(kindOf(nest(4), 3)).toBe('too_deep');
    expect(kindOf(nest(3), 3)).toBe('ok');
    expect(kindOf(nest(100_000))).toBe('too_deep');
  });

  it('reports duplicate keys with the object location; last value wins in first position', () => {
    const r = parseStrictJson('{"a":1,"b":{"x":1,"x":2},"a":3,"l":[{"k":0,"k":0}]}');
    expect(r.value).toEqual({ a: 3, b: { x: 2 }, l: [{ k: 0 }] });
    expect(Object.keys(r.value as object)).toEqual(['a', 'b', 'l']);
    expect(r.duplicateKeys.map((d) => [formatSegments(d.segments), d.key])).toEqual([
      ['$.b', 'x'],
      ['$', 'a'],
      ['$.l[0]', 'k'],
    ]);
    expect(parseStrictJson('{"toString":1,"hasOwnProperty":2}').duplicateKeys).toEqual([]);
  });

  it('reports integer literals outside ±(2^53−1) with their location', () => {
    const r = parseStrictJson('{"ok":9007199254740991,"neg":-9007199254740991,"big":9007199254740992,"a":[1,-9007199254740993],"f":1e21,"d":9007199254740993.5}');
    expect(r.unsafeIntegers.map((s) => formatSegments(s))).toEqual(['$.big', '$.a[1]']);
  });

  it('keeps __proto__, constructor and prototype as ordinary own keys', () => {
    const r = parseStrictJson('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"a":{"__proto__":[]}}');
    const v = r.value as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__', 'constructor', 'a']);
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((v as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Array.isArray(Object.getOwnPropertyDescriptor(v.a as object, '__proto__')?.value)).toBe(true);
    expect(v).toEqual(JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"a":{"__proto__":[]}}'));
    const dup = parseStrictJson('{"__proto__":1,"__proto__":2}');
    expect(dup.duplicateKeys).toHaveLength(1);
  });

  it('formats concrete locations', () => {
    expect(formatSegments([])).toBe('$');
    expect(formatSegments(['a', 1, 'b c', "it's"])).toBe("$.a[1]['b c']['it\\'s']");
  });
});
