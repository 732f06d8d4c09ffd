/**
 * @module Runtime pieces shared by every compiled keyword: the evaluation context
 * (check counters, failures, the instance-path stack, the dynamic scope), the
 * annotation collector used by `unevaluated*`, JSON equality and the short
 * descriptions used in failures. Paths and messages are only built on failure,
 * so a passing evaluation allocates almost nothing.
 */
import type { Json, JsonObject } from '../types.js';
import type { SchemaEvaluation, SchemaFailure } from './engine.js';

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
const FAILURE_STEPS = 100;
/** Steps charged per failure past EvaluateOptions.maxFailures (only counted). */
const OMITTED_FAILURE_STEPS = 2;

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

/**
 * No limit on the failures recorded: more than an evaluation can record, and a small integer
 * (Infinity would make the field a boxed double, read and written at every evaluation).
 */
export const UNLIMITED = 0x3fffffff;

/** Shared empty failure list; replaced by a fresh array on the first failure. */
export const NO_FAILURES: FailureRecords = [];

/** Mutable state of one `evaluate()` call. */
export class EvalContext {
  /** > 0 inside anyOf/oneOf/not/contains/if, where nothing is counted. */
  silent = 0;
  passed = 0;
  total = 0;
  /** NO_FAILURES (shared, never written) until the first failure; four entries per failure (see FailureRecords). */
  failures: FailureRecords = NO_FAILURES;
  /** Keys and indices from the root to the current instance location. */
  path: PathEntry[] = [];
  /**
   * The instance path of the check being reported, already copied, when generated
   * code knows it (see codegen.ts failure()); null: take a copy of `path`.
   */
  at: readonly PathEntry[] | null = null;
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
  /**
   * Step budget of one evaluation (WorkLimits.maxEvaluationSteps), set by evaluate() before
   * each. Starts as a small integer so that the field stays one while budgets are (see UNLIMITED).
   */
  maxSteps = 0;
  /** Generated code may run (off while evaluate() re-runs an evaluation on the closures alone). */
  fast = true;
  /**
   * Failures recorded in full (EvaluateOptions.maxFailures, UNLIMITED when not given); past
   * this many they are only counted (a response lists a few anyway).
   */
  maxFailures = UNLIMITED;
  /** Failures counted but not built, and their keywords in first-seen order. */
  omitted = 0;
  omittedKeywords: string[] = [];

  /** Charge `n` steps for entering the subschema at `schemaPath`; throws past the budget. */
  enter(n: number, schemaPath: string): void {
    if ((this.steps += n) > this.maxSteps) throw new StepLimitError(schemaPath);
  }

  /**
   * After an evaluation that returned: the counts back to zero. Its silent
   * sections, instance path and dynamic scope are balanced by then.
   */
  clear(): void {
    this.passed = 0;
    this.total = 0;
    this.steps = 0;
    this.failures = NO_FAILURES;
    this.declared = null;
    if (this.omitted !== 0) {
      this.omitted = 0;
      this.omittedKeywords = [];
    }
  }

  /** Everything back to the initial state (after an evaluation that threw, anywhere in it). */
  reset(): void {
    this.steps = 0;
    this.omitted = 0;
    if (this.omittedKeywords.length !== 0) this.omittedKeywords = [];
    this.silent = 0;
    this.passed = 0;
    this.total = 0;
    this.failures = NO_FAILURES;
    this.at = null;
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

/**
 * A property name known when the schema is compiled (`properties`), formatted
 * for instance paths once then, so a failure below it only joins strings.
 */
export class PathSegment {
  readonly text: string;
  constructor(readonly key: string) {
    this.text = segment(key);
  }
}

/** One step of the instance path: an array index, a property name, or a pre-formatted property name. */
export type PathEntry = string | number | PathSegment;

/** `$`-notation for a path: `$.a[1]['b.c']`. */
export function formatPath(path: ReadonlyArray<PathEntry>, extra?: string | number): string {
  let s = '$';
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    s += typeof seg === 'object' ? seg.text : segment(seg);
  }
  if (extra !== undefined) s += segment(extra);
  return s;
}

/** `/^[A-Za-z_$][A-Za-z0-9_$]*$/` without a regex call (this runs for every failure). */
function isIdentifier(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36) continue;
    if (i > 0 && c >= 48 && c <= 57) continue;
    return false;
  }
  return true;
}

