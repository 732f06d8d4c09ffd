/**
 * @module The JSON Schema engine: compile once into closures (plus generated
 * code for the common keywords), evaluate many times, counting checks as
 * docs/protocol.md#schema-checks defines them. Also a bounded LRU cache of compiled schemas keyed by
 * the caller (the schema hash).
 *
 * Counting decisions where §2.1 leaves room:
 * - an assertion that only applies to one instance type (`minimum`, `minLength`,
 *   `required`, `minItems`…) is a check only where the instance has that type;
 *   `type`, `enum`, `const` are checks everywhere they are reached;
 * - `false` under additionalProperties / unevaluatedProperties / items /
 *   prefixItems-rest / additionalItems / unevaluatedItems / propertyNames is one
 *   check of that keyword at the object or array, passing when nothing is left
 *   over; `false` reached anywhere else is one failed check (keyword `false`) at
 *   the location it applies to; a `false` root is one failed check, `true` none;
 * - `anyOf`, `oneOf`, `not`, `contains` are one check each, nothing inside
 *   counted; `minContains` and `maxContains` are one more check each (beside
 *   `contains`, which then asks for one match, or none with `minContains: 0`);
 * - `uniqueItems: false` asserts nothing and is not counted;
 * - `if` adds no check of its own (its condition is never counted); the applying
 *   `then`/`else` is transparent;
 * - `required`, `dependentRequired`, the array entries of draft-07 `dependencies`
 *   are one check per location however many names are missing.
 * valid ⇔ passed === total, and failures.length === total − passed.
 */
import type { Json, JsonObject } from '../types.js';
import {
  DEFAULT_WORK_LIMITS,
  SchemaCompileError,
  type WorkLimits,
  type CompileOptions,
  type CompiledSchema,
  type EvaluateOptions,
  type SchemaEngine,
  type SchemaEvaluation,
} from './engine.js';
import { Compiler } from './compiler.js';
import { DIALECT_2020, standardDialect } from './dialects.js';
import { Check, EvalContext, Evaluation, StepLimitError, UNLIMITED, formatPath, type Declaration } from './runtime.js';
import { escapePointerSegment } from './uri.js';
import { isStackOverflow } from './exhaustion.js';

export { DEFAULT_WORK_LIMITS, SchemaCompileError } from './engine.js';
export type {
  CompileOptions, CompiledSchema, EvaluateOptions, SchemaCompileProblem, SchemaEngine, SchemaEvaluation, SchemaFailure,
  SchemaWarning, WorkLimits,
} from './engine.js';
export { warningText } from './unknown.js';

/** Options of createSchemaEngine; every one has a default. */
export interface SchemaEngineOptions {
  /** Default for CompileOptions.assertFormats (true). */
  assertFormats?: boolean;
  /**
   * Generate JavaScript for the common keywords (default true). Off, every
   * keyword runs as a closure: same results, slower; tests compare the two.
   */
  generatedCode?: boolean;
  /**
   * Refuse schemas that are invalid against their dialect's meta-schema (default
   * true). Off only for compiling the built-in meta-schemas themselves.
   */
  metaSchemaCheck?: boolean;
  /** Work limits (defaults: DEFAULT_WORK_LIMITS); over one, compile or evaluate throws too_complex. */
  limits?: Partial<WorkLimits>;
}

/** The standard meta-schemas compiled once per process (they are trusted and never change). */
const metaCompiled = new Map<string, CompiledSchema>();
let metaEngine: SchemaEngine | undefined;

function metaSchemaFor(standard: string): CompiledSchema {
  let c = metaCompiled.get(standard);
  if (c === undefined) {
    // the limit that matters is the caller's (checkAgainstMeta): these are trusted and small
    metaEngine ??= createSchemaEngine({ metaSchemaCheck: false, assertFormats: false, limits: { maxEvaluationSteps: Number.MAX_SAFE_INTEGER } });
    // `{"$ref": <meta URI>}` resolves to the built-in document (never the network)
    c = metaEngine.compile({ $ref: standard }, { defaultDialect: standard });
    metaCompiled.set(standard, c);
  }
  return c;
}

/** `$.a['b.c'][1]` (a failure's instance path) → `#/a/b.c/1`. */
function instancePathToPointer(path: string): string {
  let out = '#';
  let i = 1;
  while (i < path.length) {
    if (path[i] === '.') {
      let j = i + 1;
      while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
      out += '/' + escapePointerSegment(path.slice(i + 1, j));
      i = j;
    } else if (path[i] === '[' && path[i + 1] === "'") {
      let j = i + 2;
      let seg = '';
      while (j < path.length && path[j] !== "'") {
        if (path[j] === '\\') j++;
        seg += path[j];
        j++;
      }
      out += '/' + escapePointerSegment(seg);
      i = j + 2;
    } else {
      const j = path.indexOf(']', i);
      out += '/' + path.slice(i + 1, j);
      i = j + 1;
    }
  }
  return out;
}

