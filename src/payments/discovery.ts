/**
 * @module Bazaar discovery declarations for the paid routes: what a catalog
 * (a facilitator's discovery index, an agent marketplace) shows a buyer about
 * how to call each route and what comes back. Built with the official
 * `declareDiscoveryExtension` so the wire shape follows @x402/extensions.
 */
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { VERIFICATION_REQUEST_EXAMPLE } from '../service/wire-schemas.js';
import type { PaidRoute } from './config.js';

// Deliberately shallow (no descriptions, no rule/bound shapes): the declaration travels
// base64-encoded in the PAYMENT-REQUIRED header. The full schema is in /openapi.json.
// Shallow means looser, never stricter: it accepts every request the service accepts
// (src/service/wire-schemas.test.ts checks it).
const VERIFY_INPUT_SCHEMA = {
  type: 'object',
  required: ['task_id', 'expected_schema', 'submitted_output'],
  properties: {
    task_id: { type: 'string', minLength: 1, maxLength: 200 },
    agent_id: { type: ['string', 'null'], minLength: 1, maxLength: 200 },
    expected_schema: { type: ['object', 'boolean'] },
    submitted_output: {},
    strict_content_check: { type: ['boolean', 'null'] },
    bounds: { type: ['object', 'null'] },
    rules: { type: ['array', 'null'] },
    enforce_rules: { type: ['boolean', 'null'] },
    detail: { enum: ['full', 'compact', null] },
    strict_schema: { type: ['boolean', 'null'] },
  },
  additionalProperties: false,
};

const VERIFY_OUTPUT_EXAMPLE = {
  summary: { result: 'pass', blocking_checks: [] },
  result: 'pass',
  verification_id: '00000000-0000-4000-8000-000000000000',
  task_id: 'invoice-42',
  verify: { public_key_url: '/.well-known/agent-card.json' },
  attestation: { algorithm: 'Ed25519', key_version: '…', timestamp: '…', signature: '…' },
};

const VERIFY_OUTPUT_SCHEMA = {
  type: 'object',
  required: ['result', 'verification_id', 'attestation'],
  properties: {
    result: { enum: ['pass', 'fail'] },
    verification_id: { type: 'string', format: 'uuid' },
    attestation: { type: 'object' },
  },
};

const SCORE_OUTPUT_EXAMPLE = {
  agent_id: 'agent-7',
  score: 87,
  inputs: { verifications: 120, passes: 110 },
  attestation: { algorithm: 'Ed25519', key_version: '…', timestamp: '…', signature: '…' },
};

/** The HTTP discovery declarations, keyed by paid route. */
export function httpDiscovery(route: PaidRoute): Record<string, unknown> {
  if (route === 'verify') {
    return declareDiscoveryExtension({
      bodyType: 'json',
      input: VERIFICATION_REQUEST_EXAMPLE,
      inputSchema: VERIFY_INPUT_SCHEMA,
      output: { example: VERIFY_OUTPUT_EXAMPLE, schema: VERIFY_OUTPUT_SCHEMA },
    });
  }
  return declareDiscoveryExtension({
    pathParams: { agent_id: 'agent-7' },
    pathParamsSchema: { type: 'object', properties: { agent_id: { type: 'string' } }, required: ['agent_id'] },
    output: { example: SCORE_OUTPUT_EXAMPLE },
  });
}

/** The MCP tool discovery declarations (tool name per paid route). */
export function mcpDiscovery(route: PaidRoute): Record<string, unknown> {
  if (route === 'verify') {
    return declareDiscoveryExtension({
      toolName: 'verify_schema',
      description: 'Verify an agent output against a JSON Schema, bounds and rules; returns a signed receipt.',
      transport: 'streamable-http',
      inputSchema: VERIFY_INPUT_SCHEMA,
      example: VERIFICATION_REQUEST_EXAMPLE,
      output: { example: VERIFY_OUTPUT_EXAMPLE },
    });
  }
  return declareDiscoveryExtension({
    toolName: 'get_verification_record',
    description: "An agent's signed trust score and its inputs.",
    transport: 'streamable-http',
    inputSchema: { type: 'object', properties: { agent_id: { type: 'string' } }, required: ['agent_id'] },
    output: { example: SCORE_OUTPUT_EXAMPLE },
  });
}
