/**
 * @module The verifier: one ParsedRequest in, one Verdict out (SPEC §2–§4).
 * Compiles (or fetches from a cache) the schema, runs the schema checks with
 * counting, the built-in integrity checks, content checks, bounds and rules,
 * and hands everything to buildVerdict. Pure: no I/O, no clock.
 */
import { invalidRequest } from '../errors.js';
import type { Json, ParsedRequest, Verdict } from './types.js';
import type { CompiledSchema, SchemaEngine } from './schema/engine.js';
import { SchemaCompileError } from './schema/engine.js';
import type { CheckOutcome } from './check-outcome.js';
import { evaluateIntegrity } from './integrity.js';
import { evaluateContent } from './content.js';
import { evaluateBounds } from './bounds.js';
import { RULE_EVALUATORS, ruleCheckId } from './rules/index.js';
import { buildVerdict, DEFAULT_LIST_CAP } from './verdict.js';
import { schemaCompileProblem } from './schema-problem.js';

/** A compiled-schema cache keyed by the caller (the schema hash), e.g. createSchemaCache(). */
export interface SchemaSource {
  get(key: string, schema: Json): CompiledSchema;
}

export interface VerifierOptions {
  engine: SchemaEngine | SchemaSource;
  /** Entries kept per list (errors, errors_detail, flags, hints); default 100. */
  listCap?: number;
}

export interface VerifyOptions {
  /** Cache key of the schema (its schema_hash). Without it a cache is keyed by the schema's JSON text. */
  schemaKey?: string;
}

export interface Verifier {
  /** Throws ApiError('invalid_request') when the schema cannot be compiled. */
  verify(parsed: ParsedRequest, options?: VerifyOptions): Verdict;
  /** The compiled schema (same errors as verify), for callers that want to warm a cache. */
  compile(schema: Json, options?: VerifyOptions): CompiledSchema;
}

function isSource(e: SchemaEngine | SchemaSource): e is SchemaSource {
  return typeof (e as SchemaSource).get === 'function';
}

export function createVerifier(options: VerifierOptions): Verifier {
  const { engine } = options;
  const listCap = options.listCap ?? DEFAULT_LIST_CAP;

  const compile = (schema: Json, opts: VerifyOptions = {}): CompiledSchema => {
    try {
      if (isSource(engine)) return engine.get(opts.schemaKey ?? JSON.stringify(schema), schema);
      return engine.compile(schema);
    } catch (e) {
      if (e instanceof SchemaCompileError) throw invalidRequest([schemaCompileProblem(e)]);
      throw e;
    }
  };

  return {
    compile,
    verify(parsed, opts) {
      const { request } = parsed;
      const compiled = compile(request.expected_schema, opts);
      const output = request.submitted_output;
      const schema = compiled.evaluate(output, request.strict_content_check ? { collectUndeclared: true } : undefined);

      const outcomes: CheckOutcome[] = evaluateIntegrity(parsed.integrity);
      if (request.strict_content_check) outcomes.push(...evaluateContent(output, schema.undeclared ?? []));
      outcomes.push(...evaluateBounds(request.bounds, output));
      for (const rule of request.rules ?? []) {
        outcomes.push({
          check: ruleCheckId(rule.type),
          kind: 'gated',
          field: rule.field,
          failures: RULE_EVALUATORS[rule.type](rule, output),
        });
      }
      return buildVerdict({ request, schema, outcomes, listCap });
    },
  };
}
