/**
 * @module Repairs as data (docs/protocol.md#repairs): for a failed check with a known
 * fix, RFC 6902 patches against `submitted_output`, computed from the schema, the
 * rules and the output, never guessed.
 *
 * - `determined`: the one fix that makes the check pass, touching only the failing
 *   value (const, an enum member equal up to case or surrounding whitespace, a numeric
 *   string read losslessly, a missing property's default, a property
 *   `additionalProperties: false` forbids, a date written in a variant that means one
 *   RFC 3339 value, a float off a decimal `multipleOf` by rounding error only). The
 *   verifier then checks every determined schema repair with the engine itself
 *   (see `confirmSchemaRepairs` in verify.ts) and drops any that would not pass.
 * - `candidate`: two or more alternatives, none of which is preferred (a sum's total or
 *   one of its lines). A fix with no alternative that still changes what a value says (a
 *   clamp into a range, a cut to a maximum length) is neither: it gets no repair, and the
 *   hint's expected/found say the limit.
 *
 * Pure: no I/O; numbers are handled as exact decimals where a sum or a multiple is
 * concerned, so 0.1 + 0.2 is 0.3.
 */
import { toJsonPointer } from './json-patch.js';
import type { Json, Repair, RepairOperation, RepairOption } from './types.js';
import type { SchemaFailure } from './schema/engine.js';
import { decimalOf } from './schema/keywords/number.js';
import { isDate } from './schema/formats/date.js';
import { isDateTime } from './schema/formats/date-time.js';
import { formatNumber } from './rules/common.js';
import { schemaPointerTokens } from './schema-problem.js';

export type { Repair, RepairOption } from './types.js';

// ---------------------------------------------------------------------------
// Locations

/** `[A-Za-z_][A-Za-z0-9_]*`, one character code at a time. */
function isIdentChar(c: number, first: boolean): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || (!first && c >= 48 && c <= 57);
}

/**
 * The reference tokens of a concrete location as the verifier writes it
 * (`$`, `$.a[1].b`, `$['a.b']`); null for anything else (a display path with `[]`).
 */
export function locationTokens(location: string): Array<string | number> | null {
  if (!location.startsWith('$')) return null;
  const tokens: Array<string | number> = [];
  let i = 1;
  while (i < location.length) {
    const c = location[i];
    if (c === '.') {
      let j = i + 1;
      while (j < location.length && isIdentChar(location.charCodeAt(j), j === i + 1)) j++;
      if (j === i + 1) return null;
      tokens.push(location.slice(i + 1, j));
      i = j;
    } else if (c === '[' && location[i + 1] === "'") {
      let j = i + 2;
      let key = '';
      for (;;) {
        if (j >= location.length) return null;
        const d = location[j];
        if (d === '\\') {
          key += location[j + 1] ?? '';
          j += 2;
        } else if (d === "'") break;
        else {
          key += d;
          j++;
        }
      }
      if (location[j + 1] !== ']') return null;
      tokens.push(key);
      i = j + 2;
    } else if (c === '[') {
      let j = i + 1;
      while (j < location.length && location.charCodeAt(j) >= 48 && location.charCodeAt(j) <= 57) j++;
      const digits = location.slice(i + 1, j);
      if (location[j] !== ']' || digits === '' || (digits.length > 1 && digits[0] === '0')) return null;
      tokens.push(Number(digits));
      i = j + 1;
    } else return null;
  }
  return tokens;
}

function valueAt(root: Json, tokens: ReadonlyArray<string | number>): { found: true; value: Json } | { found: false } {
  let node: Json = root;
  for (const t of tokens) {
    if (typeof t === 'number') {
      if (!Array.isArray(node) || t >= node.length) return { found: false };
      node = node[t];
    } else {
      if (node === null || typeof node !== 'object' || Array.isArray(node) || !Object.prototype.hasOwnProperty.call(node, t)) return { found: false };
      node = node[t];
    }
  }
  return { found: true, value: node };
}

/** The value at a JSON Pointer of the schema (`#/properties/a/const`), or not found. */
function schemaAt(schema: Json, pointer: string): { found: true; value: Json } | { found: false } {
  if (!pointer.startsWith('#') || (pointer.length > 1 && pointer[1] !== '/')) return { found: false };
  const tokens = schemaPointerTokens(pointer);
  let node: Json = schema;
  for (const t of tokens) {
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(t) || Number(t) >= node.length) return { found: false };
      node = node[Number(t)];
    } else if (node !== null && typeof node === 'object' && Object.prototype.hasOwnProperty.call(node, t)) {
      node = node[t];
    } else return { found: false };
  }
  return { found: true, value: node };
}

