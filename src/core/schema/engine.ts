/**
 * @module The schema-engine interface. The verifier depends only on this, so the
 * engine can be swapped. An engine compiles a JSON Schema once and evaluates
 * instances many times, counting checks as docs/protocol.md#schema-checks defines them.
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
  /** Checks that passed / were evaluated (counting as in docs/protocol.md#schema-checks). passed <= total always. */
  passed: number;
  total: number;
  failures: SchemaFailure[];
  /** Work done, in evaluation steps (WorkLimits.maxEvaluationSteps bounds it). */
  steps: number;
  /**
   * Failures past EvaluateOptions.maxFailures: counted in `total − passed` but
   * not built; `failures.length + omitted === total − passed`.
   */
  omitted?: number;
  /** Keywords of the omitted failures, in first-seen order (for blocking checks). */
  omittedKeywords?: string[];
  /**
   * Only when requested (strict content check): concrete paths of object
   * properties not declared by any schema applying at that location
   * (`properties`, `patternProperties` or an explicit `additionalProperties` schema).
   */
  undeclared?: string[];
}

export interface EvaluateOptions {
  collectUndeclared?: boolean;
  /** A step budget for this evaluation only, in place of the engine's WorkLimits.maxEvaluationSteps. */
  maxSteps?: number;
  /** Build at most this many failures (default: all); the rest are only counted (see SchemaEvaluation.omitted). */
  maxFailures?: number;
}

export interface CompiledSchema {
  /** Dialect actually used, e.g. `https://json-schema.org/draft/2020-12/schema`. */
  readonly dialect: string;
  /**
   * Size of the compiled artefacts in the units of WorkLimits.maxCompiledSize
   * (what a cache weighs it by).
   */
  readonly compiledSize: number;
  /** Problems that do not change any verdict: unknown keywords and formats (typos). */
  readonly warnings: readonly SchemaWarning[];
  evaluate(instance: Json, options?: EvaluateOptions): SchemaEvaluation;
}

/** A schema typo that JSON Schema ignores by design, reported so it cannot pass silently. */
export interface SchemaWarning {
  /** `unknown_keyword` or `unknown_format`. */
  kind: 'unknown_keyword' | 'unknown_format';
  /** JSON Pointer of the keyword, e.g. `#/properties/total/minimun`. */
  schemaPath: string;
  /** The unknown name. */
  name: string;
  /** The closest known name, when one is close. */
  suggestion: string | null;
}

/** Why a schema could not be compiled. The service turns these into a 422 naming the problem. */
export type SchemaCompileProblem =
  | { kind: 'unresolved_ref'; ref: string }
  | { kind: 'unsupported_dialect'; dialect: string }
  | { kind: 'invalid_schema'; path: string; reason: string }
  | { kind: 'invalid_pattern'; path: string; reason: string }
  /**
   * Over a work limit (at compile time or while evaluating): `path` is the schema
   * location (a pattern's keyword for pattern limits), `limit` the setting's name
   * in WorkLimits, `max` its value.
   */
  | { kind: 'too_complex'; path: string; limit: keyof WorkLimits | 'backreferencePaths'; max: number; reason: string };

/**
 * Deterministic work limits, counted in steps and sizes (never time), so a
 * request gets the same answer on every machine. A step is roughly 10 ns of
 * the slowest work it stands for on a small server; see docs/security.md.
 */
export interface WorkLimits {
  /** Subschemas after `$ref` expansion (a recursive reference counted once). */
  maxExpandedSchemaSize: number;
  /** Size of one compiled pattern, counted repetition expanded. */
  maxPatternSize: number;
  /** Compiled artefacts of one schema: subschemas, keywords, pattern sizes, enum/const sizes. */
  maxCompiledSize: number;
  /** Steps of one evaluation: keyword evaluations plus pattern-matching work over the input. */
  maxEvaluationSteps: number;
  /**
   * Distinct Unicode property tables (`\p{…}`, `\P{…}`) of one schema's patterns. Building
   * one scans every code point; counted from the pattern texts before any is built, the
   * same whether a table is already built in this process or not.
   */
  maxPropertyTables: number;
}

export const DEFAULT_WORK_LIMITS: Readonly<WorkLimits> = Object.freeze({
  maxExpandedSchemaSize: 100_000,
  maxPatternSize: 5_000,
  maxCompiledSize: 200_000,
  maxEvaluationSteps: 20_000_000,
  maxPropertyTables: 16,
});

/**
 * Thrown by {@link SchemaEngine.compile} (and by evaluating over a work limit) when a
 * schema cannot be used; `problem` says why, as data.
 *
 * @example
 * ```ts
 * import { createSchemaEngine, SchemaCompileError } from 'agent-output-verifier';
 *
 * try {
 *   createSchemaEngine().compile({ $ref: 'https://example.com/elsewhere.json' });
 * } catch (e) {
 *   if (e instanceof SchemaCompileError) console.log(e.problem.kind); // 'unresolved_ref'
 * }
 * ```
 */
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

/**
 * Compiles JSON Schemas (draft-07, 2019-09 and 2020-12; no network, ever) into
 * compiled schemas that evaluate instances with counted, located failures. Made by
 * createSchemaEngine(); a verifier takes one as its `engine`.
 *
 * @example
 * ```ts
 * import { createSchemaEngine } from 'agent-output-verifier';
 *
 * const schema = createSchemaEngine().compile({ type: 'object', required: ['id'] });
 * const result = schema.evaluate({ name: 'x' });
 * result.valid; // false
 * result.failures[0]?.keyword; // 'required'
 * ```
 */
export interface SchemaEngine {
  /** Throws SchemaCompileError for a schema that cannot be used. */
  compile(schema: Json, options?: CompileOptions): CompiledSchema;
}
