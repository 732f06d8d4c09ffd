/**
 * @module The two MCP tools as data: names, titles, descriptions, annotations and
 * the JSON Schemas advertised in tools/list, the server card and the agent card's
 * skills. One source, so every discovery surface says the same thing.
 *
 * The input schemas are advertised to guide clients (and the models that fill
 * them in); the server does NOT enforce them. Arguments go unchanged to the
 * service's own validator, so a bad call gets the coded error (docs/protocol.md#errors) with
 * `fields[].fix` instead of a generic schema-library message, and unknown
 * top-level fields are rejected instead of silently stripped.
 *
 * The wire-format schemas are shared with OpenAPI (src/service/wire-schemas.ts),
 * which keeps them compilable by validating clients as is.
 */
import { ERROR_SCHEMA, RECEIPT_SCHEMA, TRUST_SCORE_SCHEMA, VERIFICATION_REQUEST_SCHEMA } from '../service/wire-schemas.js';

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

/** The verification request (docs/protocol.md#request), as guidance for clients. The service validates; this schema is not enforced. */
const VERIFY_SCHEMA_INPUT: JsonSchemaObject = VERIFICATION_REQUEST_SCHEMA;

const GET_RECORD_INPUT: JsonSchemaObject = {
  type: 'object',
  properties: {
    agent_id: { type: 'string', minLength: 1, maxLength: 200, description: 'The agent_id used in verify_schema calls.' },
  },
  required: ['agent_id'],
  additionalProperties: false,
};

/** The error object (docs/protocol.md#errors) carried in `structuredContent` of every error result. */
const ERROR_OUTPUT: JsonSchemaObject = { ...ERROR_SCHEMA, title: 'Error' };

/**
 * x402 PaymentRequired, the structuredContent of an isError result when the operator
 * charges for a call (docs/protocol.md#payments). Declared always, so that validating clients
 * let it through whether payments are on or off.
 */
const PAYMENT_REQUIRED_OUTPUT: JsonSchemaObject = {
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

const RECEIPT_OUTPUT: JsonSchemaObject = { ...RECEIPT_SCHEMA, title: 'Signed verification receipt' };

const SCORE_OUTPUT: JsonSchemaObject = { ...TRUST_SCORE_SCHEMA, title: 'Signed trust score' };

/**
 * Output schemas are "success OR error object OR x402 PaymentRequired": the 1.x SDK
 * client validates structuredContent against outputSchema even on `isError` results
 * (modelcontextprotocol/typescript-sdk#1943), so every error body must satisfy it too
 * or the caller never sees it. Declaring no outputSchema would also avoid that, but
 * clients then learn nothing about the receipt's shape.
 */
function eitherOutput(...shapes: JsonSchemaObject[]): JsonSchemaObject {
  return { type: 'object', anyOf: shapes };
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

const VERIFY_SCHEMA_TOOL: McpToolDefinition = {
  name: 'verify_schema',
  title: 'Verify agent output against a JSON Schema and rules',
  description:
    "Check a JSON output (an invoice, a deliverable, any agent result) against the buyer's JSON Schema plus optional " +
    'numeric bounds and cross-field rules (sum_equals, gte, lte, exists_in, unique), before paying for it or sending it. ' +
    'Returns a deterministic pass/fail verdict with scores, blocking checks and repair hints, as an Ed25519-signed ' +
    'receipt anyone can verify offline with the public key in /.well-known/agent-card.json. ' +
    'Each call is stored (the verification_id can be fetched again) and counts toward agent_id\'s pass/fail history; ' +
    'it uses one unit of the free daily allowance shared with the REST API. ' +
    'On fail, fix what hints[] describe and call again; a hint with repair.certainty "determined" carries the fix as an RFC 6902 patch ' +
      'against submitted_output (apply it, then verify again), "candidate" lists alternative patches to choose from.\n' +
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

const GET_RECORD_TOOL: McpToolDefinition = {
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