const isObject = (v: Json | undefined): v is { [key: string]: Json } => v !== null && typeof v === 'object' && !Array.isArray(v);

// ---------------------------------------------------------------------------
// Exact decimals

interface Decimal {
  m: bigint;
  e: number;
}

const TEN = 10n;

function align(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const e = Math.min(a.e, b.e);
  return [a.m * TEN ** BigInt(a.e - e), b.m * TEN ** BigInt(b.e - e), e];
}

function addDec(a: Decimal, b: Decimal): Decimal {
  const [x, y, e] = align(a, b);
  return { m: x + y, e };
}

function subDec(a: Decimal, b: Decimal): Decimal {
  return addDec(a, { m: -b.m, e: b.e });
}

/** The double nearest to a decimal (through its text, which JavaScript rounds correctly). */
function toNumber(d: Decimal): number {
  return Number(`${d.m}e${d.e}`);
}

const POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000];

/**
 * The decimals (0 to 6) of a double whose shortest decimal form has that few, scaled to an
 * exact integer below 2^53; -1 otherwise. Amounts and quantities take this path, without
 * strings or BigInts: a repair must not cost a failing verdict more than the verdict.
 */
function smallScale(v: number): number {
  for (let k = 0; k < POW10.length; k++) {
    const scaled = v * POW10[k];
    if (Math.abs(scaled) >= 2 ** 52) return -1;
    const r = Math.round(scaled);
    if (r / POW10[k] === v) return k;
  }
  return -1;
}

/** a + b − c exactly on the decimal values, as the nearest double (each input taken as JSON wrote it). */
function exactCombination(add: readonly number[], subtract: readonly number[]): number {
  let k = 0;
  for (const v of add) k = Math.max(k, smallScale(v) === -1 ? 99 : smallScale(v));
  for (const v of subtract) k = Math.max(k, smallScale(v) === -1 ? 99 : smallScale(v));
  if (k < POW10.length) {
    // Integers below 2^52 add exactly while the sum stays below 2^53; one correctly rounded division.
    let sum = 0;
    for (const v of add) sum += Math.round(v * POW10[k]);
    for (const v of subtract) sum -= Math.round(v * POW10[k]);
    if (Math.abs(sum) < 2 ** 53) return sum / POW10[k];
  }
  let total: Decimal = { m: 0n, e: 0 };
  for (const v of add) total = addDec(total, decimalOf(v));
  for (const v of subtract) total = subDec(total, decimalOf(v));
  return toNumber(total);
}

// ---------------------------------------------------------------------------
// Schema repairs

const NUMBER_TEXT = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** `"12"` → 12 when the text is a JSON number whose decimal value the double holds exactly; else null. */
export function losslessNumber(text: string): number | null {
  if (text.length > 400 || !NUMBER_TEXT.test(text)) return null;
  const n = Number(text);
  // A whole number past 2^53 would fail integrity:safe_integers: no fix of ours may do that.
  if (!Number.isFinite(n) || (Number.isInteger(n) && !Number.isSafeInteger(n))) return null;
  // The double's own shortest form: lossless by definition ("12", "0.1").
  if (String(n) === text) return n;
  // The text's decimal value must be the double's: "0.1" is, "9007199254740993" is not.
  const [mant, expPart] = text.toLowerCase().split('e');
  const exp = expPart === undefined ? 0 : Number(expPart);
  const neg = mant.startsWith('-');
  const [int, frac = ''] = (neg ? mant.slice(1) : mant).split('.');
  const written: Decimal = { m: BigInt(int + frac) * (neg ? -1n : 1n), e: exp - frac.length };
  const held = decimalOf(n);
  const [x, y] = align(written, held);
  return x === y ? (Object.is(n, -0) ? 0 : n) : null;
}

function replace(pointer: string, value: Json): RepairOperation[] {
  return [{ op: 'replace', path: pointer, value }];
}

/** Keys that are ordinary in JSON but would be unsafe to read from a plain object. */
function ownKeys(o: { [key: string]: Json }): string[] {
  return Object.keys(o);
}

function quoteName(name: string): string {
  return `property '${name}'`;
}

