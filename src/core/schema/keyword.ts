/**
 * @module The contract between the compiler, the code generator and the keyword
 * modules in ./keywords/. A keyword compiles once into a closure; the compiler
 * groups closures by the instance type they apply to, so a keyword never
 * re-checks the type itself. A keyword may also write its own generated code
 * (KeywordCode): the same check, inline in the function codegen.ts builds.
 */
import type { Json, JsonObject } from '../types.js';
import type { Dialect } from './dialects.js';
import type { SchemaWarning, WorkLimits } from './engine.js';
import { reportValue, type Annotations, type Check, type EvalContext, type Holder, type PathEntry, type Primitive, type Reporter, type ResourceRecord, type Validate } from './runtime.js';

/** Which instances a keyword applies to; `last` runs after every other keyword (unevaluated*). */
export type KeywordGroup = 'any' | 'number' | 'string' | 'array' | 'object' | 'last';

export interface CompileState {
  /** Some `$dynamicRef`/`$recursiveRef` was compiled: keep the dynamic scope at run time. */
  dynamic: boolean;
  assertFormats: boolean;
  limits: WorkLimits;
  /** Compiled artefacts so far, in WorkLimits.maxCompiledSize units (see charge()). */
  compiledSize: number;
  /** Unknown keywords and formats found while compiling. */
  warnings: SchemaWarning[];
  /** Unicode property tables the schema's patterns use so far (WorkLimits.maxPropertyTables). */
  propertyTables: Set<string>;
}

export interface RefTarget {
  holder: Holder;
  resource: ResourceRecord;
  /** The target schema (for checks like "has a matching `$dynamicAnchor`"). */
  node: Json;
}

export interface KeywordContext {
  readonly keyword: string;
  readonly value: Json;
  /** The schema object holding the keyword (to read sibling keywords). */
  readonly schema: JsonObject;
  /** JSON Pointer (URI fragment form) of the keyword, e.g. `#/properties/qty/minimum`. */
  readonly schemaPath: string;
  readonly dialect: Dialect;
  readonly state: CompileState;
  /** Compile the subschema at `schema[keyword]/...segments` (or a sibling with `sibling`). */
  sub(value: Json, segments: ReadonlyArray<string | number>, sibling?: string): Validate;
  /** Schema path of `schema[keyword]/...segments`. */
  pathOf(segments: ReadonlyArray<string | number>, sibling?: string): string;
  /** Resolve a reference relative to the current base URI; throws SchemaCompileError when unresolved. */
  resolve(ref: string): RefTarget;
  /** The resource holding this schema. */
  readonly resource: ResourceRecord;
  /** Throw an invalid_schema error for this keyword. */
  invalid(reason: string): never;
}

export interface KeywordDefinition {
  readonly keyword: string;
  readonly group: KeywordGroup;
  compile(k: KeywordContext): Validate | null;
  /** The keyword's generated code; without it, generated code calls the closure. */
  readonly code?: KeywordCode;
}

/**
 * How a keyword writes itself into generated code (see codegen.ts). The code
 * must agree with the keyword's closure on the verdict, the checks counted and
 * the steps charged: a failure is always recorded by the closure's reporter or
 * by the closure itself, so failure texts have one source.
 */
export interface KeywordCode {
  /**
   * Own properties of an object instance the code reads (`required`,
   * `properties`): read once per object into constants that every keyword of
   * the schema shares (see CodeContext.own()).
   */
  reads?(value: Json): readonly string[];
  /** Writes the code of one occurrence: an inline check(), or closure() where it cannot. */
  emit(c: CodeContext): void;
}

/** Options of CodeContext.check(). */
export interface CheckOptions {
  /**
   * The test charges steps of its own on `st`: a failure re-runs the closure from
   * the count before the test. `'marked'`: the keyword's code saved that count
   * in `S` itself, before work that is part of the test.
   */
  charges?: boolean | 'marked';
  /**
   * A function of the generated factory, `(data, ctx, path, index)`, that records
   * the failure instead of the closure's reporter (see Reporter in runtime.ts).
   */
  reporter?: string;
}

/**
 * What a keyword's code is written with. Generated code runs with these locals:
 * `st` the step count (charged locally, see WorkLimits), `M` the step budget,
 * `S` the count saved before a charging test, `s` not silent, `D` collecting
 * declared properties, `H` Object.prototype.hasOwnProperty.
 */