function segment(seg: string | number): string {
  if (typeof seg === 'number') return '[' + seg + ']';
  if (isIdentifier(seg)) return '.' + seg;
  return `['${seg.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
}

/**
 * What every failure of one check has in common, fixed when the schema is
 * compiled: its keyword, schema path, expected text and verb phrase, and how
 * its `found` text is written. A failure is recorded as four entries of
 * EvalContext.failures (this descriptor, what was found, the instance path and
 * an index, see FailureRecords), so recording one copies nothing of the check
 * and allocates no record.
 */
export class Check {
  // `declare`d and assigned in the constructor: a declared class field is first defined
  // as undefined, then assigned
  declare readonly keyword: string;
  declare readonly schemaPath: string;
  declare readonly expected: string;
  /** The message's verb phrase: `<path>: must <must>, found <found>`. */
  declare readonly must: string;
  /**
   * Writes the `found` text from the primitive value recorded (see reportValue()),
   * when the failure is read: turning a number into decimal or measuring a string
   * costs more than recording the failure. null: the recorded value is the text.
   */
  declare readonly text: FoundText | null;

  constructor(keyword: string, schemaPath: string, expected: string, must: string, text: FoundText | null) {
    this.keyword = keyword;
    this.schemaPath = schemaPath;
    this.expected = expected;
    this.must = must;
    this.text = text;
  }

  /**
   * The failure's texts. Everything recorded is fixed when recorded (strings,
   * primitives and a copy of the path), so they do not depend on when they are read.
   */
  build(found: unknown, path: RecordedPath, index: number): SchemaFailure {
    const instancePath = formatRecorded(path, index);
    const f = this.text === null ? (found as string) : this.text(found as Primitive);
    const { keyword, schemaPath, expected, must } = this;
    return { keyword, instancePath, schemaPath, expected, found: f, message: instancePath + ': must ' + must + ', found ' + f };
  }
}

/** A JSON value that is not a container: immutable, so it can be described when read. */
export type Primitive = string | number | boolean | null;

/** Writes a failure's `found` text from the primitive it found. */
export type FoundText = (value: Primitive) => string;

/** A `required`-like check: what is recorded is the list of missing names, its expected text is built from them. */
export class MissingCheck extends Check {
  constructor(keyword: string, schemaPath: string) {
    super(keyword, schemaPath, '', '', null);
  }

  override build(found: unknown, path: RecordedPath, index: number): SchemaFailure {
    const missing = found as readonly string[];
    const expected = missing.length === 1 ? `property ${quoteList(missing)}` : `properties ${quoteList(missing)}`;
    const instancePath = formatRecorded(path, index);
    const { keyword, schemaPath } = this;
    return { keyword, instancePath, schemaPath, expected, found: 'missing', message: `${instancePath}: must have ${expected}, found missing` };
  }
}

/**
 * Failures as recorded: four entries each, the Check, what was found, the instance
 * path and the array index that fills its hole (see RecordedPath), or -1 for none.
 */
export type FailureRecords = unknown[];

/**
 * A recorded instance path. Generated code records a failure inside a loop
 * with its location's path as a constant shared by all the failures there, one
 * entry (null) standing for the item's index, recorded beside it: no array is
 * allocated per failure. Never written once recorded.
 */
export type RecordedPath = ReadonlyArray<PathEntry | null>;

/** `$`-notation of a recorded path, `index` in place of its null entry. */
function formatRecorded(path: RecordedPath, index: number): string {
  let s = '$';
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    s += seg === null ? '[' + index + ']' : typeof seg === 'object' ? seg.text : segment(seg);
  }
  return s;
}

/**
 * Records the failure of an assertion whose test already ran and failed, as
 * its closure would (same record, same FAILURE_STEPS), without testing again
 * or charging the test's steps again. Generated code calls it from the failure
 * branch of an inline test (see codegen.ts), in non-silent mode only, with the
 * instance path of the check below the context's path (a RecordedPath and its
 * index); null: the path is ctx.at, or the context's path.
 */
export type Reporter = (data: Json, ctx: EvalContext, path: RecordedPath | null, index: number) => void;

const assertions = new WeakMap<Validate, { reporter: Reporter; check: Check | undefined }>();

/**
 * Registers the reporter of an assertion's closure (see Reporter), and the check
 * it records with where its generated code records failures itself (`required`,
 * which has read the properties already); returns the closure.
 */
export function withReporter(fn: Validate, reporter: Reporter, check?: Check): Validate {
  assertions.set(fn, { reporter, check });
  return fn;
}

/** The reporter registered for an assertion's closure, if any. */
export function reporterOf(fn: Validate): Reporter | undefined {
  return assertions.get(fn)?.reporter;
}

/** The check registered for an assertion's closure with its reporter, if any. */
export function checkOf(fn: Validate): Check | undefined {
  return assertions.get(fn)?.check;
}

/** Counts one failed check: true when it is to be recorded, false when only counted (past maxFailures). */
function countFailure(ctx: EvalContext, keyword: string): boolean {
  ctx.total++;
  if (ctx.failures.length >> 2 >= ctx.maxFailures) {
    // counted, not built: a failing 1 MiB output costs steps per item, not per message
    ctx.steps += OMITTED_FAILURE_STEPS;
    ctx.omitted++;
    if (!ctx.omittedKeywords.includes(keyword)) ctx.omittedKeywords.push(keyword);
    return false;
  }
  ctx.steps += FAILURE_STEPS;
  return true;
}

/**
 * Appends a failure (four entries, see FailureRecords). `path` is below the
 * context's path (null: the path is ctx.at, or the context's path, copied). The
 * first two get arrays of their own size: a push that grows an array reserves
 * 16 more slots, and most failing documents have one or two failures.
 */
function record(ctx: EvalContext, check: Check, found: unknown, path: RecordedPath | null, index: number): void {
  let p: RecordedPath;
  let i = index;
  if (path === null) p = ctx.at !== null ? ctx.at : ctx.path.slice();
  else if (ctx.path.length === 0) p = path;
  else {
    p = ctx.path.concat(i < 0 ? (path as PathEntry[]) : path.map((seg) => (seg === null ? i : seg)));
    i = -1;
  }
  const list = ctx.failures;
  if (list === NO_FAILURES) ctx.failures = [check, found, p, i];
  else if (list.length === 4) ctx.failures = [list[0], list[1], list[2], list[3], check, found, p, i];
  else list.push(check, found, p, i);
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
  if (!countFailure(ctx, keyword)) return;
  record(ctx, new Check(keyword, schemaPath, expected, must, null), found, extra !== undefined ? [extra] : null, -1);
}

/** Records a failure of `check` (whose `text` is null) that found `found`. */
export function reportText(ctx: EvalContext, check: Check, found: string, path: RecordedPath | null, index: number): void {
  if (countFailure(ctx, check.keyword)) record(ctx, check, found, path, index);
}

/** Records a failure of `check` whose `found` text is written from a primitive value when the failure is read (see Check.text). */
export function reportValue(ctx: EvalContext, check: Check, value: Primitive, path: RecordedPath | null, index: number): void {
  if (countFailure(ctx, check.keyword)) record(ctx, check, value, path, index);
}

/** `found` texts for reportValue(). */
export const numberText: FoundText = (v) => String(v);
export const lengthText: FoundText = (v) => 'length ' + stringLength(v as string);
export const stringText: FoundText = (v) => 'string of length ' + stringLength(v as string);
export const itemsText: FoundText = (v) => v + ' items';
export const propertiesText: FoundText = (v) => v + ' properties';
export const describeText: FoundText = (v) => describe(v);

/**
 * Records a failure of a `required`-like check: expected is `property 'a'` or
 * `properties 'a', 'b'` from the missing names, found is `missing`.
 */
export function reportMissing(ctx: EvalContext, check: MissingCheck, missing: readonly string[], path: RecordedPath | null, index: number): void {
  if (countFailure(ctx, check.keyword)) record(ctx, check, missing, path, index);
}

/**
 * The result of one evaluation. Failures are kept as recorded and written out
 * (SchemaFailure objects with their texts) on the first read of `failures`;
 * toJSON() gives the same plain object as before, failures included.
 */
export class Evaluation implements SchemaEvaluation {
  // assigned once in the constructor (see Check)
  declare valid: boolean;
  declare passed: number;
  declare total: number;
  declare steps: number;
  declare omitted?: number;
  declare omittedKeywords?: string[];
  declare undeclared?: string[];
  /** The failures as recorded (FailureRecords) until first read, then as written out (one field: less to set up per call). */
  #failures: FailureRecords | SchemaFailure[];

  constructor(valid: boolean, passed: number, total: number, failures: FailureRecords, steps: number) {
    this.valid = valid;
    this.passed = passed;
    this.total = total;
    this.steps = steps;
    this.#failures = failures;
  }

  get failures(): SchemaFailure[] {
    const p = this.#failures;
    // recorded failures start with a Check; the shared empty list is never handed out
    if (p !== NO_FAILURES && !(p[0] instanceof Check)) return p as SchemaFailure[];
    const out: SchemaFailure[] = new Array(p.length / 4);
    for (let i = 0, j = 0; i < p.length; i += 4, j++) out[j] = (p[i] as Check).build(p[i + 1], p[i + 2] as RecordedPath, p[i + 3] as number);
    this.#failures = out;
    return out;
  }

  set failures(list: SchemaFailure[]) {
    this.#failures = list;
  }

  /** The plain form (JSON, logs): the same keys in the same order as a plain result object. */
  toJSON(): SchemaEvaluation {
    const o: SchemaEvaluation = { valid: this.valid, passed: this.passed, total: this.total, failures: this.failures, steps: this.steps };
    if (this.omitted !== undefined) o.omitted = this.omitted;
    if (this.omittedKeywords !== undefined) o.omittedKeywords = this.omittedKeywords;
    if (this.undeclared !== undefined) o.undeclared = this.undeclared;
    return o;
  }
}

/** `type <name>` as failures describe what was found (a table: failures must stay cheap). */
export function foundType(v: Json): string {
  if (v === null) return 'type null';
  if (Array.isArray(v)) return 'type array';
  switch (typeof v) {
    case 'number':
      return Number.isInteger(v) ? 'type integer' : 'type number';
    case 'string':
      return 'type string';
    case 'boolean':
      return 'type boolean';
    default:
      return 'type ' + typeof v;
  }
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

/**
 * `text` cut to at most `max` UTF-16 units, ending in `...` when cut. Never between the two halves of a
 * surrogate pair: a lone half has no RFC 8785 form, so a hint holding one could not be signed and the
 * request would fail instead of getting its verdict.
 */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 3;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}...`;
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

export { jsonEqual } from '../json-equal.js';

/** Quoted list for messages: `'a', 'b'`. */
export function quoteList(keys: readonly string[], max = 5): string {
  const shown = keys.slice(0, max).map((k) => `'${k}'`);
  if (keys.length > max) shown.push(`… (${keys.length - max} more)`);
  return shown.join(', ');
}
