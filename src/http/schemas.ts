/**
 * @module JSON Schemas the routes declare. They feed OpenAPI (/openapi.json) and
 * validate path/query parameters. The verification body is parsed by the core's
 * strict parser instead (hashes cover the parsed value), so its schema here is
 * documentation of the same contract, not a second validator.
 */
import { ERROR_TABLE } from '../errors.js';

export const errorSchema = {
  $id: 'Error',
  type: 'object',
  description: 'Every non-payment error (SPEC §6).',
  required: ['code', 'message', 'status', 'retryable', 'charged', 'next_actions', 'fields'],
  properties: {
    code: { type: 'string', enum: Object.keys(ERROR_TABLE) },
    message: { type: 'string' },
    status: { type: 'integer' },
    retryable: { type: 'boolean' },
    charged: { type: 'boolean', const: false },
    next_actions: { type: 'array', items: { type: 'object', additionalProperties: true } },
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
} as const;

const ruleSchema = {
  type: 'object',
  required: ['type', 'field'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['sum_equals', 'gte', 'lte', 'exists_in', 'unique'] },
    field: { type: 'string', description: "Dotted path, e.g. 'line_items[].line_total'." },
    equals_field: { type: ['string', 'null'] },
    equals: { type: ['number', 'null'] },
    other_field: { type: ['string', 'null'] },
    value: { type: ['number', 'null'] },
    in_field: { type: ['string', 'null'] },
    values: { type: ['array', 'null'] },
    tolerance: { type: 'number', default: 1e-9 },
    if_present: { type: 'boolean', default: false },
  },
} as const;

export const verificationRequestSchema = {
  $id: 'VerificationRequest',
  type: 'object',
  description: 'SPEC §1. Parsed strictly (I-JSON): duplicate keys or unsafe integers outside submitted_output are rejected.',
  required: ['task_id', 'expected_schema', 'submitted_output'],
  additionalProperties: false,
  properties: {
    task_id: { type: 'string', minLength: 1, maxLength: 200 },
    agent_id: { type: ['string', 'null'], minLength: 1, maxLength: 200, description: "Ids starting with 'test-' are never scored." },
    expected_schema: { type: ['object', 'boolean'], description: 'JSON Schema (2020-12 default; 2019-09, draft-07).' },
    submitted_output: { description: 'Any JSON value: the output being checked.' },
    strict_content_check: { type: 'boolean', default: false },
    bounds: {
      type: ['object', 'null'],
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: { min: { type: 'number' }, max: { type: 'number' }, if_present: { type: 'boolean' } },
      },
    },
    rules: { type: ['array', 'null'], items: ruleSchema },
    enforce_rules: { type: 'boolean', default: false },
    detail: { type: 'string', enum: ['full', 'compact'], default: 'full' },
  },
  examples: [
    {
      task_id: 'tv-1',
      expected_schema: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } },
      submitted_output: { ok: true },
    },
  ],
} as const;

const scoreSchema = { type: 'object', required: ['ratio', 'passed', 'total'], properties: { ratio: { type: 'number' }, passed: { type: 'integer' }, total: { type: 'integer' } } };

const signatureBlocks = {
  verify: {
    type: 'object',
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
    properties: {
      algorithm: { type: 'string', const: 'Ed25519' },
      key_version: { type: 'string' },
      timestamp: { type: 'string' },
      signature: { type: 'string', description: 'Standard base64 of the 64-byte Ed25519 signature.' },
    },
  },
};

export const receiptSchema = {
  $id: 'Receipt',
  type: 'object',
  description: 'The signed verification response (SPEC §4–5). Sent as stored, byte for byte.',
  additionalProperties: true,
  properties: {
    summary: { type: 'object', properties: { result: { type: 'string' }, blocking_checks: { type: 'array', items: { type: 'string' } } } },
    next_actions: { type: 'array', items: { type: 'object' } },
    result: { type: 'string', enum: ['pass', 'fail'] },
    verification_id: { type: 'string', format: 'uuid' },
    task_id: { type: 'string' },
    agent_id: { type: ['string', 'null'] },
    output_hash: { type: 'string' },
    schema_hash: { type: 'string' },
    rules_hash: { type: 'string' },
    request_hash: { type: 'string' },
    verified_at: { type: 'string', format: 'date-time' },
    verifier_version: { type: 'string' },
    schema_compliance: scoreSchema,
    integrity_checks: scoreSchema,
    overall: scoreSchema,
    ...signatureBlocks,
  },
} as const;

export const trustScoreSchema = {
  $id: 'TrustScore',
  type: 'object',
  description: 'Signed trust score (context json-schema-verifier/trust-score-attestation/v1).',
  additionalProperties: true,
  properties: {
    agent_id: { type: 'string' },
    score: { type: 'number', minimum: 0, maximum: 100 },
    inputs: { type: 'object', additionalProperties: true },
    scored_at: { type: 'string', format: 'date-time' },
    ...signatureBlocks,
  },
} as const;

export const reputationSchema = {
  $id: 'Reputation',
  type: 'object',
  properties: {
    agent_id: { type: 'string' },
    verifications: { type: 'integer' },
    passes: { type: 'integer' },
    fails: { type: 'integer' },
    pass_rate: { type: 'number' },
    first_seen: { type: ['string', 'null'] },
    last_seen: { type: ['string', 'null'] },
    history: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          verification_id: { type: 'string' },
          task_id: { type: 'string' },
          result: { type: 'string', enum: ['pass', 'fail'] },
          overall_ratio: { type: 'number' },
          verified_at: { type: 'string' },
        },
      },
    },
    next_cursor: { type: ['string', 'null'] },
  },
} as const;

export const agentIdParams = {
  type: 'object',
  required: ['agent_id'],
  properties: { agent_id: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export const verificationIdParams = {
  type: 'object',
  required: ['verification_id'],
  properties: { verification_id: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export function reputationQuery(listCap: number) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: listCap, default: Math.min(20, listCap) },
      cursor: { type: 'string', maxLength: 500 },
    },
  } as const;
}

export const allowanceHeaders = {
  'Free-Allowance-Remaining': { type: 'integer', description: 'Free verifications left today for this client.' },
  'Free-Allowance-Limit': { type: 'integer', description: 'Free verifications per client per UTC day.' },
  'Free-Allowance-Resets': { type: 'string', description: 'Next UTC midnight (RFC 3339).' },
} as const;

/** Error responses every route may produce, for OpenAPI. */
export function errorResponses(...statuses: number[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of statuses) out[String(s)] = { $ref: 'Error#' };
  return out;
}
