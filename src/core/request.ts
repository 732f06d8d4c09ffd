/**
 * @module The verification request (docs/protocol.md#request): strict parsing of a body, or
 * validation of an already-parsed value (MCP tool arguments), into a
 * ParsedRequest with every default filled in. Any problem is a 422
 * (ApiError 'invalid_request') listing every field to fix — all problems at
 * once, never the caller's values.
 *
 * Duplicate keys and unsafe integers are request errors outside
 * `submitted_output`, but only integrity findings inside it (docs/protocol.md#request, #integrity-checks).
 */
import type { FieldProblem } from '../errors.js';
import { invalidRequest } from '../errors.js';
import type { Detail, Json, OutputIntegrity, ParsedRequest, VerificationRequest } from './types.js';
import type { JsonPathSegments } from './strict-json.js';
import { DEFAULT_MAX_DEPTH, formatSegments, parseStrictJson, StrictJsonError } from './strict-json.js';
import { validateBounds, validateRules } from './request-rules.js';

export interface ParseRequestOptions {
  /** Maximum nesting depth of the body (default 64). */
  maxDepth?: number;
}

interface Findings {
  duplicateKeys: Array<{ segments: JsonPathSegments; key: string }>;
  /** Integers written out in digits beyond ±(2^53−1): a request error outside the output. */
  unsafeIntegers: JsonPathSegments[];
  /**
   * Other numbers whose value is a whole number beyond ±(2^53−1) (`1e16`): only
   * an integrity finding inside the output, where the value is what is judged.
   */
  largeNumbers?: JsonPathSegments[];
}

const TOP_LEVEL = [
  'task_id',
  'agent_id',
  'expected_schema',
  'submitted_output',
  'strict_content_check',
  'bounds',
  'rules',
  'enforce_rules',
  'detail',
  'strict_schema',
] as const;
const TOP_LEVEL_SET = new Set<string>(TOP_LEVEL);

/** A request field path in error output: `rules[0].type`, `expected_schema.properties`. */
export function requestField(segments: JsonPathSegments): string {
  if (segments.length === 0) return 'body';
  const s = formatSegments(segments, '');
  return s.startsWith('.') ? s.slice(1) : s;
}

const SAFE_FIX = 'Send integers within ±9007199254740991 (2^53−1); send larger ones as strings.';

/**
 * Parses and validates a verification request body (its JSON text, or the UTF-8 bytes of
 * it) exactly as the service does: strict JSON (duplicate keys inside the output are kept
 * as integrity findings, outside it they are refused), every field checked, defaults
 * filled in. Throws ApiError(`invalid_request`) with one entry in `fields` per problem.
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs';
 * import { parseVerificationRequest } from 'agent-output-verifier';
 *
 * const parsed = parseVerificationRequest(readFileSync('examples/invoice/request.json'));
 * parsed.request.enforce_rules; // false unless the request set it
 * ```
 */
export function parseVerificationRequest(body: string | Uint8Array, options: ParseRequestOptions = {}): ParsedRequest {
  let parsed;
  try {
    parsed = parseStrictJson(body, { maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH });
  } catch (e) {
    if (e instanceof StrictJsonError) throw invalidRequest([strictJsonProblem(e, options.maxDepth ?? DEFAULT_MAX_DEPTH)]);
    throw e;
  }
  return buildParsedRequest(parsed.value, parsed);
}

/**
 * Validates a request that was already parsed elsewhere (e.g. MCP tool
 * arguments): it must be plain JSON (finite numbers, well-formed strings,
 * plain objects and arrays, depth within the limit). Duplicate keys cannot be
 * detected any more; integers are judged by value (see findUnsafeIntegers).
 * Throws ApiError(`invalid_request`) as parseVerificationRequest does.
 *
 * @example
 * ```ts
 * import { validateRequestValue } from 'agent-output-verifier';
 *
 * const parsed = validateRequestValue({
 *   task_id: 'summary-7',
 *   expected_schema: { type: 'object', required: ['title'] },
 *   submitted_output: { title: 'Q3 report' },
 * });
 * ```
 */
export function validateRequestValue(value: unknown, options: ParseRequestOptions = {}): ParsedRequest {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const unsafeIntegers: JsonPathSegments[] = [];
  const problem = checkJsonValue(value, maxDepth, unsafeIntegers);
  if (problem) throw invalidRequest([problem]);
  return buildParsedRequest(value as Json, { duplicateKeys: [], unsafeIntegers });
}

