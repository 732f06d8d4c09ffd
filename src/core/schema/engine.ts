/**
 * @module The schema-engine interface. The verifier depends only on this, so the
 * engine can be swapped. An engine compiles a JSON Schema once and evaluates
 * instances many times, counting checks as SPEC §2.1 defines them.
 */
import type { Json } from '../types.js';

/** One failed assertion: one keyword at one concrete instance location. */
export interface SchemaFailure {
  /** The assertion keyword, e.g. `minimum`, `required`, `additionalProperties`, `anyOf`. */
  keyword: string;
  /** Concrete instance path, `$` for the root, e.g. `$.line_items[1].qty`. */
  instancePath: string;
  /** JSON Pointer of the keyword in the schema, e.g. `#/properties/qty/minimum`. */
  schemaPath: string;
  /** What was required, in words, e.g. `>= 1`, `type integer`, `property 'sku'`. */
  expected: string;
  /** What was there, described, never the raw value beyond what a hint needs: e.g. `0`, `type string`, `missing`. */
  found: string;
  /** One sentence, e.g. `$.line_items[1].qty: must be >= 1, found 0`. */
  message: string;
}

export interface SchemaEvaluation {
  valid: boolean;
  /** Checks that passed / were evaluated (SPEC §2.1 counting). passed <= total always. */
  passed: number;
  total: number;
  failures: SchemaFailure[];
  /**
   * Only when requested (strict content check): concrete paths of object
   * properties not declared by any schema applying at that location
   * (`properties`, `patternProperties` or an explicit `additionalProperties` schema).
   */
  undeclared?: string[];
}

export interface EvaluateOptions {
  collectUndeclared?: boolean;
}

export interface CompiledSchema {
  /** Dialect actually used, e.g. `https://json-schema.org/draft/2020-12/schema`. */
  readonly dialect: string;
  evaluate(instance: Json, options?: EvaluateOptions): SchemaEvaluation;
}

/** Why a schema could not be compiled. The service turns these into a 422 naming the problem. */
export type SchemaCompileProblem =
  | { kind: 'unresolved_ref'; ref: string }
  | { kind: 'unsupported_dialect'; dialect: string }
  | { kind: 'invalid_schema'; path: string; reason: string }
  | { kind: 'invalid_pattern'; path: string; reason: string };

export class SchemaCompileError extends Error {
  readonly problem: SchemaCompileProblem;
  constructor(problem: SchemaCompileProblem, message: string) {
    super(message);
    this.name = 'SchemaCompileError';
    this.problem = problem;
  }
}

export interface CompileOptions {
  /**
   * Extra schemas addressable by absolute URI (no network, ever). Used by the
   * conformance runner to serve the suite's remotes in memory.
   */
  resources?: ReadonlyMap<string, Json>;
  /** Assert `format` (default true: a verifier is expected to check formats). */
  assertFormats?: boolean;
  /** Default dialect when `$schema` is absent (default 2020-12). */
  defaultDialect?: string;
}

export interface SchemaEngine {
  /** Throws SchemaCompileError for a schema that cannot be used. */
  compile(schema: Json, options?: CompileOptions): CompiledSchema;
}
