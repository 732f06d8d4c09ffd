/**
 * @module Runtime pieces shared by every compiled keyword: the evaluation context
 * (check counters, failures, the instance-path stack, the dynamic scope), the
 * annotation collector used by `unevaluated*`, JSON equality and the short
 * descriptions used in failures. Paths and messages are only built on failure,
 * so a passing evaluation allocates almost nothing.
 */
import type { Json, JsonObject } from '../types.js';
import type { SchemaFailure } from './engine.js';

/** A compiled (sub)schema: true when `data` is valid. */
export type Validate = (data: Json, ctx: EvalContext, ev: Annotations | null) => boolean;

/** A late-bound compiled schema, so recursive `$ref`s can point at schemas still being compiled. */
export interface Holder {
  fn: Validate;
}

/** One schema resource (a document root or a subschema with `$id`), as seen by the dynamic scope. */
export interface ResourceRecord {
  readonly uri: string;
  /** `$dynamicAnchor` name → compiled subschema (filled once compiled). */
  readonly dynamicHolders: Map<string, Holder>;
  /** 2019-09 `$recursiveAnchor: true` on the resource root. */
  recursiveAnchor: boolean;
  rootHolder: Holder | null;
}

/**
 * What an evaluation has seen at one instance location: the properties and
 * items that some successful subschema evaluated (for `unevaluated*`).
 */
export class Annotations {
  props: Set<string> | null = null;
  allProps = false;
  /** Items `[0, items)` were evaluated; Infinity for all. */
  items = 0;
  itemSet: Set<number> | null = null;

  addProp(key: string): void {
    if (this.allProps) return;
    (this.props ??= new Set()).add(key);
  }

  addItem(index: number): void {
    (this.itemSet ??= new Set()).add(index);
  }

  hasProp(key: string): boolean {
    return this.allProps || (this.props !== null && this.props.has(key));
  }

  hasItem(index: number): boolean {
    return index < this.items || (this.itemSet !== null && this.itemSet.has(index));
  }

  /** Adds what `other` saw; returns how many entries were copied (charged as steps by callers). */
  merge(other: Annotations): number {
    let n = 1;
    if (other.allProps) this.allProps = true;
    else if (other.props !== null && !this.allProps) {
      for (const k of other.props) this.addProp(k);
      n += other.props.size;
    }
    if (other.items > this.items) this.items = other.items;
    if (other.itemSet !== null) {
      for (const i of other.itemSet) this.addItem(i);
      n += other.itemSet.size;
    }
    return n;
  }
}

/** Thrown when an evaluation runs out of steps; the engine turns it into a too_complex error. */
export class StepLimitError extends Error {
  constructor(readonly schemaPath: string) {
    super(`evaluation step limit reached at ${schemaPath}`);
    this.name = 'StepLimitError';
  }
}

/** Steps charged per reported failure (building its path and message is the costly part). */
export const FAILURE_STEPS = 100;
/** Steps charged per failure past EvalContext.maxFailures (only counted). */
export const OMITTED_FAILURE_STEPS = 2;

/** Steps charged before a pattern runs: a fixed part plus its per-character weight. */
export const PATTERN_CALL_STEPS = 10;

/** A compiled pattern with its cost per input character, in steps. */
export interface WeightedPattern {
  test(s: string): boolean;
  /** Steps per character of input (covers the matcher's worst case for this pattern). */
  readonly weight: number;
  /** Size in WorkLimits.maxPatternSize units. */
  readonly size: number;
}

/**
 * Run `p` on `s` after charging its worst-case cost, so a match that would
 * take too long never starts.
 */
export function matchCounted(p: WeightedPattern, s: string, ctx: EvalContext, schemaPath: string): boolean {
  if ((ctx.steps += PATTERN_CALL_STEPS + p.weight * (s.length + 1)) > ctx.maxSteps) throw new StepLimitError(schemaPath);
  return p.test(s);
}

/** Code point length, charging the scan (only strings with surrogates need one). */
export function countedLength(s: string, ctx: EvalContext): number {
  ctx.steps += s.length >> 4;
  return stringLength(s);
}

/** Shared empty failure list; replaced by a fresh array on the first failure. */
export const NO_FAILURES: SchemaFailure[] = [];