const DATE_SEP = /^(\d{4})[/.](\d{1,2})[/.](\d{1,2})$/;
const DATE_DASH_UNPADDED = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const DATE_TIME_VARIANT = /^(\d{4}-\d{2}-\d{2})[ tT](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?([zZ]|[+-]\d{2}:?\d{2})$/;

/** The one RFC 3339 value a date written as `2024/1/2`, `2024.01.02` or `2024-1-2` stands for (year first only). */
function dateVariant(text: string): string | null {
  const t = text.trim();
  const m = DATE_SEP.exec(t) ?? DATE_DASH_UNPADDED.exec(t);
  if (!m) return t !== text && isDate(t) ? t : null;
  const out = `${m[1]}-${m[2].padStart(2, '0')}-${m[3].padStart(2, '0')}`;
  return isDate(out) ? out : null;
}

/** `2024-01-02 10:00:00+0200` → `2024-01-02T10:00:00+02:00`; a time without a zone is ambiguous and gets nothing. */
function dateTimeVariant(text: string): string | null {
  const t = text.trim();
  const m = DATE_TIME_VARIANT.exec(t);
  if (!m) return t !== text && isDateTime(t) ? t : null;
  const zone = m[4] === 'z' || m[4] === 'Z' ? 'Z' : m[4].length === 5 ? `${m[4].slice(0, 3)}:${m[4].slice(3)}` : m[4];
  const out = `${m[1]}T${m[2]}${m[3] ?? ':00'}${zone}`;
  return out !== text && isDateTime(out) ? out : null;
}

/** The nearest multiple of `d`, when `v` is off it by floating-point rounding only (a few units in the last place). */
function roundedMultiple(v: number, d: number): number | null {
  if (!Number.isFinite(v) || !(d > 0)) return null;
  const dv = decimalOf(v);
  const dd = decimalOf(d);
  const [a, b, e] = align(dv, dd);
  // q = a / b rounded half away from zero, in integers.
  const neg = a < 0n;
  const abs = neg ? -a : a;
  let q = abs / b;
  if ((abs % b) * 2n >= b) q += 1n;
  if (neg) q = -q;
  const multiple = toNumber({ m: q * b, e });
  if (multiple === v) return null;
  const ulps = Math.abs(v - multiple) / (Number.EPSILON * Math.max(Math.abs(v), Math.abs(multiple), Number.MIN_VALUE));
  return ulps <= 8 ? multiple : null;
}

/**
 * The repair of one schema failure, or undefined when no fix is known. `schema` is the
 * request's schema document (the failure's schemaPath points into it), `output` the
 * submitted output.
 */
export function schemaFailureRepair(failure: SchemaFailure, schema: Json, output: Json): Repair | undefined {
  const tokens = locationTokens(failure.instancePath);
  if (tokens === null) return undefined;
  const at = valueAt(output, tokens);
  if (!at.found) return undefined;
  const value = at.value;
  const pointer = toJsonPointer(tokens);
  const keywordValue = schemaAt(schema, failure.schemaPath);
  if (!keywordValue.found) return undefined;
  const k = keywordValue.value;

  switch (failure.keyword) {
    case 'const':
      return { certainty: 'determined', patch: replace(pointer, k), note: 'Set the value to the constant the schema requires.' };
    case 'enum': {
      if (!Array.isArray(k) || k.length === 0) return undefined;
      if (k.length === 1) return { certainty: 'determined', patch: replace(pointer, k[0]), note: 'Set the value to the only value the schema allows.' };
      if (typeof value !== 'string') return undefined;
      const norm = value.trim().toLowerCase();
      const matches = k.filter((m): m is string => typeof m === 'string' && m.trim().toLowerCase() === norm);
      if (matches.length !== 1) return undefined;
      return { certainty: 'determined', patch: replace(pointer, matches[0]), note: 'Use the allowed value this one matches up to case and surrounding whitespace.' };
    }
    case 'type': {
      if (typeof value !== 'string') return undefined;
      const types = typeof k === 'string' ? [k] : Array.isArray(k) ? k : [];
      const wantsNumber = types.includes('number');
      const wantsInteger = types.includes('integer');
      if (!wantsNumber && !wantsInteger) return undefined;
      const n = losslessNumber(value);
      if (n === null) return undefined;
      if (!wantsNumber && !Number.isSafeInteger(n)) return undefined;
      return { certainty: 'determined', patch: replace(pointer, n), note: `Send the number ${formatNumber(n)} instead of the text that spells it.` };
    }
    case 'required': {
      if (!isObject(value) || !Array.isArray(k)) return undefined;
      const parent = schemaAt(schema, failure.schemaPath.replace(/\/required$/, ''));
      if (!parent.found || !isObject(parent.value) || !isObject(parent.value.properties)) return undefined;
      const props = parent.value.properties;
      for (const name of k) {
        if (typeof name !== 'string' || failure.expected !== quoteName(name) || Object.prototype.hasOwnProperty.call(value, name)) continue;
        if (!Object.prototype.hasOwnProperty.call(props, name)) return undefined;
        const sub = props[name];
        if (!isObject(sub) || !Object.prototype.hasOwnProperty.call(sub, 'default')) return undefined;
        return {
          certainty: 'determined',
          patch: [{ op: 'add', path: toJsonPointer([...tokens, name]), value: sub.default }],
          note: `Add the missing property with the default its schema gives.`,
        };
      }
      return undefined;
    }
    case 'additionalProperties': {
      if (k !== false || !isObject(value)) return undefined;
      const extra = ownKeys(value).filter((key) => failure.found === quoteName(key));
      if (extra.length !== 1) return undefined;
      return { certainty: 'determined', patch: [{ op: 'remove', path: toJsonPointer([...tokens, extra[0]]) }], note: 'Remove the property the schema does not allow.' };
    }
    case 'format': {
      if (typeof value !== 'string') return undefined;
      const fixed = k === 'date' ? dateVariant(value) : k === 'date-time' ? dateTimeVariant(value) : null;
      if (fixed === null) return undefined;
      return { certainty: 'determined', patch: replace(pointer, fixed), note: `Write the ${k} in RFC 3339 form.` };
    }
    case 'multipleOf': {
      if (typeof value !== 'number' || typeof k !== 'number') return undefined;
      const m = roundedMultiple(value, k);
      if (m === null) return undefined;
      return { certainty: 'determined', patch: replace(pointer, m), note: `Round away the floating-point error: ${formatNumber(m)} is the multiple of ${formatNumber(k)} meant.` };
    }
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------
// Rule and bound repairs

/** Where a selected value sits, as a JSON Pointer; null when its location cannot be written as one. */
export function pointerOf(location: string): string | null {
  const tokens = locationTokens(location);
  return tokens === null ? null : toJsonPointer(tokens);
}

const MAX_LINE_OPTIONS = 10;

/**
 * `sum_equals`: set the total to the exact sum, or set one line so the sum comes out
 * (listed per line, up to ten lines: only right if that line alone is wrong).
 */
export function sumEqualsRepair(
  lines: ReadonlyArray<{ location: string; value: number }>,
  reference: { value: number; location: string | null },
): Repair | undefined {
  const options: RepairOption[] = [];
  const values = lines.map((l) => l.value);
  if (reference.location !== null) {
    const p = pointerOf(reference.location);
    const total = exactCombination(values, []);
    if (p !== null && Number.isFinite(total)) {
      options.push({ patch: replace(p, total), note: `Set ${reference.location} to the sum of the values, ${formatNumber(total)}.` });
    }
  }
  if (lines.length <= MAX_LINE_OPTIONS) {
    const allNonNegative = lines.every((l) => l.value >= 0);
    for (const line of lines) {
      const p = pointerOf(line.location);
      if (p === null) continue;
      // reference − (sum − line): the line's value is left out of the sum.
      const others = values.filter((_, j) => lines[j] !== line);
      const fixed = exactCombination([reference.value], others);
      if (!Number.isFinite(fixed) || (allNonNegative && fixed < 0)) continue;
      options.push({ patch: replace(p, fixed), note: `Set ${line.location} to ${formatNumber(fixed)}, if it is the one wrong value.` });
    }
  }
  // A candidate offers a choice: with one option left there is none to offer.
  if (options.length < 2) return undefined;
  return { certainty: 'candidate', options, note: 'Which value is wrong cannot be known from the data: choose the fix that matches the source.' };
}

/** How many repairs in `hints` are determined (for `next_actions`). */
export function countDetermined(hints: ReadonlyArray<{ repair?: Repair }>): number {
  let n = 0;
  for (const h of hints) if (h.repair?.certainty === 'determined') n++;
  return n;
}
