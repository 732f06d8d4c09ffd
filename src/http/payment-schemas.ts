/**
 * @module OpenAPI description of the x402 `402 Payment Required` response of the
 * paid routes (documentation only: responses are serialized as plain JSON).
 */

const paymentHeaders = {
  'PAYMENT-REQUIRED': { type: 'string', description: 'Base64 of the x402 v2 PaymentRequired object (what to pay, on which networks).' },
} as const;

/** The 402 body: the PaymentRequired object plus the caller's free-trial state and a stable code. */
const paymentRequiredBodySchema = {
  type: 'object',
  required: ['x402Version', 'accepts', 'code', 'available', 'remaining_calls_today', 'resets_at'],
  properties: {
    x402Version: { type: 'integer', const: 2 },
    error: { type: 'string' },
    resource: { type: 'object', properties: { url: { type: 'string' }, description: { type: 'string' }, mimeType: { type: 'string' } } },
    accepts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds'],
        properties: {
          scheme: { type: 'string' },
          network: { type: 'string', description: 'CAIP-2, e.g. eip155:8453' },
          amount: { type: 'string', description: 'Atomic units (USDC: 6 decimals)' },
          asset: { type: 'string' },
          payTo: { type: 'string' },
          maxTimeoutSeconds: { type: 'integer' },
          extra: { type: 'object' },
        },
      },
    },
    extensions: { type: 'object', description: 'x402 extensions, e.g. bazaar discovery' },
    code: { type: 'string', enum: ['free_trial_exhausted', 'payment_required', 'payment_invalid', 'settlement_failed'] },
    message: { type: 'string' },
    charged: { type: 'boolean', const: false },
    available: { type: 'boolean', description: 'Whether free calls remain today' },
    remaining_calls_today: { type: 'integer' },
    resets_at: { type: 'string', description: 'Next UTC midnight (RFC 3339)' },
    limit: { type: 'integer' },
    free_trial: {
      type: 'object',
      description: 'The same free-trial state in the shape clients of the hosted original read',
      properties: {
        available: { type: 'boolean' },
        via: { type: 'string', const: 'mcp+rest' },
        transport: { type: 'string', const: 'streamable-http' },
        url: { type: 'string', description: 'The MCP endpoint' },
        tool: { type: 'string', const: 'verify_schema' },
        calls_per_client_per_day: { type: 'integer' },
        remaining_calls_today: { type: 'integer' },
        resets_at: { type: 'string' },
        client: { type: 'string', description: 'How the caller is identified for the allowance' },
        message: { type: 'string' },
        code: { type: 'string', enum: ['free_trial_available', 'free_trial_exhausted'] },
      },
    },
  },
} as const;

/** `402` entry for a route's `response` schema. */
export function paymentRequiredResponse(): Record<string, unknown> {
  return {
    402: {
      description:
        'Payment required (x402 v2). Pay with a PAYMENT-SIGNATURE header (base64 PaymentPayload); the paid response carries PAYMENT-RESPONSE.',
      headers: paymentHeaders,
      content: { 'application/json': { schema: paymentRequiredBodySchema } },
    },
  };
}