export interface CodeContext {
  readonly keyword: string;
  readonly value: Json;
  /** The schema object holding the keyword. */
  readonly schema: JsonObject;
  readonly dialect: Dialect;
  /** Schema path of the keyword. */
  readonly schemaPath: string;
  /** The variable holding the instance, known to be of the keyword's group type. */
  readonly data: string;
  /** The keyword's compiled closure. */
  readonly fn: Validate;
  /** For `$ref`: the schema it resolves to. */
  readonly target: Json | undefined;
  /** A value bound once to a constant of the generated factory; returns the constant's name. */
  constant(value: unknown): string;
  /** A fresh variable name (`prefix` `i` names a loop index, which failure paths depend on). */
  name(prefix: string): string;
  emit(line: string): void;
  /** A function of the generated factory, beside the generated one. */
  helper(source: string): void;
  /** A read of own property `key` of the object in variable `obj`, static when the key cannot hit Object.prototype. */
  read(obj: string, key: string): string;
  /** A constant holding own property `key` of the instance (the one read for KeywordCode.reads, or a new one). */
  own(key: string): string;
  /** One inline check: counted when `cond` holds, recorded as the closure records it when not. */
  check(cond: string, options?: CheckOptions): void;
  /** Calls the keyword's closure on the instance. */
  closure(): void;
  /** Applies `node` to the instance in place (a `$ref`): inlined where it can be, else through the closure. */
  inline(node: Json | undefined): void;
  /**
   * Applies subschema `node` (at `key` under the keyword) to the value in
   * variable `data`, one step below in the instance: `segment` is a constant
   * PathSegment or a loop index. `loop`: once per item, so the step budget is
   * compared on entry.
   */
  sub(node: Json, data: string, segment: string, key: string | undefined, loop: boolean): void;
}

/**
 * Counts one passed check (docs/protocol.md#schema-checks), except inside
 * anyOf/oneOf/not/contains/if where nothing is counted. Every assertion keyword
 * counts its passes through here; failures are counted by report().
 */
export function countPass(ctx: EvalContext): void {
  if (ctx.silent === 0) {
    ctx.passed++;
    ctx.total++;
  }
}

/** Counts one check outside silent sections: a pass, or a failure of `check` that found `found` (see reportValue()). */
export function countCheck(ctx: EvalContext, ok: boolean, check: Check, found: Primitive): void {
  if (ctx.silent !== 0) return;
  if (ok) countPass(ctx);
  else reportValue(ctx, check, found, null, -1);
}

/**
 * Counts the outcome `ok` of an assertion's test on `data`: a pass, or outside
 * silent sections a failure recorded by `reporter`; returns `ok`. Each
 * assertion runs its test inline in a closure of its own (a test called through
 * one shared closure would be a call V8 cannot inline) and registers its
 * reporter with withReporter() for its generated code.
 */
export function verdict(ok: boolean, data: Json, ctx: EvalContext, reporter: Reporter): boolean {
  if (ok) countPass(ctx);
  else if (ctx.silent === 0) reporter(data, ctx, null, -1);
  return ok;
}

/** A reporter that records a failure of `check` with what `found` makes of the instance (the instance itself by default). */
export function valueReporter(check: Check, found: (data: Json) => Primitive = (data) => data as Primitive): Reporter {
  return (data, ctx, path, index) => reportValue(ctx, check, found(data), path, index);
}

/** Whether a value is a JSON object (not an array, not null). */
export function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether a keyword's value is a count (a non-negative integer). */
export function isCount(v: Json | undefined): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

/** The keyword's value as a count; invalid_schema otherwise. */
export function countOf(k: KeywordContext): number {
  return isCount(k.value) ? k.value : k.invalid(`${k.keyword} must be a non-negative integer`);
}

/** Runs every closure of `list` on the instance; in a silent section the first failure ends the run. */
export function runAll(list: readonly Validate[], data: Json, ctx: EvalContext, ev: Annotations | null): boolean {
  let ok = true;
  for (let i = 0; i < list.length; i++) {
    if (!list[i](data, ctx, ev)) {
      if (ctx.silent !== 0) return false;
      ok = false;
    }
  }
  return ok;
}

/** Applies `sub` to `value`, one step below the current instance location, at `at`. */
export function applyAt(sub: Validate, value: Json, at: PathEntry, ctx: EvalContext): boolean {
  ctx.path.push(at);
  const ok = sub(value, ctx, null);
  ctx.path.pop();
  return ok;
}

/**
 * Applies `sub` to the items of `a` from index `from` on, but those `skip` saw
 * evaluated; in a silent section the first failure ends the loop.
 */
export function applyToItems(sub: Validate, a: Json[], from: number, ctx: EvalContext, skip: Annotations | null): boolean {
  let ok = true;
  for (let i = from; i < a.length; i++) {
    if (skip !== null && skip.hasItem(i)) continue;
    if (!applyAt(sub, a[i], i, ctx)) {
      if (ctx.silent !== 0) return false;
      ok = false;
    }
  }
  return ok;
}
