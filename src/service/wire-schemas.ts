/**
 * @module JSON Schemas of the wire formats (docs/protocol.md#request, #response,
 * #signature, #errors: the request, the receipt, the trust score, the error), written once for every surface that advertises them: OpenAPI
 * (src/http/schemas.ts) and the MCP tools' input/output schemas
 * (src/mcp/tool-definitions.ts).
 *
 * The TS types the code produces are the one source of the wire formats (the request
 * src/core/types.ts, the response src/core/response.ts, the error src/errors.ts, the
 * record src/core/records.ts; the client's types are derived from them): each schema
 * here `satisfies ObjectSchemaOf<T>` of its type, so a property added, renamed or dropped
 * on one side and not the other fails the build.
 *
 * They describe the contract; they are not its validator. Requests are checked by
 * the core's strict parser, which gives the coded error with `fields[].fix`. The
 * request schema accepts and rejects what that validator does (a property test,
 * src/service/wire-schemas.test.ts, holds them together), except for conditions
 * JSON Schema cannot state simply, left to the validator: path syntax, which
 * references a rule type takes (exactly one of its pair), a bound's min ≤ max and
 * at least one of them, integers beyond ±(2^53−1), lone surrogates and depth.
 *
 * No `$schema`, `$ref` or `format` here: validating MCP clients (the official SDK
 * compiles outputSchema with a default Ajv) must be able to compile them as is.
 * Surfaces that can afford more (OpenAPI ids, formats, examples) add it on top.
 */
import { ID_PATTERN, MAX_ID_LENGTH } from '../core/request.js';
import { DEFAULT_TOLERANCE } from '../core/request-rules.js';
import type { FullResponse } from '../core/response.js';
import { RULE_TYPES, type Bound, type Rule, type VerificationRequest } from '../core/types.js';
import type { ErrorBody } from '../errors.js';
import type { SignedResponse } from '../receipts/v1/attestation.js';

/**
 * The shape a schema of the TS type `T` must have, so the compiler holds the schemas to the types
 * the code produces (and the client reads): every property it declares is a property of `T` (an
 * excess property is an error), every required one too, and with `All` it declares all of them.
 */
export type ObjectSchemaOf<T, All extends boolean = true> = {
  $id?: string;
  type: 'object';
  description?: string;
  additionalProperties?: unknown;
  required?: readonly (keyof T)[];
  properties: All extends true ? { [K in keyof T]-?: unknown } : { [K in keyof T]?: unknown };
};

// The id rule of src/core/request.ts (identifierProblem): 1 to 200 code points (JSON Schema
// lengths count code points too), no control characters.
const ID_STRING = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, pattern: ID_PATTERN } as const;

const BOUND_SCHEMA = {
  type: 'object',
  description: 'Inclusive numeric range every value at the path must fall in.',
  properties: {
    min: { type: ['number', 'null'] },
    max: { type: ['number', 'null'] },
    if_present: { type: ['boolean', 'null'], default: false, description: 'Pass when the path yields no value.' },
  },
  additionalProperties: false,
} as const satisfies ObjectSchemaOf<Bound>;

// Optional members are nullable: the parser treats null as absent, and the canonical request
// (request_hash, docs/protocol.md#hashes) writes every absent reference as null.
const RULE_SCHEMA = {
  type: 'object',
  required: ['type', 'field'],
  properties: {
    type: {
      type: 'string',
      enum: [...RULE_TYPES],
      description:
        'sum_equals: numbers at field sum to equals_field / equals (within tolerance). gte / lte: every number at field is >= / <= other_field / value. ' +
        'exists_in: every value at field occurs in in_field / values. unique: values at field are pairwise distinct.',
    },
    field: { type: 'string', description: "Dotted path, '[]' expands arrays: 'line_items[].line_total'." },
    equals_field: { type: ['string', 'null'], description: 'sum_equals: path of the expected sum (xor equals).' },
    equals: { type: ['number', 'null'], description: 'sum_equals: constant expected sum (xor equals_field).' },
    other_field: { type: ['string', 'null'], description: 'gte/lte: path to compare with (xor value).' },
    value: { type: ['number', 'null'], description: 'gte/lte: constant to compare with (xor other_field).' },
    in_field: { type: ['string', 'null'], description: 'exists_in: path of the allowed values (xor values).' },
    values: { type: ['array', 'null'], description: 'exists_in: constant list of allowed values (xor in_field).' },
    tolerance: { type: ['number', 'null'], minimum: 0, default: DEFAULT_TOLERANCE, description: 'sum_equals: absolute tolerance.' },
    if_present: { type: ['boolean', 'null'], default: false, description: 'Pass when field yields no value.' },
  },
  additionalProperties: false,
} as const satisfies ObjectSchemaOf<Rule>;

