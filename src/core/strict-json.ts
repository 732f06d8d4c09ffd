/**
 * @module Strict I-JSON parser (RFC 7493) used for request bodies, because
 * hashes and signatures cover the parsed value and every JSON consumer must
 * read that value the same way (docs/protocol.md#strict-json).
 *
 * Hard errors (thrown as StrictJsonError): invalid JSON, lone surrogates in
 * strings or keys (raw or escaped), numbers that overflow to ±Infinity,
 * nesting deeper than `maxDepth`.
 * Reported, not thrown (the caller decides whether they are a request error or
 * a failed integrity check of the output): duplicate keys (last one wins, like
 * JSON.parse) and integer literals outside ±(2^53−1).
 *
 * An "integer" here is a number token written without fraction or exponent
 * (`9007199254740993`): that is the form whose meaning differs between a
 * double-based and a bigint-based reader. Numbers written otherwise whose value
 * is a whole number beyond ±(2^53−1) (`1e16`, `1e300`) are reported apart
 * (`largeNumbers`): inside the output they fail the same integrity check,
 * because the receipt hashes the value, not the notation.
 *
 * `__proto__` is stored as an ordinary own property (never touches the
 * prototype); otherwise results are what JSON.parse returns.
 */
import type { Json } from './types.js';

/** A location inside the parsed document: object keys and array indices from the root. */
export type JsonPathSegments = ReadonlyArray<string | number>;

/** Options of parseStrictJson. */
export interface StrictJsonOptions {
  /** Maximum nesting of arrays/objects (the root container is depth 1). Default 64. */
  maxDepth?: number;
}

/** A key that appears more than once in one object (the last one wins, as with JSON.parse). */
export interface DuplicateKeyFinding {
  /** Location of the object that holds the key twice. */
  segments: JsonPathSegments;
  key: string;
}

/** The parsed value and what strict parsing found in it. */
export interface StrictJsonResult {
  value: Json;
  duplicateKeys: DuplicateKeyFinding[];
  /** Locations of integer literals outside ±(2^53−1). */
  unsafeIntegers: JsonPathSegments[];
  /** Locations of numbers written with a fraction or exponent whose value is beyond ±(2^53−1). */
  largeNumbers: JsonPathSegments[];
}

/** Why a text is refused: not JSON, a lone surrogate, a number that overflows to ±Infinity, or nesting over `maxDepth`. */
export type StrictJsonErrorKind = 'invalid_json' | 'lone_surrogate' | 'non_finite' | 'too_deep';

/**
 * A text that cannot be accepted at all. Carries the location (path and UTF-16 offset)
 * but never the offending text.
 *
 * @example
 * ```ts
 * import { parseStrictJson, StrictJsonError } from 'agent-output-verifier/json';
 *
 * try {
 *   parseStrictJson('{"a": "\ud800"}');
 * } catch (e) {
 *   if (e instanceof StrictJsonError) console.log(e.kind, e.offset); // 'lone_surrogate' …
 * }
 * ```
 */
export class StrictJsonError extends Error {
  readonly kind: StrictJsonErrorKind;
  /** Location of the value (or of the object holding the key) where the problem is. */
  readonly segments: JsonPathSegments;
  /** UTF-16 offset in the text. */
  readonly offset: number;
  constructor(kind: StrictJsonErrorKind, message: string, segments: JsonPathSegments, offset: number) {
    super(message);
    this.name = 'StrictJsonError';
    this.kind = kind;
    this.segments = segments;
    this.offset = offset;
  }
}

export const DEFAULT_MAX_DEPTH = 64;

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A location in the notation verdicts and errors use: `$`, `$.a[1].b`, `$['a.b']`.
 *
 * @example
 * ```ts
 * import { formatSegments } from 'agent-output-verifier/json';
 *
 * formatSegments(['line_items', 1, 'qty']); // '$.line_items[1].qty'
 * formatSegments(['a.b']); // "$['a.b']"
 * ```
 */