function strictJsonProblem(e: StrictJsonError, maxDepth: number): FieldProblem {
  const field = requestField(e.segments);
  switch (e.kind) {
    case 'lone_surrogate':
      return {
        field,
        problem: 'contains a lone surrogate (an unpaired UTF-16 code unit)',
        fix: 'Send well-formed Unicode: use surrogate escapes only as valid pairs, or remove them.',
      };
    case 'non_finite':
      return {
        field,
        problem: 'is a number too large to represent (it is not finite)',
        fix: 'Send finite numbers (magnitude below 1.8e308); send huge values as strings.',
      };
    case 'too_deep':
      return {
        field,
        problem: `nests deeper than the limit of ${maxDepth} levels`,
        fix: `Flatten the data to at most ${maxDepth} levels of nested arrays/objects.`,
      };
    default:
      return {
        field: 'body',
        problem: `is not valid JSON (${e.message})`,
        fix: 'Send a single well-formed JSON object (RFC 8259), UTF-8 encoded.',
      };
  }
}

function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** Walk an in-memory value; returns the first reason it is not strict JSON. */
function checkJsonValue(root: unknown, maxDepth: number, unsafe: JsonPathSegments[]): FieldProblem | null {
  const path: Array<string | number> = [];
  const NOT_JSON_FIX = 'Send only JSON values: objects, arrays, strings, finite numbers, booleans and null.';
  const visit = (v: unknown, depth: number): FieldProblem | null => {
    switch (typeof v) {
      case 'string':
        return isWellFormed(v)
          ? null
          : { field: requestField(path), problem: 'contains a lone surrogate (an unpaired UTF-16 code unit)', fix: 'Send well-formed Unicode.' };
      case 'boolean':
        return null;
      case 'number':
        if (!Number.isFinite(v)) return { field: requestField(path), problem: 'is not a finite number', fix: NOT_JSON_FIX };
        // Past 2^53: readers disagree on it. Outside the output only what would be
        // written out in digits (below 1e21) counts; inside, the value is judged.
        if (Number.isInteger(v) && !Number.isSafeInteger(v) && (Math.abs(v) < 1e21 || path[0] === 'submitted_output')) unsafe.push(path.slice());
        return null;
      case 'object': {
        if (v === null) return null;
        if (depth + 1 > maxDepth) {
          return { field: requestField(path), problem: `nests deeper than the limit of ${maxDepth} levels`, fix: `Flatten the data to at most ${maxDepth} levels.` };
        }
        if (Array.isArray(v)) {
          for (let i = 0; i < v.length; i++) {
            path.push(i);
            const p = visit(v[i], depth + 1);
            path.pop();
            if (p) return p;
          }
          return null;
        }
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) return { field: requestField(path), problem: 'is not a JSON value', fix: NOT_JSON_FIX };
        for (const k of Object.keys(v)) {
          if (!isWellFormed(k)) {
            return { field: requestField(path), problem: 'has a key with a lone surrogate', fix: 'Send well-formed Unicode.' };
          }
          path.push(k);
          const p = visit((v as Record<string, unknown>)[k], depth + 1);
          path.pop();
          if (p) return p;
        }
        return null;
      }
      default:
        return { field: requestField(path), problem: 'is not a JSON value', fix: NOT_JSON_FIX };
    }
  };
  return visit(root, 0);
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** Longest task_id / agent_id, in Unicode code points (what a person calls characters). */
export const MAX_ID_LENGTH = 200;

/** Length in Unicode code points. */
function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

// C0 controls and DEL: invisible in logs and pages, and a line break in an id forges log lines.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The same character rule as a JSON Schema `pattern` (ECMA-262 source), for the
 * published request schemas (src/service/wire-schemas.ts): no C0 control and no DEL.
 */
export const ID_PATTERN = '^[^\\u0000-\\u001f\\u007f]*$';

/**
 * The character part of the id rule, for any id (also one the service issued, such as a
 * verification id in a URL path): no control character, no lone surrogate (a text no
 * database stores as sent and RFC 8785 cannot write). The problem, or null.
 */
export function idCharactersProblem(value: string): string | null {
  if (CONTROL.test(value)) return 'contains a control character (U+0000-U+001F or U+007F)';
  if (!isWellFormed(value)) return 'contains a lone surrogate (an unpaired UTF-16 code unit)';
  return null;
}

/**
 * The one rule for task_id and agent_id, wherever an id arrives (request body, URL
 * path, tool arguments): a string of 1 to 200 code points without control characters
 * (U+0000–U+001F, U+007F) or lone surrogates. Returns the problem, or null when the id is acceptable.
 */
export function identifierProblem(field: 'task_id' | 'agent_id', value: unknown): FieldProblem | null {
  const fix = `Send '${field}' as a string of 1 to ${MAX_ID_LENGTH} characters without control characters.`;
  if (typeof value !== 'string') return { field, problem: 'must be a string', fix };
  const n = codePoints(value);
  if (n < 1) return { field, problem: 'must not be empty', fix };
  if (n > MAX_ID_LENGTH) return { field, problem: `is longer than ${MAX_ID_LENGTH} characters`, fix };
  const problem = idCharactersProblem(value);
  return problem === null ? null : { field, problem, fix };
}

