/**
 * @module The verifier: one ParsedRequest in, one Verdict out (docs/protocol.md#checks to #response).
 * Compiles (or fetches from a cache) the schema, runs the schema checks with
 * counting, the built-in integrity checks, content checks, bounds and rules,
 * and hands everything to buildVerdict. Pure: no I/O, no clock.
 */
import { ApiError, invalidRequest } from '../errors.js';
import type { Json, ParsedRequest, Repair, Verdict } from './types.js';
import { applyPatch } from './json-patch.js';
import { schemaFailureRepair } from './repairs.js';
import type { CompiledSchema, EvaluateOptions, SchemaEngine, SchemaEvaluation, SchemaFailure, SchemaWarning } from './schema/engine.js';
import { formatSegments } from './strict-json.js';
import { warningText } from './schema/unknown.js';
import { SchemaCompileError } from './schema/engine.js';
import type { CheckOutcome } from './check-outcome.js';
import { evaluateIntegrity } from './integrity.js';
import { evaluateContent } from './content.js';
import { pushBoundOutcomes } from './bounds.js';
import { RULE_EVALUATORS, ruleCheckId } from './rules/index.js';
import { buildVerdict, DEFAULT_LIST_CAP } from './verdict.js';
import { schemaCompileProblem, schemaPointerField, schemaWarningProblems } from './schema-problem.js';

/** A compiled-schema cache keyed by the caller (the schema hash), e.g. createSchemaCache(). */
export interface SchemaSource {
  get(key: string, schema: Json): CompiledSchema;
}

/**
 * Options of {@link createVerifier}.
 *
 * @example
 * ```ts
 * import { createSchemaEngine, createVerifier, type VerifierOptions } from 'agent-output-verifier';
 *
 * const options: VerifierOptions = { engine: createSchemaEngine(), listCap: 20 };
 * const verifier = createVerifier(options);
 * ```
 */
export interface VerifierOptions {
  /** Compiles the request's `expected_schema`: an engine (createSchemaEngine()), or a cache in front of one keyed by the schema hash. */
  engine: SchemaEngine | SchemaSource;
  /** Entries kept per list (errors, errors_detail, flags, hints); default 100. */
  listCap?: number;
}

/** Per-call options of {@link Verifier.evaluate}. */
export interface VerifyOptions {
  /** Cache key of the schema (its schema_hash). Without it a cache is keyed by the schema's JSON text. */
  schemaKey?: string;
  /**
   * A lower evaluation-step budget for this call than the engine's limit (the HTTP thread's
   * fast path tries small requests under a small budget and hands any over it to the pool).
   * Within the budget the verdict is the same as under the full limit: steps only decide
   * whether the evaluation stops with too_complex, never what it finds.
   */
  maxSteps?: number;
}

/**
 * Verifies parsed requests in-process, with the same checks and the same verdict as the
 * service's `POST /v1/verify`, minus what the service adds around it (verification_id,
 * hashes, time, signature). Made by {@link createVerifier}.
 *
 * @example
 * ```ts
 * import { createSchemaEngine, createVerifier, parseVerificationRequest } from 'agent-output-verifier';
 *
 * const verifier = createVerifier({ engine: createSchemaEngine() });
 * const verdict = verifier.evaluate(parseVerificationRequest(requestText));
 * if (verdict.result === 'fail') console.log(verdict.blocking_checks, verdict.hints);
 * ```
 */
export interface Verifier {
  /**
   * The verdict on one request: every check run, nothing signed or stored (that is the
   * receipt issuer's and the pipeline's work). Throws ApiError('invalid_request') when
   * the schema cannot be compiled.
   */
  evaluate(parsed: ParsedRequest, options?: VerifyOptions): Verdict;
  /** @deprecated Use {@link Verifier.evaluate}; the same function under its old name. */
  verify(parsed: ParsedRequest, options?: VerifyOptions): Verdict;
  /** The compiled schema (same errors as evaluate), for callers that want to warm a cache. */
  compile(schema: Json, options?: VerifyOptions): CompiledSchema;
}

function isSource(e: SchemaEngine | SchemaSource): e is SchemaSource {
  return typeof (e as SchemaSource).get === 'function';
}

