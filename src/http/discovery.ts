/**
 * @module Discovery documents, generated from the live configuration so they
 * never drift from what the server does: the A2A agent card (with the signing
 * keys), the advisory x402 manifest, and /llms.txt.
 */
import type { Config } from '../config.js';
import { ERROR_TABLE } from '../errors.js';
import { VERIFICATION_REQUEST_EXAMPLE } from '../service/wire-schemas.js';
import { a2aInterfaces } from '../a2a/interface.js';

export interface DiscoveryContext {
  config: Config;
  /** Version of the service (package version). */
  version: string;
  /** The attestation extension entry (docs/protocol.md#keys) listing every signing key. */
  attestationExtension(): Record<string, unknown>;
}

export function agentCard(ctx: DiscoveryContext): Record<string, unknown> {
  const { config } = ctx;
  const base = config.publicBaseUrl;
  // x402: live prices in the skill descriptions when payments are on.
  const p = config.payments;
  const networks = p.enabled ? p.networks.map((n) => n.network).join(', ') : '';
  const verifyPrice = p.enabled ? ` Price: ${p.prices.verify} per call in USDC (x402 v2 on ${networks}) once the free daily allowance is used.` : '';
  const scorePrice = p.enabled ? ` Price of the score: ${p.prices.score} per call in USDC (x402 v2 on ${networks}).` : '';
  // A2A 1.0 agent card. The one A2A interface is the JSON-RPC endpoint; it also answers A2A 0.3
  // clients (`message/send`), so that binding is listed for both versions, as A2A 1.0 prescribes.
  return {
    name: config.serviceName,
    description:
      'Verifies an AI agent\'s structured output against a JSON Schema, numeric bounds and cross-field rules, and returns an Ed25519-signed receipt anyone can verify offline. Send the verification request as the data part of an A2A message; the signed receipt comes back as the data part of the answer. Also over REST (POST /verify/schema) and MCP (' +
      `${base}/mcp).`,
    supportedInterfaces: a2aInterfaces(base),
    version: ctx.version,
    documentationUrl: `${base}/docs`,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      extensions: [ctx.attestationExtension()],
    },
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [
      {
        id: 'verify_schema',
        name: 'Verify agent output',
        description:
          'Send a message whose data part is a verification request (the body of POST /verify/schema): submitted_output is checked against expected_schema plus optional bounds and rules; the answer\'s data part is the Ed25519-signed receipt with the pass/fail verdict and repair hints.' +
          verifyPrice,
        tags: ['json-schema', 'verification', 'receipt', 'ed25519'],
        examples: [JSON.stringify(VERIFICATION_REQUEST_EXAMPLE), 'Check this invoice against my schema before I pay for it.'],
        inputModes: ['application/json'],
        outputModes: ['application/json'],
      },
      {
        id: 'get_verification_record',
        name: 'Agent verification record',
        description:
          'Send a message whose data part is {"agent_id": "..."}: the answer\'s data part is the signed 0-100 trust score of that agent from its non-test verification history, with its inputs (also GET /score/{agent_id}; GET /reputation/{agent_id} for the paged pass/fail history).' +
          scorePrice,
        tags: ['reputation', 'trust-score'],
        examples: ['{"agent_id":"seller-7"}', 'How reliable has agent seller-7 been?'],
        inputModes: ['application/json'],
        outputModes: ['application/json'],
      },
    ],
    provider: { organization: config.serviceName, url: base },
  };
}

/** Advisory x402 manifest; payment routes themselves are authoritative (402 + PAYMENT-REQUIRED). */
export function x402Manifest(config: Config): Record<string, unknown> {
  const payments = config.payments;
  const freeAllowance = {
    per_client_per_day: config.freeAllowancePerDay,
    resets: 'at 00:00 UTC',
    applies_to: ['POST /verify/schema', 'POST /verify/deliverable', 'MCP tool verify_schema', 'A2A SendMessage (POST /a2a)'],
  };
  if (!payments.enabled) {
    return {
      x402Version: 2,
      payments_enabled: false,
      message: 'Payments are off on this server: verification is free within the daily allowance; score is free.',
      free_allowance: freeAllowance,
      routes: [],
    };
  }
  const base = config.publicBaseUrl;
  const accepts = payments.networks.map((n) => ({ scheme: 'exact', network: n.network, asset: n.asset, payTo: n.payTo }));
  return {
    x402Version: 2,
    payments_enabled: true,
    free_allowance: { ...freeAllowance, max_free_body_bytes: payments.freeMaxBodyBytes },
    routes: [
      { method: 'POST', resource: `${base}/verify/schema`, price: payments.prices.verify, accepts },
      { method: 'POST', resource: `${base}/verify/deliverable`, price: payments.prices.verify, accepts },
      { method: 'GET', resource: `${base}/score/{agent_id}`, price: payments.prices.score, accepts },
      { method: 'POST', resource: `${base}/mcp`, tool: 'verify_schema', price: payments.prices.verify, accepts },
      { method: 'POST', resource: `${base}/mcp`, tool: 'get_verification_record', price: payments.prices.score, accepts },
    ],
    max_timeout_seconds: payments.maxTimeoutSeconds,
  };
}

