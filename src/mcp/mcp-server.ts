/**
 * @module One MCP server per HTTP request (stateless Streamable HTTP): the
 * official SDK's low-level Server with tools/list and tools/call handlers that
 * translate JSON-RPC into the request lifecycle (src/service/pipeline.ts) and back. No
 * verification or payment logic here. The low-level Server is used (not McpServer
 * + zod) so that the advertised JSON Schemas are exactly ours; the arguments reach
 * the pipeline as their own source text (see envelope.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError, errorBody, invalidRequest, isApiError, type ErrorBody } from '../errors.js';
import { parseStrictJson, StrictJsonError } from '../core/strict-json.js';
import type { PaymentEncoding } from '../payments/transport.js';
import { outcomeError, type AdmitContext, type Completion, type Failed, type Pipeline, type Refused } from '../service/pipeline.js';
import type { VerificationResponse } from '../core/response.js';
import type { Score } from '../core/types.js';
import { TOOL_DEFINITIONS, TOOL_NAMES, type ToolName } from './tool-definitions.js';

/** `result._meta` key of the free-allowance state after a verify_schema call. */
export const FREE_ALLOWANCE_META = 'agent-output-verifier/free-allowance';

export interface McpServerContext {
  pipeline: Pipeline;
  serverName: string;
  serverVersion: string;
  /** Client address, resolved exactly like the REST routes resolve it (shared allowance). */
  clientKey: string;
  /** Public URL of the MCP endpoint (the resource a payment pays for). */
  endpointUrl: string;
  /** The x402 encodings when payments are on. */
  payments: PaymentEncoding | null;
  log: FastifyBaseLogger;
  /**
   * The source text of the call's `params.arguments` in the body: a string, undefined
   * when absent, null when the JSON-RPC id was used twice in one batch.
   */
  argumentSource(requestId: string | number): string | undefined | null;
}

const INSTRUCTIONS =
  'Verify agent output before paying for it or sending it: call verify_schema with the JSON Schema, the output, and ' +
  'optional bounds and rules; act on result / hints. Receipts are Ed25519-signed (key in /.well-known/agent-card.json). ' +
  "get_verification_record returns an agent's signed trust score.";

function ratio(s: Score): string {
  return `${s.passed}/${s.total} (${s.ratio})`;
}

/** One line a model can act on without parsing the JSON. */
export function receiptSummary(response: VerificationResponse): string {
  const blocking = response.summary.blocking_checks;
  const parts = [`result: ${response.result}`];
  parts.push(`blocking checks: ${blocking.length > 0 ? blocking.join(', ') : 'none'}`);
  if ('overall' in response) {
    parts.push(`schema ${ratio(response.schema_compliance)}`, `integrity ${ratio(response.integrity_checks)}`, `overall ${ratio(response.overall)}`);
  }
  parts.push(`verification_id: ${response.verification_id}`);
  const next = response.result === 'fail' ? 'Fix what hints[] describe and verify again.' : 'Attach this signed receipt (seller) or proceed to payment (buyer).';
  return `${parts.join('; ')}. ${next}`;
}

function scoreSummary(response: Record<string, unknown>): string {
  return `agent ${String(response.agent_id)}: trust score ${String(response.score)} (0-100), signed at ${String(
    (response.attestation as { timestamp?: unknown } | undefined)?.timestamp,
  )}.`;
}

function successResult(text: string, response: Record<string, unknown>, summary: string, meta: Record<string, unknown> | undefined): CallToolResult {
  const result: CallToolResult = {
    content: [
      { type: 'text', text: summary },
      // The exact signed text (byte-identical to the stored receipt), so a client can verify the signature from content too.
      { type: 'text', text },
    ],
    structuredContent: response,
  };
  if (meta && Object.keys(meta).length > 0) result._meta = meta;
  return result;
}

export function errorResult(body: ErrorBody | Record<string, unknown>, meta?: Record<string, unknown>): CallToolResult {
  const result: CallToolResult = {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body as Record<string, unknown>,
  };
  if (meta && Object.keys(meta).length > 0) result._meta = meta;
  return result;
}

function toErrorBody(err: unknown, log: FastifyBaseLogger, tool: string): ErrorBody {
  if (isApiError(err)) return err.toBody();
  // Never leak internals to the client; the log keeps the stack.
  log.error({ err, tool }, 'MCP tool call failed');
  return errorBody('internal_error');
}

function parseRecordArgs(source: string): string {
  let args: unknown;
  try {
    const parsed = parseStrictJson(source);
    if (parsed.duplicateKeys.length > 0) {
      throw invalidRequest([{ field: parsed.duplicateKeys[0].key, problem: 'appears more than once', fix: 'send each argument once' }]);
    }
    args = parsed.value;
  } catch (e) {
    if (e instanceof StrictJsonError) throw invalidRequest([{ field: 'arguments', problem: 'is not strict JSON', fix: 'send {"agent_id": "<agent id>"}' }]);
    throw e;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw invalidRequest([{ field: 'arguments', problem: 'must be an object', fix: 'send {"agent_id": "<agent id>"}' }]);
  }
  const extra = Object.keys(args).filter((k) => k !== 'agent_id');
  if (extra.length > 0) {
    throw invalidRequest(extra.map((k) => ({ field: k, problem: 'unknown field', fix: 'remove it; the only argument is agent_id' })));
  }
  const agentId = (args as { agent_id?: unknown }).agent_id;
  if (typeof agentId !== 'string') {
    throw invalidRequest([
      { field: 'agent_id', problem: agentId === undefined ? 'is required' : 'must be a string', fix: 'send the agent_id used in verify_schema calls' },
    ]);
  }
  return agentId;
}