/** A small valid request, for discovery documents (agent card, llms.txt, x402 bazaar). */
export const VERIFICATION_REQUEST_EXAMPLE = {
  task_id: 'invoice-42',
  agent_id: 'seller-7',
  expected_schema: {
    type: 'object',
    required: ['invoice_id', 'total'],
    properties: { invoice_id: { type: 'string', pattern: '^INV-[0-9]{4}$' }, total: { type: 'number' } },
  },
  submitted_output: { invoice_id: 'INV-0042', total: 135 },
} as const;

/** The verification request (docs/protocol.md#request). */
export const VERIFICATION_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    task_id: { ...ID_STRING, description: "Your id for the task, e.g. 'inv-2026-0042'." },
    agent_id: {
      ...ID_STRING,
      type: ['string', 'null'],
      description: "Who produced the output (an unauthenticated label). Ids starting with 'test-' are recorded but never scored.",
    },
    expected_schema: {
      type: ['object', 'boolean'],
      description: 'The JSON Schema the output must satisfy. Draft 2020-12 unless $schema says 2019-09 or draft-07. No remote $ref.',
    },
    submitted_output: { description: 'The agent output to check: any JSON value.' },
    strict_content_check: {
      type: ['boolean', 'null'],
      default: false,
      description: 'Also fail undeclared fields and placeholder strings (TODO, TBD, N/A, lorem ipsum, {{...}}...).',
    },
    bounds: {
      type: ['object', 'null'],
      description: 'Numeric ranges by path, e.g. {"line_items[].qty": {"min": 1, "max": 1000}}.',
      additionalProperties: BOUND_SCHEMA,
    },
    rules: { type: ['array', 'null'], description: 'Cross-field rules.', items: RULE_SCHEMA },
    enforce_rules: {
      type: ['boolean', 'null'],
      default: false,
      description: 'When true, failed rules and bounds fail the result; when false they are warnings.',
    },
    detail: { type: ['string', 'null'], enum: ['full', 'compact', null], default: 'full', description: 'Response shape only; not hashed.' },
    strict_schema: {
      type: ['boolean', 'null'],
      default: false,
      description:
        'When true, an unknown schema keyword or format (a typo such as "minimun", which checks nothing) is a 422 naming each one, before anything is charged; ' +
        'when false it is a warning and a pass asks for review_schema_warnings first. Not hashed.',
    },
  },
  required: ['task_id', 'expected_schema', 'submitted_output'],
  additionalProperties: false,
} as const satisfies ObjectSchemaOf<VerificationRequest>;

/** The error body (docs/protocol.md#errors). `code` is any string here; OpenAPI narrows it to the error table. */
export const ERROR_SCHEMA = {
  type: 'object',
  required: ['code', 'message', 'status', 'retryable', 'charged', 'next_actions', 'fields'],
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    status: { type: 'integer' },
    retryable: { type: 'boolean' },
    charged: { type: 'boolean', const: false },
    next_actions: { type: 'array', items: { type: 'object' } },
    fields: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'problem', 'fix'],
        properties: { field: { type: 'string' }, problem: { type: 'string' }, fix: { type: 'string' } },
      },
    },
    retry_after: { type: 'integer', description: 'Seconds; present when retryable.' },
  },
} as const satisfies ObjectSchemaOf<ErrorBody>;

const SCORE_SCHEMA = {
  type: 'object',
  required: ['ratio', 'passed', 'total'],
  properties: { ratio: { type: 'number' }, passed: { type: 'integer' }, total: { type: 'integer' } },
} as const;

/** The `verify` and `attestation` blocks every signed document carries. */
const SIGNATURE_BLOCKS = {
  verify: {
    type: 'object',
    required: ['public_key_url', 'key_version', 'canonicalization', 'hash_algorithm'],
    properties: {
      public_key_url: { type: 'string' },
      key_version: { type: 'string' },
      canonicalization: { type: 'string' },
      hash_algorithm: { type: 'string' },
      service: { type: 'string' },
      mcp: { type: 'string' },
    },
  },
  attestation: {
    type: 'object',
    required: ['algorithm', 'key_version', 'timestamp', 'signature'],
    properties: {
      algorithm: { type: 'string', const: 'Ed25519' },
      key_version: { type: 'string' },
      timestamp: { type: 'string' },
      signature: { type: 'string', description: 'Standard base64 of the 64-byte Ed25519 signature.' },
    },
  },
} as const;

