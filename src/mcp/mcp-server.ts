/**
 * @module One MCP server per HTTP request (stateless Streamable HTTP): the
 * official SDK's low-level Server with tools/list and tools/call handlers that
 * translate JSON-RPC into VerifierService calls and back. No verification logic
 * here. The low-level Server is used (not McpServer + zod) so that the advertised
 * JSON Schemas are exactly ours and arguments reach the service's validator
 * untouched (see tool-definitions.ts).
 */
import type { FastifyBaseLogger } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError, errorBody, invalidRequest, isApiError, type ErrorBody } from '../errors.js';
import type { SignedResult, VerifierService } from '../service/types.js';
import type { ReceiptRecord } from '../store/store.js';
import type { DuplicateKeyFinding } from '../core/strict-json.js';
import type { AdmitToolCall, ToolCallContext } from './admission.js';
import { applyDuplicateKeys } from './envelope.js';
import { TOOL_DEFINITIONS, TOOL_NAMES, type ToolName } from './tool-definitions.js';

export interface McpServerContext {
  service: VerifierService;
  serverName: string;
  serverVersion: string;
  admit: AdmitToolCall;
  /** Builds the admission context for a call (client key, request, `_meta`). */
  callContext(tool: ToolName, meta: Record<string, unknown> | undefined): ToolCallContext;
  log: FastifyBaseLogger;
  /** Duplicate keys the strict body parser found in the arguments of the call with this JSON-RPC id. */
  duplicateKeys?(requestId: string | number): readonly DuplicateKeyFinding[];
  /** The call's arguments as strictly parsed from the body (undefined: use the SDK's copy). */
  rawArguments?(requestId: string | number): unknown;
}

const INSTRUCTIONS =
  'Verify agent output before paying for it or sending it: call verify_schema with the JSON Schema, the output, and ' +
  'optional bounds and rules; act on result / hints. Receipts are Ed25519-signed (key in /.well-known/agent-card.json). ' +
  "get_verification_record returns an agent's signed trust score.";

function ratio(value: unknown): string | null {
  const s = value as { ratio?: unknown; passed?: unknown; total?: unknown } | undefined;
  if (!s || typeof s.ratio !== 'number') return null;
  return `${String(s.passed)}/${String(s.total)} (${s.ratio})`;
}

/** One line a model can act on without parsing the JSON. */
export function receiptSummary(response: Record<string, unknown>): string {
  const summary = response.summary as { blocking_checks?: unknown } | undefined;
  const blocking = Array.isArray(summary?.blocking_checks) ? (summary.blocking_checks as string[]) : [];
  const parts = [`result: ${String(response.result)}`];
  parts.push(`blocking checks: ${blocking.length > 0 ? blocking.join(', ') : 'none'}`);
  const scores: Array<[string, string]> = [
    ['schema', 'schema_compliance'],
    ['integrity', 'integrity_checks'],
    ['overall', 'overall'],
  ];
  for (const [label, key] of scores) {
    const r = ratio(response[key]);
    if (r !== null) parts.push(`${label} ${r}`);
  }
  parts.push(`verification_id: ${String(response.verification_id)}`);
  const next = response.result === 'fail' ? 'Fix what hints[] describe and verify again.' : 'Attach this signed receipt (seller) or proceed to payment (buyer).';
  return `${parts.join('; ')}. ${next}`;
}

function scoreSummary(response: Record<string, unknown>): string {
  return `agent ${String(response.agent_id)}: trust score ${String(response.score)} (0-100), signed at ${String(
    (response.attestation as { timestamp?: unknown } | undefined)?.timestamp,
  )}.`;
}