/** The arguments' own source text (`{}` when the call has none, as an empty REST body would be refused). */
function argumentsText(ctx: McpServerContext, requestId: string | number): string {
  const source = ctx.argumentSource(requestId);
  if (source === null) {
    throw invalidRequest([{ field: 'id', problem: 'is used by more than one call in this batch', fix: 'give every call in a batch its own id' }]);
  }
  return source ?? '{}';
}

function refusalResult(ctx: McpServerContext, refused: Refused | Failed): CallToolResult {
  if (refused.kind === 'failed') return errorResult(outcomeError(refused).toBody());
  const { code, paymentRequired, pending } = refused;
  if (pending && ctx.payments) {
    // The outcome is unknown: retry with the same payment (never told that nothing was charged).
    return errorResult(ctx.payments.settlementPendingBody(pending), { code: 'settlement_pending', retry_after: pending.retryAfter });
  }
  if (code !== 'free_allowance_exhausted' && code !== 'settlement_pending' && paymentRequired && ctx.payments) {
    const meta = ctx.payments.mcpPaymentRequiredMeta({ code, message: refused.message, allowance: refused.allowance, settlement: refused.settlement });
    return errorResult(paymentRequired, meta);
  }
  return errorResult(outcomeError(refused).toBody());
}

function completionMeta(ctx: McpServerContext, completion: Completion): Record<string, unknown> | undefined {
  const meta: Record<string, unknown> = {};
  // MCP clients rarely surface HTTP headers, so the allowance state REST sends as headers rides in _meta.
  if (completion.allowance) {
    const a = completion.allowance;
    meta[FREE_ALLOWANCE_META] = { limit: a.limit, remaining: a.remaining, resets_at: a.resetsAt };
  }
  if (completion.settlement && ctx.payments) meta[ctx.payments.mcpPaymentResponseMeta] = completion.settlement;
  return meta;
}

/** The tool call as the request lifecycle every transport shares, and its outcome as a tool result. */
async function runTool(ctx: McpServerContext, tool: ToolName, meta: Record<string, unknown> | undefined, requestId: string | number): Promise<CallToolResult> {
  try {
    const source = argumentsText(ctx, requestId);
    const admitCtx: AdmitContext = {
      transport: 'mcp',
      client: { clientKey: ctx.clientKey },
      payment: ctx.payments ? ctx.payments.readMcpPayment(meta) : undefined,
      resource: { url: ctx.endpointUrl, description: `MCP tool ${tool}`, mimeType: 'application/json', transport: 'mcp' },
    };
    const outcome = await ctx.pipeline.handle(
      tool === 'verify_schema' ? { operation: 'verify', source } : { operation: 'score', agentId: parseRecordArgs(source) },
      admitCtx,
    );
    if (outcome.kind !== 'answer') return refusalResult(ctx, outcome);
    const resultMeta = completionMeta(ctx, outcome.completion);
    switch (outcome.operation) {
      case 'verify':
        return successResult(outcome.text, outcome.receipt.response, receiptSummary(outcome.receipt.response), resultMeta);
      case 'score':
        return successResult(outcome.text, outcome.score.response, scoreSummary(outcome.score.response), resultMeta);
      case 'stored': {
        // The document this payment had already bought, as it was stored.
        const stored = JSON.parse(outcome.text) as Record<string, unknown>;
        const summary = outcome.of === 'verify' ? `result: ${String(stored.result)}; verification_id: ${String(stored.verification_id)} (already paid).` : scoreSummary(stored);
        return successResult(outcome.text, stored, summary, resultMeta);
      }
    }
  } catch (err) {
    return errorResult(toErrorBody(err, ctx.log, tool));
  }
}

function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/** The tools/list answer: the same for every request. */
const LISTED_TOOLS = TOOL_DEFINITIONS.map((t) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: t.inputSchema as { type: 'object' },
  outputSchema: t.outputSchema as { type: 'object' },
  annotations: t.annotations,
}));

/** A fresh server for one request. The SDK refuses to reuse a stateless transport, so servers are not shared either. */
export function createMcpServer(ctx: McpServerContext): Server {
  const server = new Server(
    { name: ctx.serverName, version: ctx.serverVersion },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: LISTED_TOOLS }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, _meta } = request.params;
    if (!isToolName(name)) {
      return errorResult(
        new ApiError('not_found', {
          message: `No such tool. Tools: ${TOOL_NAMES.join(', ')}.`,
          fields: [{ field: 'name', problem: 'no such tool', fix: `use one of: ${TOOL_NAMES.join(', ')}` }],
        }).toBody(),
      );
    }
    return runTool(ctx, name, _meta, extra.requestId);
  });

  return server;
}