/** Mutable state of one `evaluate()` call. */
export class EvalContext {
  /** > 0 inside anyOf/oneOf/not/contains/if, where nothing is counted. */
  silent = 0;
  passed = 0;
  total = 0;
  /** NO_FAILURES (shared, never written) until the first failure. */
  failures: SchemaFailure[] = NO_FAILURES;
  /** Keys and indices from the root to the current instance location. */
  path: Array<string | number> = [];
  /** Dynamic scope: resources entered, outermost first. */
  dyn: ResourceRecord[] = [];
  /**
   * When collecting undeclared properties: flat pairs (object, what it declares),
   * `what` being a key list, one key or `true` (all). Appending is cheaper than
   * keeping a map per object during evaluation; see findUndeclared().
   */
  declared: Declaration[] | null = null;
  /** Work done so far (keyword evaluations, pattern and scan work), in steps. */
  steps = 0;
  /** Step budget of one evaluation (WorkLimits.maxEvaluationSteps). */
  maxSteps = Infinity;
  /** Failures built in full; past this many they are only counted (a response lists a few anyway). */
  maxFailures = Infinity;
  /** Failures counted but not built, and their keywords in first-seen order. */
  omitted = 0;
  omittedKeywords: string[] = [];

  /** Charge `n` steps for entering the subschema at `schemaPath`; throws past the budget. */
  enter(n: number, schemaPath: string): void {
    if ((this.steps += n) > this.maxSteps) throw new StepLimitError(schemaPath);
  }

  reset(): void {
    this.steps = 0;
    this.omitted = 0;
    if (this.omittedKeywords.length !== 0) this.omittedKeywords = [];
    this.silent = 0;
    this.passed = 0;
    this.total = 0;
    this.failures = NO_FAILURES;
    // assigning length is a runtime call even when unchanged
    if (this.path.length !== 0) this.path.length = 0;
    if (this.dyn.length !== 0) this.dyn.length = 0;
    this.declared = null;
  }

  declare(obj: object, key: string): void {
    this.declared!.push(obj, key);
  }

  declareKeys(obj: object, keys: readonly string[]): void {
    this.declared!.push(obj, keys);
  }

  declareAll(obj: object): void {
    this.declared!.push(obj, true);
  }
}

export type Declaration = object | string | readonly string[] | true;

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `$`-notation for a path: `$.a[1]['b.c']`. */
export function formatPath(path: ReadonlyArray<string | number>, extra?: string | number): string {
  let s = '$';
  for (const seg of path) s += segment(seg);
  if (extra !== undefined) s += segment(extra);
  return s;
}

function segment(seg: string | number): string {
  if (typeof seg === 'number') return `[${seg}]`;
  if (IDENT.test(seg)) return `.${seg}`;
  return `['${seg.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
}

/** Counts one check; on failure records it with a message built from `must` and `found`. */
export function report(
  ctx: EvalContext,
  keyword: string,
  schemaPath: string,
  expected: string,
  found: string,
  must: string,
  extra?: string | number,
): void {
  ctx.total++;
  if (ctx.failures.length >= ctx.maxFailures) {
    // counted, not built: a failing 1 MiB output costs steps per item, not per message
    ctx.steps += OMITTED_FAILURE_STEPS;
    ctx.omitted++;
    if (!ctx.omittedKeywords.includes(keyword)) ctx.omittedKeywords.push(keyword);
    return;
  }
  ctx.steps += FAILURE_STEPS;
  const instancePath = formatPath(ctx.path, extra);
  if (ctx.failures === NO_FAILURES) ctx.failures = [];
  ctx.failures.push({
    keyword,
    instancePath,
    schemaPath,
    expected,
    found,
    message: `${instancePath}: must ${must}, found ${found}`,
  });
}

/** JSON type name, with `integer` for integral numbers. */
export function jsonType(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  const t = typeof v;
  if (t === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return t;
}

/** A short description of a value that never echoes strings or containers. */
export function describe(v: Json): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'number':
      return String(v);
    case 'boolean':
      return String(v);
    case 'string':
      return `string of length ${stringLength(v)}`;
    default:
      if (Array.isArray(v)) return `array of ${v.length} items`;
      return `object with ${Object.keys(v).length} properties`;
  }
}

/** Length in Unicode code points (what JSON Schema counts). */
export function stringLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** Keys an inherited property could answer for; only these need the own-property test. */
export const PROTO_KEYS: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__']);

/** Own-property test that is safe for keys like `__proto__` and `constructor`. */
export function has(obj: JsonObject, key: string): boolean {
  return obj[key] !== undefined && hasOwn.call(obj, key);
}

/** JSON equality: numbers by value, objects regardless of key order. */
export function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!hasOwn.call(b, k) || !jsonEqual(a[k], b[k])) return false;
  }
  return true;
}

/** Quoted list for messages: `'a', 'b'`. */
export function quoteList(keys: readonly string[], max = 5): string {
  const shown = keys.slice(0, max).map((k) => `'${k}'`);
  if (keys.length > max) shown.push(`… (${keys.length - max} more)`);
  return shown.join(', ');
}

export const NO_VALIDATORS: readonly Validate[] = [];