function successResult(signed: SignedResult, summary: string, meta: Record<string, unknown> | undefined): CallToolResult {
  const result: CallToolResult = {
    content: [
      { type: 'text', text: summary },
      // The exact signed text (byte-identical to the stored receipt), so a client can verify the signature from content too.
      { type: 'text', text: signed.text },
    ],
    structuredContent: signed.response,
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

function parseRecordArgs(args: unknown): string {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw invalidRequest([{ field: 'arguments', problem: 'must be an object', fix: 'send {"agent_id": "<agent id>"}' }]);
  }
  const extra = Object.keys(args).filter((k) => k !== 'agent_id');
  if (extra.length > 0) {
    throw invalidRequest(
      extra.map((k) => ({ field: k, problem: 'unknown field', fix: 'remove it; the only argument is agent_id' })),
    );
  }
  const agentId = (args as { agent_id?: unknown }).agent_id;
  if (typeof agentId !== 'string') {
    throw invalidRequest([
      { field: 'agent_id', problem: agentId === undefined ? 'is required' : 'must be a string', fix: 'send the agent_id used in verify_schema calls' },
    ]);
  }
  return agentId;
}

type Work = (options: { deferStore: boolean }) => Promise<{ signed: SignedResult; summary: string; record: ReceiptRecord | null }>;

/** Validate the arguments now (throws ApiError); the returned work runs only once admitted. */
function prepare(ctx: McpServerContext, tool: ToolName, args: unknown, requestId: string | number): Work {
  if (tool === 'verify_schema') {
    const parsed = applyDuplicateKeys(ctx.service.parseRequestValue(args ?? {}), ctx.duplicateKeys?.(requestId) ?? []);
    return async ({ deferStore }) => {
      if (deferStore) {
        const { signed, record } = await ctx.service.issue(parsed);
        return { signed, summary: receiptSummary(signed.response), record };
      }
      const signed = await ctx.service.verify(parsed);
      return { signed, summary: receiptSummary(signed.response), record: null };
    };
  }
  const agentId = parseRecordArgs(args ?? {});
  return async () => {
    const signed = await ctx.service.score(agentId);
    return { signed, summary: scoreSummary(signed.response), record: null };
  };
}

/** Validate → admit → run → complete (or release on failure). */
async function runTool(
  ctx: McpServerContext,
  tool: ToolName,
  args: unknown,
  meta: Record<string, unknown> | undefined,
  requestId: string | number,
): Promise<CallToolResult> {
  try {
    // Invalid requests are refused before anything is admitted (nothing spent, no payment asked).
    const work = prepare(ctx, tool, args, requestId);
    const admission = await ctx.admit(ctx.callContext(tool, meta));
    if (!admission.admitted) return errorResult(admission.structuredContent, admission.meta);

    if (admission.answer) {
      const answered = admission.answer;
      const meta = await admission.complete({ verificationId: null });
      if (meta && 'admitted' in meta) return errorResult(meta.structuredContent as Record<string, unknown>, meta.meta as Record<string, unknown> | undefined);
      return successResult(answered, tool === 'verify_schema' ? receiptSummary(answered.response) : scoreSummary(answered.response), meta);
    }
    let outcome: Awaited<ReturnType<Work>>;
    try {
      outcome = await work({ deferStore: admission.deferStore === true });
    } catch (err) {
      await admission.release().catch((releaseErr: unknown) => ctx.log.error({ err: releaseErr, tool }, 'MCP admission release failed'));
      throw err;
    }
    const verificationId = outcome.signed.response.verification_id;
    const resultMeta = await admission.complete({ verificationId: typeof verificationId === 'string' ? verificationId : null, record: outcome.record });
    // A paid call whose settlement failed or is pending: no receipt is handed out.
    if (resultMeta && 'admitted' in resultMeta) {
      return errorResult(resultMeta.structuredContent as Record<string, unknown>, resultMeta.meta as Record<string, unknown> | undefined);
    }
    return successResult(outcome.signed, outcome.summary, resultMeta);
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
    const args = ctx.rawArguments?.(extra.requestId) ?? request.params.arguments;
    if (!isToolName(name)) {
      return errorResult(
        new ApiError('not_found', {
          message: `No such tool. Tools: ${TOOL_NAMES.join(', ')}.`,
          fields: [{ field: 'name', problem: 'no such tool', fix: `use one of: ${TOOL_NAMES.join(', ')}` }],
        }).toBody(),
      );
    }
    return runTool(ctx, name, args, _meta as Record<string, unknown> | undefined, extra.requestId);
  });

  return server;
}