export function formatSegments(segments: JsonPathSegments, root = '$'): string {
  let out = root;
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (IDENT.test(s)) out += `.${s}`;
    else out += `['${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

const hasOwn = Object.prototype.hasOwnProperty;

/** 10^0 … 10^15, all exact doubles. */
const POW10: readonly number[] = Array.from({ length: 16 }, (_, i) => 10 ** i);

/**
 * Parses `input` (JSON text, or its UTF-8 bytes) strictly. Throws StrictJsonError; never
 * returns a partial value. Duplicate keys and out-of-range numbers are reported, not thrown.
 *
 * @example
 * ```ts
 * import { parseStrictJson } from 'agent-output-verifier/json';
 *
 * const { value, duplicateKeys } = parseStrictJson('{"total": 1, "total": 2}');
 * value; // { total: 2 }
 * duplicateKeys; // [{ segments: [], key: 'total' }]
 * ```
 */
export function parseStrictJson(input: string | Uint8Array, options: StrictJsonOptions = {}): StrictJsonResult {
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else {
    try {
      text = utf8.decode(input);
    } catch {
      throw new StrictJsonError('invalid_json', 'the body is not valid UTF-8', [], 0);
    }
  }
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const len = text.length;
  let pos = 0;
  const path: Array<string | number> = [];
  const duplicateKeys: DuplicateKeyFinding[] = [];
  const unsafeIntegers: JsonPathSegments[] = [];
  const largeNumbers: JsonPathSegments[] = [];

  // While a key is read, errors belong to the object holding it (path minus the key slot).
  let keyDepth = -1;
  const fail = (kind: StrictJsonErrorKind, message: string, at = pos): never => {
    throw new StrictJsonError(kind, message, keyDepth >= 0 ? path.slice(0, keyDepth) : path.slice(), at);
  };
  const unexpected = (): never =>
    pos >= len
      ? fail('invalid_json', `unexpected end of input at offset ${pos}`)
      : fail('invalid_json', `unexpected character at offset ${pos}`);

  // Callers test the next character first and call this only when it is at
  // most 0x20: compact JSON has no whitespace, and the call is then skipped.
  const skipWs = (): void => {
    while (pos < len) {
      const c = text.charCodeAt(pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) pos++;
      else break;
    }
  };

  const parseString = (): string => {
    // pos is at the opening quote
    const start = ++pos;
    let surrogate = false;
    // Fast path: no escapes, just find the closing quote.
    for (;;) {
      if (pos >= len) return unexpected();
      const c = text.charCodeAt(pos);
      if (c === 0x22) {
        const s = text.slice(start, pos++);
        if (surrogate && !isWellFormed(s)) fail('lone_surrogate', 'a string contains a lone surrogate', start - 1);
        return s;
      }
      if (c === 0x5c) break;
      if (c < 0x20) return fail('invalid_json', `unescaped control character at offset ${pos}`);
      if (c >= 0xd800 && c <= 0xdfff) surrogate = true;
      pos++;
    }
    let out = text.slice(start, pos);
    let chunk = pos;
    for (;;) {
      if (pos >= len) return unexpected();
      const c = text.charCodeAt(pos);
      if (c === 0x22) {
        out += text.slice(chunk, pos++);
        break;
      }
      if (c === 0x5c) {
        out += text.slice(chunk, pos);
        const e = text.charCodeAt(pos + 1);
        pos += 2;
        switch (e) {
          case 0x22: out += '"'; break;
          case 0x5c: out += '\\'; break;
          case 0x2f: out += '/'; break;
          case 0x62: out += '\b'; break;
          case 0x66: out += '\f'; break;
          case 0x6e: out += '\n'; break;
          case 0x72: out += '\r'; break;
          case 0x74: out += '\t'; break;
          case 0x75: {
            let code = 0;
            for (let k = 0; k < 4; k++) {
              const h = text.charCodeAt(pos + k);
              let d: number;
              if (h >= 0x30 && h <= 0x39) d = h - 0x30;
              else if (h >= 0x41 && h <= 0x46) d = h - 0x37;
              else if (h >= 0x61 && h <= 0x66) d = h - 0x57;
              else {
                pos += k;
                return fail('invalid_json', `invalid \\u escape at offset ${pos}`);
              }
              code = code * 16 + d;
            }
            pos += 4;
            if (code >= 0xd800 && code <= 0xdfff) surrogate = true;
            out += String.fromCharCode(code);
            break;
          }
          default:
            pos -= 1;
            return fail('invalid_json', `invalid escape at offset ${pos}`);
        }
        chunk = pos;
        continue;
      }
      if (c < 0x20) return fail('invalid_json', `unescaped control character at offset ${pos}`);
      if (c >= 0xd800 && c <= 0xdfff) surrogate = true;
      pos++;
    }
    if (surrogate && !isWellFormed(out)) fail('lone_surrogate', 'a string contains a lone surrogate', start - 1);
    return out;
  };

  const parseNumber = (): number => {
    const start = pos;
    let integer = true;
    const negative = text.charCodeAt(pos) === 0x2d;
    if (negative) pos++;
    let c = text.charCodeAt(pos);
    // Short integers are built from their digits directly (exact below 2^53),
    // sparing a substring and a conversion for the most common numbers.
    let acc = 0;
    if (c === 0x30) {
      pos++;
    } else if (c >= 0x31 && c <= 0x39) {
      do {
        acc = acc * 10 + (c - 0x30);
        pos++;
      } while ((c = text.charCodeAt(pos)) >= 0x30 && c <= 0x39);
    } else {
      return unexpected();
    }
    const intDigits = pos - start - (negative ? 1 : 0);
    let fracDigits = 0;
    c = text.charCodeAt(pos);
    if (c === 0x2e) {
      integer = false;
      pos++;
      c = text.charCodeAt(pos);
      if (!(c >= 0x30 && c <= 0x39)) return unexpected();
      do {
        acc = acc * 10 + (c - 0x30);
        fracDigits++;
        pos++;
      } while ((c = text.charCodeAt(pos)) >= 0x30 && c <= 0x39);
    }
    let exponent = false;
    if (c === 0x65 || c === 0x45) {
      exponent = true;
      integer = false;
      pos++;
      c = text.charCodeAt(pos);
      if (c === 0x2b || c === 0x2d) {
        pos++;
        c = text.charCodeAt(pos);
      }
      if (!(c >= 0x30 && c <= 0x39)) return unexpected();
      do pos++;
      while ((c = text.charCodeAt(pos)) >= 0x30 && c <= 0x39);
    }
    // Up to 15 digits the digits form an exact integer (< 2^53) and 10^fracDigits
    // is an exact double, so one division is correctly rounded: the same double
    // Number() returns for the text, without a substring and a conversion.
    if (!exponent && intDigits + fracDigits <= 15) {
      const v = fracDigits === 0 ? acc : acc / POW10[fracDigits];
      return negative ? -v : v;
    }
    const n = Number(text.slice(start, pos));
    if (!Number.isFinite(n)) return fail('non_finite', 'a number is too large to represent (not finite)', start);
    if (n > Number.MAX_SAFE_INTEGER || n < -Number.MAX_SAFE_INTEGER) (integer ? unsafeIntegers : largeNumbers).push(path.slice());
    return n;
  };

  const parseValue = (depth: number): Json => {
    if (text.charCodeAt(pos) <= 0x20) skipWs();
    const c = text.charCodeAt(pos);
    if (c === 0x7b) return parseObject(depth + 1);
    if (c === 0x5b) return parseArray(depth + 1);
    if (c === 0x22) return parseString();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return parseNumber();
    if (c === 0x74 && text.startsWith('true', pos)) {
      pos += 4;
      return true;
    }
    if (c === 0x66 && text.startsWith('false', pos)) {
      pos += 5;
      return false;
    }
    if (c === 0x6e && text.startsWith('null', pos)) {
      pos += 4;
      return null;
    }
    return unexpected();
  };

  /** After an element or a member: past a `,` (true: another follows) or past `close` (false: the container ends). */
  const another = (close: number): boolean => {
    if (text.charCodeAt(pos) <= 0x20) skipWs();
    const c = text.charCodeAt(pos);
    if (c !== 0x2c && c !== close) unexpected();
    pos++;
    return c === 0x2c;
  };

  const parseArray = (depth: number): Json[] => {
    if (depth > maxDepth) fail('too_deep', `nesting is deeper than ${maxDepth} levels`);
    pos++;
    const arr: Json[] = [];
    if (text.charCodeAt(pos) <= 0x20) skipWs();
    if (text.charCodeAt(pos) === 0x5d) {
      pos++;
      return arr;
    }
    const at = path.length;
    path.push(0);
    for (let i = 0; ; i++) {
      path[at] = i;
      arr.push(parseValue(depth));
      if (!another(0x5d)) break;
    }
    path.pop();
    return arr;
  };

  const parseObject = (depth: number): { [key: string]: Json } => {
    if (depth > maxDepth) fail('too_deep', `nesting is deeper than ${maxDepth} levels`);
    pos++;
    const obj: { [key: string]: Json } = {};
    if (text.charCodeAt(pos) <= 0x20) skipWs();
    if (text.charCodeAt(pos) === 0x7d) {
      pos++;
      return obj;
    }
    const at = path.length;
    path.push('');
    for (;;) {
      if (text.charCodeAt(pos) <= 0x20) skipWs();
      if (text.charCodeAt(pos) !== 0x22) return unexpected();
      keyDepth = at;
      const key = parseString();
      keyDepth = -1;
      path[at] = key;
      if (text.charCodeAt(pos) <= 0x20) skipWs();
      if (text.charCodeAt(pos) !== 0x3a) return unexpected();
      pos++;
      const value = parseValue(depth);
      // One own-property test: a property read would also search the
      // prototype chain for every new key (parsed values are never undefined).
      if (hasOwn.call(obj, key)) {
        duplicateKeys.push({ segments: path.slice(0, at), key });
      }
      if (key === '__proto__') {
        Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
      } else {
        obj[key] = value;
      }
      if (!another(0x7d)) break;
    }
    path.pop();
    return obj;
  };

  const value = parseValue(0);
  if (text.charCodeAt(pos) <= 0x20) skipWs();
  if (pos < len) unexpected();
  return { value, duplicateKeys, unsafeIntegers, largeNumbers };
}