/**
 * Creates a verifier: one {@link ParsedRequest} in, one {@link Verdict} out. Pure (no I/O,
 * no clock), so the verdict depends on the request alone. `evaluate` throws ApiError
 * (`invalid_request`, or `too_complex` over the engine's work limits) when the request's
 * schema cannot be used.
 *
 * @example
 * ```ts
 * import { createSchemaEngine, createVerifier, validateRequestValue } from 'agent-output-verifier';
 *
 * const verifier = createVerifier({ engine: createSchemaEngine() });
 * const verdict = verifier.evaluate(
 *   validateRequestValue({
 *     task_id: 'invoice-42',
 *     expected_schema: { type: 'object', required: ['total'], properties: { total: { type: 'number' } } },
 *     submitted_output: { total: '12.50' },
 *   }),
 * );
 * verdict.result; // 'fail': total is a string
 * ```
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const { engine } = options;
  const listCap = options.listCap ?? DEFAULT_LIST_CAP;
  // A response lists at most listCap failures: the rest are only counted, never built.
  // Shared and never mutated by the engine: no options object per request.
  const plain: EvaluateOptions = Object.freeze({ maxFailures: Math.max(1, listCap) });
  const collecting: EvaluateOptions = Object.freeze({ maxFailures: Math.max(1, listCap), collectUndeclared: true });
  // Decided once, not per request.
  const source = isSource(engine) ? engine : null;

  // The last keyed lookup. A cache hit re-inserts its entry to mark it recently
  // used, which costs more than the rest of a small verification; runs of
  // requests with the same schema key (the same schema, by the key's contract)
  // skip the cache. Nothing else changes: a key always yields the same schema.
  let lastKey: string | undefined;
  let lastCompiled: CompiledSchema | undefined;

  const compile = (schema: Json, opts?: VerifyOptions): CompiledSchema => {
    try {
      if (source !== null) {
        const key = opts?.schemaKey;
        if (key === undefined) return source.get(JSON.stringify(schema), schema);
        if (key === lastKey && lastCompiled !== undefined) return lastCompiled;
        const compiled = source.get(key, schema);
        lastKey = key;
        lastCompiled = compiled;
        return compiled;
      }
      return (engine as SchemaEngine).compile(schema);
    } catch (e) {
      throw asApiError(e);
    }
  };

  const verifier: Verifier = {
    compile,
    evaluate(parsed, opts) {
      const request = parsed.request;
      const compiled = compile(request.expected_schema, opts);
      // A typo checks nothing: with strict_schema the caller asked for a 422 instead of a verdict.
      if (request.strict_schema && compiled.warnings.length > 0) throw invalidRequest(schemaWarningProblems(compiled.warnings));
      const output = request.submitted_output;
      const strict = request.strict_content_check;
      let schema: SchemaEvaluation;
      try {
        const base = strict ? collecting : plain;
        schema = compiled.evaluate(output, opts?.maxSteps === undefined ? base : { ...base, maxSteps: opts.maxSteps });
      } catch (e) {
        throw asApiError(e);
      }

      // Plain pushes and indexed loops: no spread or iterator objects per request.
      const outcomes: CheckOutcome[] = evaluateIntegrity(parsed.integrity);
      if (strict) {
        const content = evaluateContent(output, schema.undeclared ?? []);
        for (let i = 0; i < content.length; i++) outcomes.push(content[i]);
      }
      if (request.bounds) pushBoundOutcomes(request.bounds, output, outcomes);
      const rules = request.rules;
      if (rules) {
        for (let i = 0; i < rules.length; i++) {
          const rule = rules[i];
          outcomes.push({
            check: ruleCheckId(rule.type),
            kind: 'gated',
            field: rule.field,
            failures: RULE_EVALUATORS[rule.type](rule, output),
          });
        }
      }
      const schemaRepairs = schema.failures.length === 0 ? undefined : repairSchemaFailures(compiled, schema.failures, request.expected_schema, output, opts?.maxSteps);
      const verdict = buildVerdict({ request, schema, outcomes, listCap, schemaRepairs });
      if (compiled.warnings.length > 0) addSchemaWarnings(verdict, compiled.warnings, listCap);
      return verdict;
    },
    verify: (parsed, opts) => verifier.evaluate(parsed, opts),
  };
  return verifier;
}

/** A schema problem as the coded error a client sees: too_complex for work limits, else invalid_request. */
function asApiError(e: unknown): unknown {
  if (!(e instanceof SchemaCompileError)) return e;
  const field = schemaCompileProblem(e);
  if (e.problem.kind === 'too_complex') return new ApiError('too_complex', { fields: [field] });
  return invalidRequest([field]);
}