/** Throws invalid_schema naming the first location where `schema` breaks its meta-schema. */
function checkAgainstMeta(schema: Json, standard: string, limits: WorkLimits): void {
  if (typeof schema === 'boolean') return;
  // linear in the schema's size; a budget of its own so a small per-request limit still admits small schemas
  const maxSteps = Math.max(limits.maxEvaluationSteps, DEFAULT_WORK_LIMITS.maxEvaluationSteps);
  let r: SchemaEvaluation;
  try {
    r = metaSchemaFor(standard).evaluate(schema, { maxSteps });
  } catch (e) {
    if (!(e instanceof SchemaCompileError) || e.problem.kind !== 'too_complex') throw e;
    const reason = `checking the schema against its meta-schema takes more than ${maxSteps} steps`;
    throw new SchemaCompileError({ kind: 'too_complex', path: '#', limit: 'maxEvaluationSteps', max: maxSteps, reason }, `schema is too complex: ${reason}`);
  }
  if (r.valid) return;
  const f = r.failures[0];
  const path = f === undefined ? '#' : instancePathToPointer(f.instancePath);
  const reason = f === undefined ? 'not valid against its meta-schema' : `${f.keyword}: expected ${f.expected}, found ${f.found}`;
  throw new SchemaCompileError({ kind: 'invalid_schema', path, reason }, `invalid schema at ${path}: ${reason}`);
}

/**
 * Creates a JSON Schema engine: the one the service verifies with, with its deterministic
 * work limits (steps and sizes, never time), format assertion on, and the schema checked
 * against its dialect's meta-schema before use.
 *
 * @example
 * ```ts
 * import { createSchemaEngine, createVerifier } from 'agent-output-verifier';
 *
 * const engine = createSchemaEngine({ limits: { maxEvaluationSteps: 1_000_000 } });
 * const verifier = createVerifier({ engine });
 * ```
 */