function checkId(body: Record<string, Json>, key: 'task_id' | 'agent_id', required: boolean, problems: FieldProblem[]): string | null {
  if (!hasOwn(body, key) || (!required && body[key] === null)) {
    if (required) problems.push({ field: key, problem: 'is required', fix: `Send '${key}' as a string of 1 to ${MAX_ID_LENGTH} characters.` });
    return null;
  }
  const v = body[key];
  const problem = identifierProblem(key, v);
  if (problem !== null || typeof v !== 'string') {
    if (problem) problems.push(problem);
    return null;
  }
  return v;
}

function checkBoolean(body: Record<string, Json>, key: string, problems: FieldProblem[]): boolean {
  if (!hasOwn(body, key) || body[key] === null) return false;
  if (typeof body[key] !== 'boolean') {
    problems.push({ field: key, problem: 'must be a boolean', fix: `Send true or false, or omit '${key}' (default false).` });
    return false;
  }
  return body[key] as boolean;
}

function buildParsedRequest(value: Json, findings: Findings): ParsedRequest {
  if (!isObject(value)) {
    throw invalidRequest([{ field: 'body', problem: 'must be a JSON object', fix: 'Send the request as a JSON object with task_id, expected_schema and submitted_output.' }]);
  }
  const problems: FieldProblem[] = [];
  const integrity: OutputIntegrity = { duplicateKeys: [], unsafeIntegers: [] };

  // Findings of the strict parser: inside the output they are integrity facts, elsewhere request errors.
  for (const d of findings.duplicateKeys) {
    if (d.segments.length > 0 && d.segments[0] === 'submitted_output') {
      integrity.duplicateKeys.push({ path: formatSegments(d.segments.slice(1)), key: d.key });
    } else {
      problems.push({
        field: requestField([...d.segments, d.key]),
        problem: 'appears more than once in the same object',
        fix: 'Send each key once per object.',
      });
    }
  }
  for (const segs of findings.unsafeIntegers) {
    if (segs.length > 0 && segs[0] === 'submitted_output') {
      integrity.unsafeIntegers.push(formatSegments(segs.slice(1)));
    } else {
      problems.push({ field: requestField(segs), problem: 'is an integer outside ±(2^53−1)', fix: SAFE_FIX });
    }
  }
  if (findings.largeNumbers !== undefined) {
    for (const segs of findings.largeNumbers) {
      if (segs.length > 0 && segs[0] === 'submitted_output') integrity.unsafeIntegers.push(formatSegments(segs.slice(1)));
    }
  }

  for (const k of Object.keys(value)) {
    if (!TOP_LEVEL_SET.has(k)) {
      problems.push({ field: requestField([k]), problem: 'is not a known request field', fix: `Remove it; the request fields are: ${TOP_LEVEL.join(', ')}.` });
    }
  }

  const task_id = checkId(value, 'task_id', true, problems);
  const agent_id = checkId(value, 'agent_id', false, problems);

  let expected_schema: Json = true;
  if (!hasOwn(value, 'expected_schema')) {
    problems.push({ field: 'expected_schema', problem: 'is required', fix: 'Send the JSON Schema the output must satisfy (an object, or true/false).' });
  } else if (typeof value.expected_schema !== 'boolean' && !isObject(value.expected_schema)) {
    problems.push({ field: 'expected_schema', problem: 'must be a JSON Schema (an object or a boolean)', fix: 'Send the schema as a JSON object such as {"type": "object", ...}.' });
  } else {
    expected_schema = value.expected_schema;
  }

  if (!hasOwn(value, 'submitted_output')) {
    problems.push({ field: 'submitted_output', problem: 'is required', fix: 'Send the output to check (any JSON value).' });
  }

  const strict_content_check = checkBoolean(value, 'strict_content_check', problems);
  const enforce_rules = checkBoolean(value, 'enforce_rules', problems);
  const strict_schema = checkBoolean(value, 'strict_schema', problems);

  let detail: Detail = 'full';
  if (hasOwn(value, 'detail') && value.detail !== null) {
    if (value.detail !== 'full' && value.detail !== 'compact') {
      problems.push({ field: 'detail', problem: 'is not one of the allowed values', fix: "Use 'full' or 'compact'." });
    } else {
      detail = value.detail;
    }
  }

  const bounds = validateBounds(value.bounds, problems);
  const rules = validateRules(value.rules, problems);

  if (problems.length > 0) throw invalidRequest(problems);

  const request: VerificationRequest = {
    task_id: task_id as string,
    agent_id,
    expected_schema,
    submitted_output: value.submitted_output,
    strict_content_check,
    bounds,
    rules,
    enforce_rules,
    detail,
    strict_schema,
  };
  return {
    request,
    suppliedBounds: hasOwn(value, 'bounds') ? value.bounds : null,
    suppliedRules: hasOwn(value, 'rules') ? value.rules : null,
    integrity,
  };
}