/** One RFC 6902 operation of a repair: paths are JSON Pointers into submitted_output. */
const PATCH_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    required: ['op', 'path'],
    properties: {
      op: { type: 'string', enum: ['add', 'remove', 'replace', 'test', 'move', 'copy'] },
      path: { type: 'string' },
      from: { type: 'string' },
      value: {},
    },
  },
} as const;

/** A hint (docs/protocol.md#response) and the repair it may carry (docs/protocol.md#repairs). */
const HINT_SCHEMA = {
  type: 'object',
  required: ['source', 'check', 'path', 'expected', 'found'],
  properties: {
    source: { type: 'string', enum: ['schema', 'integrity', 'content'] },
    check: { type: 'string' },
    path: { type: 'string' },
    expected: { type: 'string' },
    found: { type: 'string' },
    repair: {
      type: 'object',
      description:
        'A known fix. determined: `patch` is the one fix that makes this check pass. candidate: `options` are alternatives, none preferred. ' +
        'Patches are RFC 6902 against submitted_output; verify the patched output again.',
      required: ['certainty', 'note'],
      properties: {
        certainty: { type: 'string', enum: ['determined', 'candidate'] },
        patch: PATCH_SCHEMA,
        options: { type: 'array', items: { type: 'object', required: ['patch', 'note'], properties: { patch: PATCH_SCHEMA, note: { type: 'string' } } } },
        note: { type: 'string' },
      },
    },
  },
} as const;

/** The signed receipt of docs/protocol.md#response (full or compact form); only fields both forms share are required. */
export const RECEIPT_SCHEMA = {
  type: 'object',
  required: [
    'summary', 'next_actions', 'result', 'verification_id', 'task_id', 'agent_id', 'output_hash', 'schema_hash',
    'rules_hash', 'verified_at', 'verifier_version', 'verify', 'attestation',
  ],
  properties: {
    summary: {
      type: 'object',
      required: ['result', 'blocking_checks'],
      properties: {
        result: { type: 'string', enum: ['pass', 'fail'] },
        blocking_checks: { type: 'array', items: { type: 'string' } },
        warnings: { type: 'integer', minimum: 0, description: 'Compact form only: the number of warning flags it does not list.' },
        schema_warnings: {
          type: 'integer',
          minimum: 1,
          description: 'Present only when the schema has unknown keywords or formats: how many (each checks nothing; see flags schema:unknown_keyword / schema:unknown_format).',
        },
      },
    },
    next_actions: {
      type: 'array',
      items: { type: 'object' },
      description:
        'On fail: apply_repairs {count} first when hints carry determined repairs, then repair_and_reverify. On pass: attach_receipt, proceed_to_payment, ' +
        'after review_schema_warnings {count} when the schema has unknown keywords or formats.',
    },
    result: { type: 'string', enum: ['pass', 'fail'] },
    verification_id: { type: 'string' },
    task_id: { type: 'string' },
    agent_id: { type: ['string', 'null'] },
    output_hash: { type: 'string' },
    schema_hash: { type: 'string' },
    rules_hash: { type: 'string' },
    request_hash: { type: 'string' },
    verified_at: { type: 'string' },
    verifier_version: { type: 'string' },
    hints: { type: 'array', items: HINT_SCHEMA, description: 'Full form only; at most LIST_CAP entries.' },
    schema_compliance: SCORE_SCHEMA,
    integrity_checks: SCORE_SCHEMA,
    overall: SCORE_SCHEMA,
    ...SIGNATURE_BLOCKS,
  },
} as const satisfies ObjectSchemaOf<SignedResponse<FullResponse>, false>;

/** The signed trust score (trust-score attestation context). */
export const TRUST_SCORE_SCHEMA = {
  type: 'object',
  required: ['agent_id', 'score', 'verify', 'attestation'],
  properties: {
    agent_id: { type: 'string' },
    score: { type: 'number', minimum: 0, maximum: 100 },
    inputs: { type: 'object' },
    scored_at: { type: 'string' },
    ...SIGNATURE_BLOCKS,
  },
} as const;