export function llmsTxt(ctx: DiscoveryContext): string {
  const { config } = ctx;
  const base = config.publicBaseUrl;
  const errors = Object.entries(ERROR_TABLE)
    .map(([code, d]) => `- \`${code}\` (${d.status}${d.retryable ? ', retryable' : ''}): ${d.message}`)
    .join('\n');
  const p = config.payments;
  const payments = p.enabled
    ? `Payments (x402 v2) are ON: verify costs ${p.prices.verify}, score costs ${p.prices.score} (USDC on ${p.networks.map((n) => n.network).join(', ')}). Once the free allowance is spent, or for a body over ${p.freeMaxBodyBytes} bytes, paid routes answer 402 with PAYMENT-REQUIRED; pay with PAYMENT-SIGNATURE. A payment pays for the one request it is sent with: that request sent again with it gets the same receipt (202 settlement_pending while it settles), any other request with it gets 402 payment_invalid. See /.well-known/x402.`
    : 'Payments are OFF on this server: once the free allowance is spent, verify answers 429 free_allowance_exhausted until the next UTC midnight.';
  return `# ${config.serviceName}

> Verifies an AI agent's structured output (an invoice, a deliverable, any JSON) against the buyer's JSON Schema, numeric bounds and cross-field rules before anyone pays, and returns a deterministic verdict with an Ed25519-signed receipt anyone can verify offline.

Base URL: ${base}
Version: ${ctx.version}

## Endpoints
- POST ${base}/verify/schema (alias POST ${base}/verify/deliverable): body is a JSON verification request; Content-Type: application/json. Returns the signed receipt.
- GET ${base}/verifications/{verification_id}: the stored signed receipt, byte-identical to the original response. Free.
- GET ${base}/reputation/{agent_id}?limit=&cursor=: pass/fail counts and history (newest first, paged). Free.
- GET ${base}/score/{agent_id}: signed 0-100 trust score with its inputs. Ids starting with \`test-\` are never scored (422).
- POST ${base}/mcp: MCP (Streamable HTTP, stateless), tools \`verify_schema\` and \`get_verification_record\`.
- POST ${base}/a2a: A2A JSON-RPC (SendMessage with header A2A-Version: 1.0, or message/send for A2A 0.3): a message whose one data part is the verification request gets back a message whose data part is the signed receipt; a data part {"agent_id": "..."} gets the signed trust score.
- GET ${base}/.well-known/agent-card.json: A2A agent card; lists every signing public key (attestation extension).
- GET ${base}/.well-known/x402: payment manifest. GET ${base}/openapi.json, ${base}/docs: API description. GET ${base}/health.

## Request (POST /verify/schema)
Fields: task_id (required, 1-200 chars), agent_id (optional), expected_schema (required, JSON Schema; draft 2020-12 unless $schema says 2019-09 or draft-07), submitted_output (required, any JSON), strict_content_check (false), bounds ({path: {min, max, if_present}}), rules ([{type: sum_equals|gte|lte|exists_in|unique, field, ...}]), enforce_rules (false), detail ("full" | "compact"), strict_schema (false; true makes an unknown schema keyword or format, such as the typo "minimun", a 422 naming it instead of a warning; a pass with such a warning lists review_schema_warnings first in next_actions).
Example: ${JSON.stringify(VERIFICATION_REQUEST_EXAMPLE)}
Unknown fields, duplicate keys or unsafe integers outside submitted_output, invalid JSON, and nesting deeper than ${config.maxJsonDepth} are rejected with 422. Nothing is charged or counted for a 422.
On fail, hints[] say what to fix; a hint's repair (when present) is an RFC 6902 patch against submitted_output: certainty "determined" is the one fix for that check (next_actions then starts with apply_repairs), "candidate" lists alternatives to choose from. Verify the patched output again.

## Limits
- Body: at most ${config.bodyLimitBytes} bytes (413 payload_too_large beyond).
- JSON nesting depth: ${config.maxJsonDepth}.
- Lists in responses (errors, hints, flags, history page): at most ${config.listCap} entries; *_total and *_omitted say how many were cut.

## Free allowance
Each client (by IP address${config.trustProxy !== false ? ', behind trusted proxies the right-most X-Forwarded-For address that is not a proxy' : ''}) gets ${config.freeAllowancePerDay} free verifications per UTC day, shared by REST, the MCP verify_schema tool and A2A messages. Every verify response carries Free-Allowance-Remaining, Free-Allowance-Limit and Free-Allowance-Resets headers.
${payments}

## Errors
Every error has the shape {code, message, status, retryable, charged: false, next_actions, fields: [{field, problem, fix}]} plus retry_after (seconds) when retryable. Codes:
${errors}

## Verifying a receipt offline
1. Fetch the public keys from ${base}/.well-known/agent-card.json: capabilities.extensions[] entry whose uri starts with urn:json-schema-verifier:extension:attestation:, params.publicKeys[] (keyVersion, publicKey = base64 of the raw 32-byte Ed25519 key). Pick the key whose keyVersion equals attestation.key_version.
2. Remove "attestation" from the receipt; call the rest R.
3. Build {"context": "json-schema-verifier/verify-schema-attestation/v1", "algorithm": "Ed25519", "key_version": attestation.key_version, "attested_at": attestation.timestamp, "response": R} (for /score responses the context is json-schema-verifier/trust-score-attestation/v1).
4. Canonicalize it with RFC 8785 (JCS), take the UTF-8 bytes, and check the Ed25519 signature (attestation.signature, standard base64).
5. Optionally recompute the hashes: output_hash = SHA-256(JCS(submitted_output)), schema_hash = SHA-256(JCS(expected_schema)), rules_hash = SHA-256(JCS({"bounds": ..., "rules": ...} as supplied)), request_hash over the request with defaults filled in (test vectors in the agent card).
Or use the command line offline: save the agent card to a file and run aov receipt verify (see aov receipt --help).
`;
}
