/**
 * @module The two MCP tools as data: names, titles, descriptions, annotations and
 * the JSON Schemas advertised in tools/list, the server card and the agent card's
 * skills. One source, so every discovery surface says the same thing.
 *
 * The input schemas are advertised to guide clients (and the models that fill
 * them in); the server does NOT enforce them. Arguments go unchanged to the
 * service's own validator, so a bad call gets the coded SPEC §6 error with
 * `fields[].fix` instead of a generic schema-library message, and unknown
 * top-level fields are rejected instead of silently stripped.
 *
 * Schemas avoid `$schema`/`$ref` on purpose: validating clients (the official
 * SDK compiles outputSchema with a default Ajv) must be able to compile them as is.
 */
import { RULE_TYPES } from '../core/types.js';

export type ToolName = 'verify_schema' | 'get_verification_record';
export const TOOL_NAMES: readonly ToolName[] = ['verify_schema', 'get_verification_record'];

export type JsonSchemaObject = { type: 'object' } & Record<string, unknown>;

export interface ToolAnnotationsShape {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** What a discovery surface needs to describe a tool. */
export interface McpToolDescriptor {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: JsonSchemaObject;
}

export interface McpToolDefinition extends McpToolDescriptor {
  outputSchema: JsonSchemaObject;
  annotations: ToolAnnotationsShape;
}

const ID_STRING = { type: 'string', minLength: 1, maxLength: 200 } as const;

const BOUND_SCHEMA = {
  type: 'object',
  description: 'Inclusive numeric range every value at the path must fall in.',
  properties: {
    min: { type: 'number' },
    max: { type: 'number' },
    if_present: { type: 'boolean', default: false, description: 'Pass when the path yields no value.' },
  },
  additionalProperties: false,
} as const;

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
    equals_field: { type: 'string', description: 'sum_equals: path of the expected sum (xor equals).' },
    equals: { type: 'number', description: 'sum_equals: constant expected sum (xor equals_field).' },
    other_field: { type: 'string', description: 'gte/lte: path to compare with (xor value).' },
    value: { type: 'number', description: 'gte/lte: constant to compare with (xor other_field).' },
    in_field: { type: 'string', description: 'exists_in: path of the allowed values (xor values).' },
    values: { type: 'array', description: 'exists_in: constant list of allowed values (xor in_field).' },
    tolerance: { type: 'number', default: 1e-9, description: 'sum_equals: absolute tolerance.' },
    if_present: { type: 'boolean', default: false, description: 'Pass when field yields no value.' },
  },
  additionalProperties: false,
} as const;

/** SPEC §1, as guidance for clients. The service validates; this schema is not enforced. */
export const VERIFY_SCHEMA_INPUT: JsonSchemaObject = {
  type: 'object',
  properties: {
    task_id: { ...ID_STRING, description: "Your id for the task, e.g. 'inv-2026-0042'." },
    agent_id: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: 200,
      description: "Who produced the output (an unauthenticated label). Ids starting with 'test-' are recorded but never scored.",
    },
    expected_schema: {
      type: ['object', 'boolean'],
      description: 'The JSON Schema the output must satisfy. Draft 2020-12 unless $schema says 2019-09 or draft-07. No remote $ref.',
    },
    submitted_output: { description: 'The agent output to check: any JSON value.' },
    strict_content_check: {
      type: 'boolean',
      default: false,
      description: 'Also fail undeclared fields and placeholder strings (TODO, TBD, N/A, lorem ipsum, {{...}}...).',
    },
    bounds: {
      type: ['object', 'null'],
      description: "Numeric ranges by path, e.g. {\"line_items[].qty\": {\"min\": 1, \"max\": 1000}}.",
      additionalProperties: BOUND_SCHEMA,
    },
    rules: { type: ['array', 'null'], description: 'Cross-field rules.', items: RULE_SCHEMA },
    enforce_rules: {
      type: 'boolean',
      default: false,
      description: 'When true, failed rules and bounds fail the result; when false they are warnings.',
    },
    detail: { type: 'string', enum: ['full', 'compact'], default: 'full', description: 'Response shape only; not hashed.' },
  },
  required: ['task_id', 'expected_schema', 'submitted_output'],
  additionalProperties: false,
};

