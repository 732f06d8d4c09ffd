/**
 * @module RFC 8785 (JCS) canonicalization, the byte form every hash and
 * signature of a receipt covers (docs/protocol.md#hashes).
 *
 * `canonicalize` here is a single-pass serializer that validates as it goes:
 * JCS is defined over I-JSON, so values without an I-JSON form (lone
 * surrogates, NaN, ±Infinity, undefined, functions, bigint, non-plain
 * objects, holes) throw JcsError instead of being silently dropped or coerced
 * — a receipt must never cover a value a third-party verifier would
 * canonicalize differently. It is held byte-identical to the `canonicalize`
 * package (the reference implementation, a development dependency only: see
 * jcs.test.ts) by differential tests, the RFC 8785 conformance files and the ES6
 * number sequence; it exists because receipts are issued on every request and the
 * reference, which also has to handle toJSON and cycles, is about twice as slow.
 */

/** A value that has no RFC 8785 canonical form. */
export class JcsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JcsError';
  }
}

// ES2024 String.prototype.isWellFormed (Node 20+); the project's lib setting predates it.
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Strings that JSON writes verbatim: printable ASCII except `"` and `\`. Being ASCII they are also well-formed. */
const VERBATIM = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Deep enough for any request the service accepts (limit 64), shallow enough to stay off the stack limit. */
const MAX_DEPTH = 1000;

/** Raised inside the walk; `segments` is filled in on the way out so the hot path builds no paths. */
class Located extends Error {
  readonly segments: string[] = [];
  constructor(readonly problem: string) {
    super(problem);
  }
}

function serializeString(s: string): string {
  if (VERBATIM.test(s)) return `"${s}"`;
  if (!isWellFormed(s)) throw new Located('holds a lone surrogate');
  // JSON.stringify escapes exactly what RFC 8785 §3.2.2.2 requires, and well-formed input keeps it lossless.
  return JSON.stringify(s);
}

/**
 * `"key":` for a member name. Responses and requests reuse a small vocabulary
 * of keys, so their serialized forms are memoized; the memo is bounded (size
 * and key length) because keys of a submitted output are the caller's choice.
 */
const memberNames = new Map<string, string>();
const MEMO_ENTRIES = 2048;
const MEMO_KEY_LENGTH = 64;

function memberName(key: string): string {
  const known = memberNames.get(key);
  if (known !== undefined) return known;
  let name: string;
  if (VERBATIM.test(key)) name = `"${key}":`;
  else if (isWellFormed(key)) name = `${JSON.stringify(key)}:`;
  else throw new Located('has a key with a lone surrogate');
  if (memberNames.size < MEMO_ENTRIES && key.length <= MEMO_KEY_LENGTH) memberNames.set(key, name);
  return name;
}

/**
 * Sorts keys by UTF-16 code units (the order RFC 8785 §3.2.3 requires; `<` on
 * strings compares code units). Objects here are small, where a plain
 * insertion sort beats Array.prototype.sort's generic comparator.
 */
export function sortKeys(keys: string[]): string[] {
  if (keys.length > 40) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i];
    let j = i - 1;
    while (j >= 0 && keys[j] > k) {
      keys[j + 1] = keys[j];
      j--;
    }
    keys[j + 1] = k;
  }
  return keys;
}

function serialize(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return serializeString(value);
    case 'number':
      if (!Number.isFinite(value)) throw new Located('is not a finite number');
      // ECMAScript Number::toString, which RFC 8785 §3.2.2.3 adopts (and -0 → "0").
      return `${value}`;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (depth >= MAX_DEPTH) throw new Located('is nested too deeply (or is cyclic)');
      return Array.isArray(value) ? serializeArray(value, depth) : serializeObject(value as Record<string, unknown>, depth);
    default:
      throw new Located(`has type ${typeof value}, which JSON cannot represent`);
  }
}

function serializeArray(value: unknown[], depth: number): string {
  const n = value.length;
  if (n === 0) return '[]';
  let i = 0;
  try {
    let out = '[';
    for (; i < n; i++) {
      if (!(i in value)) throw new Located('is a hole in an array');
      if (i > 0) out += ',';
      out += serialize(value[i], depth + 1);
    }
    return `${out}]`;
  } catch (e) {
    // Locations are only built on the way out of a failure, never on the hot path.
    if (e instanceof Located) e.segments.push(`[${i}]`);
    throw e;
  }
}

function serializeObject(value: Record<string, unknown>, depth: number): string {
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new Located('is not a plain JSON object');
  const keys = sortKeys(Object.keys(value));
  let key = '';
  try {
    let out = '{';
    for (let i = 0; i < keys.length; i++) {
      key = keys[i];
      if (i > 0) out += ',';
      out += memberName(key);
      out += serialize(value[key], depth + 1);
    }
    return `${out}}`;
  } catch (e) {
    if (e instanceof Located) e.segments.push(`.${key}`);
    throw e;
  }
}

/**
 * The RFC 8785 canonical form of a JSON value, as a string (hash its UTF-8
 * bytes). Throws JcsError for any value without an I-JSON form.
 */
export function canonicalize(value: unknown): string {
  try {
    return serialize(value, 0);
  } catch (e) {
    if (!(e instanceof Located)) throw e;
    const at = e.segments.reverse().join('');
    throw new JcsError(`JCS: ${at === '' ? 'the value' : `the value at ${at}`} ${e.problem}`);
  }
}

/**
 * The JSON.stringify text of the value the last serializeDual call serialized (a second
 * return value without allocating a pair per node).
 */
let dualJson = '';

/**
 * The canonical form of `value`, and in `dualJson` its JSON.stringify text: the same walk
 * serves both. Where the canonical form exists, the two differ only in the order of object
 * members (JSON.stringify follows Object.keys, the same members; leaves are written alike).
 */
function serializeDual(value: unknown, depth: number): string {
  if (typeof value !== 'object' || value === null) {
    const text = serialize(value, depth);
    dualJson = text;
    return text;
  }
  if (depth >= MAX_DEPTH) throw new Located('is nested too deeply (or is cyclic)');
  return Array.isArray(value) ? dualArray(value, depth) : dualObject(value as Record<string, unknown>, depth);
}

function dualArray(value: unknown[], depth: number): string {
  const n = value.length;
  if (n === 0) {
    dualJson = '[]';
    return '[]';
  }
  let i = 0;
  try {
    let out = '[';
    let json = '[';
    for (; i < n; i++) {
      if (!(i in value)) throw new Located('is a hole in an array');
      if (i > 0) {
        out += ',';
        json += ',';
      }
      out += serializeDual(value[i], depth + 1);
      json += dualJson;
    }
    dualJson = `${json}]`;
    return `${out}]`;
  } catch (e) {
    if (e instanceof Located) e.segments.push(`[${i}]`);
    throw e;
  }
}

/** Indices of `keys` in UTF-16 code-unit order of the keys (as sortKeys orders them). */
function sortedOrder(keys: string[]): number[] {
  const n = keys.length;
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (n > 40) return order.sort((a, b) => (keys[a] < keys[b] ? -1 : 1));
  for (let i = 1; i < n; i++) {
    const k = order[i];
    let j = i - 1;
    while (j >= 0 && keys[order[j]] > keys[k]) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = k;
  }
  return order;
}

/** Members serialized once in Object.keys order (the JSON text), then joined again in key order (the canonical one). */
function dualMembers(value: Record<string, unknown>, depth: number, presetKey: string | null, presetText: string, presetJson: string): string {
  const keys = Object.keys(value);
  const n = keys.length;
  const names = new Array<string>(n);
  const texts = new Array<string>(n);
  let key = '';
  try {
    let json = '{';
    for (let i = 0; i < n; i++) {
      key = keys[i];
      const name = memberName(key);
      names[i] = name;
      if (i > 0) json += ',';
      json += name;
      if (key === presetKey) {
        texts[i] = presetText;
        json += presetJson;
      } else {
        texts[i] = serializeDual(value[key], depth + 1);
        json += dualJson;
      }
    }
    const order = sortedOrder(keys);
    let out = '{';
    for (let j = 0; j < n; j++) {
      const i = order[j];
      if (j > 0) out += ',';
      out += names[i];
      out += texts[i];
    }
    dualJson = `${json}}`;
    return `${out}}`;
  } catch (e) {
    if (e instanceof Located) e.segments.push(`.${key}`);
    throw e;
  }
}

function dualObject(value: Record<string, unknown>, depth: number): string {
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new Located('is not a plain JSON object');
  return dualMembers(value, depth, null, '', '');
}

/**
 * JCS of an object one of whose members (`presetKey`) is already known as canonical text
 * `presetText` (e.g. a block that is the same in every response: it is spliced in, not serialized
 * again), and also the JSON.stringify text of `value` (that member's JSON text is `presetJson`), from one walk: a response is both signed (canonical form)
 * and sent as written (its JSON text), and serializing it twice costs more than this.
 */
export function canonicalizeWithText(value: Record<string, unknown>, presetKey: string, presetText: string, presetJson: string): { canonical: string; json: string } {
  try {
    const canonical = dualMembers(value, 0, presetKey, presetText, presetJson);
    return { canonical, json: dualJson };
  } catch (e) {
    if (!(e instanceof Located)) throw e;
    throw new JcsError(`JCS: the value at ${e.segments.reverse().join('')} ${e.problem}`);
  }
}

/**
 * A number as JCS prints it (ECMAScript Number::toString: `10.0` → `10`,
 * `1e21` → `1e+21`, `-0` → `0`). Throws JcsError for NaN and ±Infinity.
 */
export function serializeNumber(value: number): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new JcsError('JCS: NaN and Infinity have no JSON form');
  }
  return `${value}`;
}
