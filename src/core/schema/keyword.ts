/**
 * @module The contract between the compiler and the keyword modules in ./keywords/.
 * A keyword compiles once into a closure; the compiler groups closures by the
 * instance type they apply to, so a keyword never re-checks the type itself.
 */
import type { Json, JsonObject } from '../types.js';
import type { Dialect } from './dialects.js';
import type { SchemaWarning, WorkLimits } from './engine.js';
import type { EvalContext, Holder, ResourceRecord, Validate } from './runtime.js';

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