export const GET_RECORD_INPUT: JsonSchemaObject = {
  type: 'object',
  properties: {
    agent_id: { ...ID_STRING, description: 'The agent_id used in verify_schema calls.' },
  },
  required: ['agent_id'],
  additionalProperties: false,
};

/** The SPEC §6 error object carried in `structuredContent` of every error result. */
export const ERROR_OUTPUT: JsonSchemaObject = {
  type: 'object',
  title: 'Error',
  required: ['code', 'message', 'status', 'retryable', 'charged', 'next_actions', 'fields'],
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    status: { type: 'integer' },
    retryable: { type: 'boolean' },
    charged: { const: false },
    next_actions: { type: 'array', items: { type: 'object' } },
    fields: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'problem', 'fix'],
        properties: { field: { type: 'string' }, problem: { type: 'string' }, fix: { type: 'string' } },
      },
    },
    retry_after: { type: 'number' },
  },
};

/**
 * x402 PaymentRequired, the structuredContent of an isError result when the operator
 * charges for a call (SPEC §6 "Payments"). Declared always, so that validating clients
 * let it through whether payments are on or off.
 */
export const PAYMENT_REQUIRED_OUTPUT: JsonSchemaObject = {
  type: 'object',
  title: 'x402 PaymentRequired',
  required: ['x402Version', 'accepts'],
  properties: {
    x402Version: { type: 'integer' },
    error: { type: 'string' },
    resource: { type: 'object' },
    accepts: { type: 'array', items: { type: 'object' } },
  },
};

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
      algorithm: { const: 'Ed25519' },
      key_version: { type: 'string' },
      timestamp: { type: 'string' },
      signature: { type: 'string' },
    },
  },
} as const;

const SCORE_OBJECT = { type: 'object', required: ['ratio', 'passed', 'total'] } as const;

/** The signed receipt of SPEC §4 (full or compact form); only fields both forms share are required. */
export const RECEIPT_OUTPUT: JsonSchemaObject = {
  type: 'object',
  title: 'Signed verification receipt',
  required: [
    'summary', 'next_actions', 'result', 'verification_id', 'task_id', 'agent_id', 'output_hash', 'schema_hash',
    'rules_hash', 'verified_at', 'verifier_version', 'verify', 'attestation',
  ],
  properties: {
    summary: {
      type: 'object',
      required: ['result', 'blocking_checks'],
      properties: { result: { enum: ['pass', 'fail'] }, blocking_checks: { type: 'array', items: { type: 'string' } } },
    },
    next_actions: { type: 'array', items: { type: 'object' } },
    result: { enum: ['pass', 'fail'] },
    verification_id: { type: 'string' },
    task_id: { type: 'string' },
    agent_id: { type: ['string', 'null'] },
    output_hash: { type: 'string' },
    schema_hash: { type: 'string' },
    rules_hash: { type: 'string' },
    request_hash: { type: 'string' },
    verified_at: { type: 'string' },
    verifier_version: { type: 'string' },
    schema_compliance: SCORE_OBJECT,
    integrity_checks: SCORE_OBJECT,
    overall: SCORE_OBJECT,
    ...SIGNATURE_BLOCKS,
  },
};

/** The signed trust score (trust-score attestation context). */
export const SCORE_OUTPUT: JsonSchemaObject = {
  type: 'object',
  title: 'Signed trust score',
  required: ['agent_id', 'score', 'verify', 'attestation'],
  properties: {
    agent_id: { type: 'string' },
    score: { type: 'number', minimum: 0, maximum: 100 },
    ...SIGNATURE_BLOCKS,
  },
};

/**
 * Output schemas are "success OR SPEC error OR x402 PaymentRequired": the 1.x SDK
 * client validates structuredContent against outputSchema even on `isError` results
 * (modelcontextprotocol/typescript-sdk#1943), so every error body must satisfy it too
 * or the caller never sees it. Declaring no outputSchema would also avoid that, but
 * clients then learn nothing about the receipt's shape.
 */
export function eitherOutput(...shapes: JsonSchemaObject[]): JsonSchemaObject {
  return { type: 'object', anyOf: shapes };
}

/** Add one more accepted result shape to a tool's outputSchema. */
export function withOutputShape(definition: McpToolDefinition, shape: JsonSchemaObject): McpToolDefinition {
  const current = Array.isArray(definition.outputSchema.anyOf) ? (definition.outputSchema.anyOf as JsonSchemaObject[]) : [definition.outputSchema];
  return { ...definition, outputSchema: eitherOutput(...current, shape) };
}