export function createSchemaEngine(engineOptions: SchemaEngineOptions = {}): SchemaEngine {
  const limits: WorkLimits = { ...DEFAULT_WORK_LIMITS, ...engineOptions.limits };
  const checkMeta = engineOptions.metaSchemaCheck === false ? undefined : (schema: Json, standard: string) => checkAgainstMeta(schema, standard, limits);
  return {
    compile(schema: Json, options: CompileOptions = {}): CompiledSchema {
      const fallback = options.defaultDialect === undefined ? DIALECT_2020 : standardDialect(options.defaultDialect);
      if (fallback === undefined) {
        throw new SchemaCompileError(
          { kind: 'unsupported_dialect', dialect: options.defaultDialect! },
          `unsupported schema dialect ${options.defaultDialect}`,
        );
      }
      if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
        throw new SchemaCompileError({ kind: 'invalid_schema', path: '#', reason: 'a schema must be an object or a boolean' }, 'invalid schema: a schema must be an object or a boolean');
      }
      const compiler = new Compiler({
        checkMeta,
        limits,
        resources: options.resources,
        assertFormats: options.assertFormats ?? engineOptions.assertFormats ?? true,
        defaultDialect: fallback,
        generatedCode: engineOptions.generatedCode ?? true,
      });
      let root: ReturnType<Compiler['compileRoot']>;
      try {
        root = compiler.compileRoot(schema);
      } catch (e) {
        // A refused allocation is rethrown (verification_aborted), never called a schema problem.
        if (!isStackOverflow(e)) throw e;
        // V8's stack: deeper than any limit a schema can legitimately need
        throw new SchemaCompileError({ kind: 'invalid_schema', path: '#', reason: 'schema nested too deeply' }, 'invalid schema: nested too deeply');
      }
      const slow = root.validate;
      let validate = slow;
      const warnings = compiler.state.warnings;
      const compiledSize = compiler.state.compiledSize;
      // read once here, not per evaluation (the engines of one process share evaluate()'s
      // property-read sites, so one more read per call costs more than it seems: ~2% on a small invoice)
      const defaultMaxSteps = limits.maxEvaluationSteps;
      // generated code costs more than one closure evaluation: only for schemas used again
      let evaluations = 0;
      let spare: EvalContext | null = new EvalContext();
      /**
       * The evaluation again on the closures alone. Generated code compares the step
       * count with the budget at fewer points than the closures (see codegen.ts); they
       * charge the same steps and name the location where the budget ran out.
       */
      const rerun = (instance: Json, ctx: EvalContext, collect: boolean, maxSteps: number): boolean => {
        ctx.reset();
        if (collect) ctx.declared = [];
        ctx.fast = false;
        try {
          let valid: boolean;
          try {
            valid = slow(instance, ctx, null);
          } catch (e) {
            // only a stack overflow means a reference cycle; a refused allocation is the machine's, never a verdict
            if (!isStackOverflow(e)) throw e;
            endlessRecursion(ctx);
            valid = false;
          }
          if (ctx.steps > maxSteps) throw new StepLimitError('#');
          return valid;
        } catch (e) {
          throw e instanceof StepLimitError ? evaluationTooComplex(e.schemaPath, maxSteps) : e;
        } finally {
          ctx.fast = true;
        }
      };
      /** After `validate` threw or went over its budget: the verdict, or the error to throw. */
      const settle = (e: unknown, generated: boolean, instance: Json, ctx: EvalContext, collect: boolean, maxSteps: number): boolean => {
        if (isStackOverflow(e)) {
          endlessRecursion(ctx);
          if (ctx.steps <= maxSteps) return false;
          e = new StepLimitError('#');
        }
        if (!(e instanceof StepLimitError)) throw e;
        if (!generated) throw evaluationTooComplex(e.schemaPath, maxSteps);
        return rerun(instance, ctx, collect, maxSteps);
      };
      return {
        dialect: root.dialect.id,
        compiledSize,
        warnings,
        evaluate(instance: Json, evalOptions?: EvaluateOptions): SchemaEvaluation {
          // counted up to 2 only (then no store per call)
          if (evaluations < 2 && ++evaluations === 2) validate = root.accelerate() ?? validate;
          // one context per compiled schema, left clean by each evaluation (a fresh one if re-entered)
          let ctx = spare;
          if (ctx === null) ctx = new EvalContext();
          else spare = null;
          const maxSteps = evalOptions?.maxSteps ?? defaultMaxSteps;
          ctx.maxSteps = maxSteps;
          ctx.maxFailures = evalOptions?.maxFailures ?? UNLIMITED;
          const collect = evalOptions?.collectUndeclared === true;
          if (collect) ctx.declared = [];
          let valid: boolean;
          let settled = false;
          try {
            valid = validate(instance, ctx, null);
            // charges made after the last check point count too: over means over, on every path
            if (ctx.steps > maxSteps) throw new StepLimitError('#');
          } catch (e) {
            try {
              valid = settle(e, validate !== slow, instance, ctx, collect, maxSteps);
            } catch (out) {
              ctx.reset();
              spare = ctx;
              throw out;
            }
            settled = true;
          }
          const result = new Evaluation(valid, ctx.passed, ctx.total, ctx.failures, ctx.steps);
          if (ctx.omitted > 0) {
            result.omitted = ctx.omitted;
            result.omittedKeywords = ctx.omittedKeywords;
          }
          if (collect) result.undeclared = findUndeclared(instance, ctx.declared!);
          // an evaluation that returned leaves its nesting balanced: only the counts to clear
          if (settled) ctx.reset();
          else ctx.clear();
          spare = ctx;
          return result;
        },
      };
    },
  };
}

/** The failure of an evaluation that overflowed the stack (see endlessRecursion()). */
const ENDLESS_RECURSION = new Check('$ref', '#', 'a schema whose references terminate', 'be checkable by a schema whose references terminate', null);

/**
 * A reference cycle that never descends into the instance (V8's stack overflowed): the whole
 * evaluation is one failed check. What was counted before the overflow is discarded: how far it
 * got depends on the stack's size (the machine, the thread, closures or generated code), and a
 * verdict must not (the same request gave 1161/1162 on a first, closure evaluation and 0/1 later).
 */
function endlessRecursion(ctx: EvalContext): void {
  ctx.passed = 0;
  ctx.total = 1;
  ctx.omitted = 0;
  ctx.omittedKeywords = [];
  if (ctx.declared !== null) ctx.declared = [];
  ctx.failures = [ENDLESS_RECURSION, 'endless recursion', [], -1];
}

function evaluationTooComplex(path: string, max: number): SchemaCompileError {
  const reason = `checking the output against the schema takes more than ${max} steps (keyword evaluations and pattern matching over the output)`;
  return new SchemaCompileError({ kind: 'too_complex', path, limit: 'maxEvaluationSteps', max, reason }, `schema at ${path} is too complex: ${reason}`);
}