/**
 * Schema typos (unknown keywords and formats) as warning flags at their schema
 * location: never a check, never a change of result (the verdict is what JSON
 * Schema says), but never silent either: a pass says first that the schema must
 * be reviewed, and payment is offered only after that review.
 */
function addSchemaWarnings(verdict: Verdict, warnings: readonly SchemaWarning[], listCap: number): void {
  verdict.schema_warnings = warnings.length;
  if (verdict.result === 'pass') {
    verdict.next_actions = [
      { action: 'review_schema_warnings', count: warnings.length },
      { action: 'attach_receipt', for: 'seller' },
      { action: 'proceed_to_payment', for: 'buyer', after: 'review_schema_warnings' },
    ];
  }
  for (const w of warnings) {
    if (verdict.flags.length < listCap) {
      verdict.flags.push({ check: `schema:${w.kind}`, field: schemaPointerField(w.schemaPath), severity: 'warning', detail: warningText(w) });
    }
    verdict.flags_total++;
    verdict.warnings_total++;
  }
  verdict.flags_omitted = verdict.flags_total - verdict.flags.length;
}

/** `a` is `b` or one of its ancestors, as concrete locations (`$.a` of `$.a[1].b`). */
function encloses(a: string, b: string): boolean {
  return a === b || (b.startsWith(a) && (b[a.length] === '.' || b[a.length] === '['));
}

/** The location a determined patch writes to: its one operation's path, as the verifier prints locations. */
function patchedLocation(failure: SchemaFailure, repair: Repair & { certainty: 'determined' }): string {
  const op = repair.patch[0];
  if (failure.keyword === 'required' && op.op === 'add') {
    const name = op.path.slice(op.path.lastIndexOf('/') + 1).replace(/~1/g, '/').replace(/~0/g, '~');
    return formatSegments([name], failure.instancePath);
  }
  return failure.instancePath;
}

/**
 * The repairs of the listed schema failures. Determined ones are confirmed by the engine:
 * all are applied to a copy of the output and the schema is evaluated again; a repair stays
 * only when its check now passes and no check that passed before fails at, above or below
 * the value it changed. Deterministic (steps, not time): when the confirmation is over the
 * step limit the determined repairs are dropped; under a caller's smaller budget (`maxSteps`,
 * the HTTP thread's fast path) the error goes up, so the full run decides.
 */
function repairSchemaFailures(
  compiled: CompiledSchema,
  failures: readonly SchemaFailure[],
  schemaJson: Json,
  output: Json,
  maxSteps: number | undefined,
): Array<Repair | undefined> {
  const repairs = failures.map((f) => schemaFailureRepair(f, schemaJson, output));
  const applied: number[] = [];
  let patched: unknown = output;
  for (let i = 0; i < repairs.length; i++) {
    const r = repairs[i];
    if (r?.certainty !== 'determined') continue;
    try {
      patched = applyPatch(patched, r.patch);
      applied.push(i);
    } catch {
      repairs[i] = undefined;
    }
  }
  if (applied.length === 0) return repairs;
  let after: SchemaEvaluation;
  try {
    after = compiled.evaluate(patched as Json, maxSteps === undefined ? {} : { maxSteps });
  } catch (e) {
    if (maxSteps !== undefined) throw e;
    for (const i of applied) repairs[i] = undefined;
    return repairs;
  }
  const key = (f: SchemaFailure) => `${f.keyword}\u0000${f.instancePath}\u0000${f.expected}\u0000${f.found}`;
  const before = new Set(failures.map(key));
  const introduced = after.failures.filter((f) => !before.has(key(f)));
  for (const i of applied) {
    const f = failures[i];
    const where = patchedLocation(f, repairs[i] as Repair & { certainty: 'determined' });
    // required and additionalProperties fail once per property at one location: told apart by expected/found.
    const exact = f.keyword === 'required' || f.keyword === 'additionalProperties';
    const still = after.failures.some((a) => a.keyword === f.keyword && a.instancePath === f.instancePath && (!exact || key(a) === key(f)));
    const harmed = introduced.some((a) => encloses(a.instancePath, where) || encloses(where, a.instancePath));
    if (still || harmed || (after.omitted ?? 0) > 0) repairs[i] = undefined;
  }
  return repairs;
}