const INVOICE_EXAMPLE =
  'Example (an invoice whose line items do not add up):\n' +
  '{"task_id":"inv-42","agent_id":"seller-7",' +
  '"expected_schema":{"type":"object","required":["invoice_id","currency","line_items","total"],"properties":{' +
  '"invoice_id":{"type":"string","pattern":"^INV-[0-9]{4}$"},"currency":{"enum":["USD","EUR"]},' +
  '"line_items":{"type":"array","minItems":1,"items":{"type":"object","required":["sku","qty","line_total"],"properties":{' +
  '"sku":{"type":"string"},"qty":{"type":"integer","minimum":1},"line_total":{"type":"number","minimum":0}}}},' +
  '"total":{"type":"number"}}},' +
  '"submitted_output":{"invoice_id":"INV-0042","currency":"USD","line_items":[' +
  '{"sku":"A-1","qty":2,"line_total":87.0},{"sku":"B-2","qty":1,"line_total":42.5}],"total":135.0},' +
  '"rules":[{"type":"sum_equals","field":"line_items[].line_total","equals_field":"total"}],"enforce_rules":true}\n' +
  '→ result "fail", blocking_checks ["consistency:sum_equals"], schema 22/22; the hint says the items sum to 129.5. ' +
  'With "total":129.5 the same call passes.';

export const VERIFY_SCHEMA_TOOL: McpToolDefinition = {
  name: 'verify_schema',
  title: 'Verify agent output against a JSON Schema and rules',
  description:
    "Check a JSON output (an invoice, a deliverable, any agent result) against the buyer's JSON Schema plus optional " +
    'numeric bounds and cross-field rules (sum_equals, gte, lte, exists_in, unique), before paying for it or sending it. ' +
    'Returns a deterministic pass/fail verdict with scores, blocking checks and repair hints, as an Ed25519-signed ' +
    'receipt anyone can verify offline with the public key in /.well-known/agent-card.json. ' +
    'Each call is stored (the verification_id can be fetched again) and counts toward agent_id\'s pass/fail history; ' +
    'it uses one unit of the free daily allowance shared with the REST API. ' +
    'On fail, fix what hints[] describe and call again.\n' +
    INVOICE_EXAMPLE,
  inputSchema: VERIFY_SCHEMA_INPUT,
  outputSchema: eitherOutput(RECEIPT_OUTPUT, ERROR_OUTPUT, PAYMENT_REQUIRED_OUTPUT),
  annotations: {
    title: 'Verify agent output',
    // Not read-only: every call appends a stored receipt to agent_id's public history
    // (it moves that agent's trust score) and uses up free allowance.
    readOnlyHint: false,
    // Purely additive: nothing existing is changed or deleted.
    destructiveHint: false,
    // A repeat creates another record and uses more allowance.
    idempotentHint: false,
    openWorldHint: false,
  },
};

export const GET_RECORD_TOOL: McpToolDefinition = {
  name: 'get_verification_record',
  title: "Get an agent's signed trust score",
  description:
    "The signed trust score (0-100) of an agent, computed deterministically from its stored, non-test verification " +
    'history (a lower confidence bound of a recency-weighted pass rate, so 3/3 does not outrank 950/1000), with the ' +
    "inputs shown. Signed like a receipt (trust-score attestation context). Use it to decide whether to trust a seller's " +
    'agent before buying. Example: {"agent_id":"seller-7"}. Ids starting with \'test-\' are never scored.',
  inputSchema: GET_RECORD_INPUT,
  outputSchema: eitherOutput(SCORE_OUTPUT, ERROR_OUTPUT, PAYMENT_REQUIRED_OUTPUT),
  annotations: {
    title: 'Get trust score',
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
};

export const TOOL_DEFINITIONS: readonly McpToolDefinition[] = [VERIFY_SCHEMA_TOOL, GET_RECORD_TOOL];

/** Name, title, description and input schema of each tool, for the agent card's skills. */
export function mcpToolDescriptors(): McpToolDescriptor[] {
  return TOOL_DEFINITIONS.map(({ name, title, description, inputSchema }) => ({
    name,
    title,
    description,
    inputSchema: structuredClone(inputSchema),
  }));
}