type Declared = string | readonly string[] | true;

function declares(what: Declared, key: string): boolean {
  return what === true || (typeof what === 'string' ? what === key : what.includes(key));
}

/** Every object property no applying schema declared, as concrete paths (not descending into undeclared values). */
/** Several declarations for one object (distinct from a key list, which is also an array). */
class Many {
  constructor(readonly items: Declared[]) {}
}

function findUndeclared(instance: Json, list: Declaration[]): string[] {
  const byObject = new Map<object, Declared | Many>();
  for (let i = 0; i < list.length; i += 2) {
    const obj = list[i] as object;
    const what = list[i + 1] as Declared;
    const cur = byObject.get(obj);
    if (cur === undefined) byObject.set(obj, what);
    else if (cur instanceof Many) cur.items.push(what);
    else byObject.set(obj, new Many([cur, what]));
  }
  const out: string[] = [];
  const path: Array<string | number> = [];
  const walk = (v: Json): void => {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        if (typeof item !== 'object' || item === null) continue;
        path.push(i);
        walk(item);
        path.pop();
      }
      return;
    }
    const o = v as JsonObject;
    const d = byObject.get(o);
    for (const key of Object.keys(o)) {
      let ok = false;
      if (d instanceof Many) {
        for (const w of d.items) if (declares(w, key)) { ok = true; break; }
      } else if (d !== undefined) ok = declares(d, key);
      if (!ok) {
        out.push(formatPath(path, key));
        continue;
      }
      const child = o[key];
      if (typeof child !== 'object' || child === null) continue;
      path.push(key);
      walk(child);
      path.pop();
    }
  };
  if (typeof instance === 'object' && instance !== null) walk(instance);
  return out;
}

export interface SchemaCacheOptions {
  engine: SchemaEngine;
  /** Most compiled schemas kept (least recently used dropped first); default unbounded (bytes bound it). */
  max?: number;
  /**
   * Most bytes kept, as estimated by estimateCompiledBytes() from what each entry
   * holds (default 64 MiB). An entry larger than this is returned but not kept.
   */
  maxBytes?: number;
}

export interface SchemaCache {
  /** The compiled schema for `key`, compiling `schema` on a miss. Throws SchemaCompileError like compile(). */
  get(key: string, schema: Json, options?: CompileOptions): CompiledSchema;
  readonly size: number;
  /** Estimated bytes held (see estimateCompiledBytes). */
  readonly bytes: number;
  clear(): void;
}

/** Bytes per unit of compiled size: closures, keyword records and pattern programs (measured, rounded up). */
const BYTES_PER_COMPILED_UNIT = 400;
/** Fixed part of every entry: the compiled schema object, its contexts, the key. */
const ENTRY_BYTES = 4096;

/** Estimated heap held by a compiled schema, from its compiled size (including generated code). */
function estimateCompiledBytes(c: CompiledSchema, key: string): number {
  return ENTRY_BYTES + 2 * key.length + c.compiledSize * BYTES_PER_COMPILED_UNIT;
}

const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;

export function createSchemaCache(options: SchemaCacheOptions): SchemaCache {
  const { engine } = options;
  const max = options.max === undefined ? Infinity : Math.max(1, Math.floor(options.max));
  const maxBytes = options.maxBytes ?? DEFAULT_CACHE_BYTES;
  const map = new Map<string, { compiled: CompiledSchema; bytes: number }>();
  let bytes = 0;
  // The most recently used key: a hit on it needs no re-insertion, and a run of
  // requests with the same schema is the common case (delete + set costs 100–300 ns).
  let newest: string | undefined;
  return {
    get(key, schema, compileOptions) {
      const hit = map.get(key);
      if (hit !== undefined) {
        if (key !== newest) {
          // Re-insert to mark as most recently used (Map iterates in insertion order).
          map.delete(key);
          map.set(key, hit);
          newest = key;
        }
        return hit.compiled;
      }
      const compiled = engine.compile(schema, compileOptions);
      const size = estimateCompiledBytes(compiled, key);
      if (size > maxBytes) return compiled;
      map.set(key, { compiled, bytes: size });
      bytes += size;
      newest = key;
      while (map.size > max || bytes > maxBytes) {
        const oldest = map.keys().next().value as string;
        bytes -= map.get(oldest)!.bytes;
        map.delete(oldest);
      }
      return compiled;
    },
    get size() {
      return map.size;
    },
    get bytes() {
      return bytes;
    },
    clear() {
      map.clear();
      bytes = 0;
      newest = undefined;
    },
  };
}
