/**
 * @module JSON Schemas the routes declare. They feed OpenAPI (/openapi.json) and
 * validate path/query parameters. The wire formats come from
 * src/service/wire-schemas.ts (shared with the MCP tools); here they get their
 * OpenAPI ids, formats and examples. The verification body is parsed by the core's
 * strict parser instead (hashes cover the parsed value), so its schema here is
 * documentation of the same contract, not a second validator.
 */
import { ERROR_TABLE } from '../errors.js';
import type { CheckpointRef, ReputationPage } from '../core/records.js';
import { ERROR_SCHEMA, RECEIPT_SCHEMA, TRUST_SCORE_SCHEMA, VERIFICATION_REQUEST_SCHEMA, type ObjectSchemaOf } from '../service/wire-schemas.js';

export const errorSchema = {
  $id: 'Error',
  description: 'Every non-payment error (docs/protocol.md#errors).',
  ...ERROR_SCHEMA,
  properties: { ...ERROR_SCHEMA.properties, code: { type: 'string', enum: Object.keys(ERROR_TABLE) } },
} as const;

export const verificationRequestSchema = {
  $id: 'VerificationRequest',
  description: 'The verification request (docs/protocol.md#request). Parsed strictly (I-JSON): duplicate keys or unsafe integers outside submitted_output are rejected.',
  ...VERIFICATION_REQUEST_SCHEMA,
  examples: [
    {
      task_id: 'tv-1',
      expected_schema: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } },
      submitted_output: { ok: true },
    },
  ],
} as const;

export const receiptSchema = {
  $id: 'Receipt',
  description: 'The signed verification response (docs/protocol.md#response, #signature). Sent as stored, byte for byte.',
  ...RECEIPT_SCHEMA,
  additionalProperties: true,
  properties: {
    ...RECEIPT_SCHEMA.properties,
    verification_id: { type: 'string', format: 'uuid' },
    verified_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const trustScoreSchema = {
  $id: 'TrustScore',
  description: 'Signed trust score (context json-schema-verifier/trust-score-attestation/v1).',
  ...TRUST_SCORE_SCHEMA,
  additionalProperties: true,
  properties: {
    ...TRUST_SCORE_SCHEMA.properties,
    inputs: { type: 'object', additionalProperties: true },
    log_checkpoint: { $ref: 'LogCheckpointRef#' },
    scored_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The transparency-log tree head that reputation and the trust score were computed at. */
export const logCheckpointRefSchema = {
  $id: 'LogCheckpointRef',
  description: 'Transparency-log checkpoint (tree size and base64 root hash, as in GET /log/checkpoint) covering every receipt counted.',
  type: 'object',
  required: ['tree_size', 'root_hash'],
  properties: { tree_size: { type: 'integer', minimum: 0 }, root_hash: { type: 'string' } },
} as const satisfies ObjectSchemaOf<CheckpointRef>;

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
    log_checkpoint: { $ref: 'LogCheckpointRef#' },
  },
} as const satisfies ObjectSchemaOf<ReputationPage>;

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
