/**
 * @module REST adapter of batch verification: POST /verify/batch. One schema,
 * bounds and rules shared by up to `maxItems` outputs, each with its own task_id
 * and agent_id. Each item becomes the request /verify/schema would receive (the
 * shared fields plus the item's own) and goes through the same admission pipeline
 * (`pipeline.handle` with a batch source), so every receipt is the one /verify/schema
 * would sign for that request, stored and logged the same way. All or nothing: the
 * whole batch is validated before anything is reserved (an invalid batch is one 422
 * naming the item and field); it is admitted whole (N free allowance units in one
 * statement, or one x402 payment of N × the verification price) or refused whole;
 * every item runs, then every receipt is stored in one transaction, and only then
 * settled and sent. A failed item or store write stores nothing and gives back the
 * units (or releases the payment).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestField } from '../core/request.js';
import { DEFAULT_MAX_DEPTH, parseStrictJson, StrictJsonError } from '../core/strict-json.js';
import type { Json } from '../core/types.js';
import { invalidRequest, type FieldProblem } from '../errors.js';
import { canonicalize } from '../receipts/jcs.js';
import type { PaymentEncoding } from '../payments/transport.js';
import type { AdmitContext, Pipeline } from '../service/pipeline.js';
import { paymentRequiredResponse } from './payment-schemas.js';
import { errorResponses } from './schemas.js';
import { sendCompletedReply, sendRefusalReply } from './verify-routes.js';

export interface BatchRoutesOptions {
  pipeline: Pipeline;
  clientKey(request: FastifyRequest): string;
  bodyLimit: number;
  /** Most items one batch may carry. */
  maxItems: number;
  /** Nesting limit of one item's request; the batch body may nest two levels deeper (items → [i]). */
  maxDepth?: number;
  /** Public base URL, for PaymentRequired.resource.url. */
  baseUrl?: string;
  /** The x402 encodings when payments are on: a batch of N then costs N × the verification price, paid once. */
  payments?: PaymentEncoding | null;
}

const SHARED_FIELDS = ['expected_schema', 'bounds', 'rules', 'enforce_rules', 'strict_content_check', 'detail', 'strict_schema'] as const;
const ITEM_FIELDS = new Set(['task_id', 'agent_id', 'submitted_output']);
const BATCH_FIELDS = new Set<string>([...SHARED_FIELDS, 'items']);

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Name an item's field problem as a batch field: `task_id` of item 3 is `items[3].task_id`; shared fields keep their name. */
function itemField(index: number, field: string): string {
  const head = /^[A-Za-z_]+/.exec(field)?.[0] ?? '';
  if (ITEM_FIELDS.has(head)) return `items[${index}].${field}`;
  if (field === 'body') return `items[${index}]`;
  return field;
}

/**
 * Strictly parse and check the batch envelope, then build each item's own request
 * text (shared fields + item fields, in canonical JSON form). Throws a 422.
 */
export function splitBatch(body: Buffer | string, options: { maxItems: number; maxDepth: number }): string[] {
  let parsed;
  try {
    parsed = parseStrictJson(body, { maxDepth: options.maxDepth + 2 });
  } catch (e) {
    if (!(e instanceof StrictJsonError)) throw e;
    const field = e.kind === 'invalid_json' ? 'body' : requestField(e.segments);
    throw invalidRequest([{ field, problem: `is not strict JSON (${e.kind})`, fix: 'Send one well-formed I-JSON object (RFC 7493), UTF-8 encoded.' }]);
  }
  // Re-serialising an item would silently drop a repeated key, so a batch must not have any.
  const dup = parsed.duplicateKeys[0];
  if (dup) {
    throw invalidRequest([
      { field: requestField([...dup.segments, dup.key]), problem: 'is a key that appears twice in its object', fix: 'Send each key once (or send this output alone to /verify/schema).' },
    ]);
  }
  const root = parsed.value;
  if (!isObject(root)) throw invalidRequest([{ field: 'body', problem: 'is not a JSON object', fix: 'Send {expected_schema, items: [...], ...}.' }]);
  const problems: FieldProblem[] = [];
  for (const key of Object.keys(root)) {
    if (!BATCH_FIELDS.has(key)) problems.push({ field: key, problem: 'is not a field of a batch request', fix: `Remove it; allowed: ${[...BATCH_FIELDS].join(', ')}.` });
  }
  const items = root.items;
  if (!Array.isArray(items)) {
    problems.push({ field: 'items', problem: items === undefined ? 'is missing' : 'is not an array', fix: 'Send items: [{task_id, agent_id?, submitted_output}, ...].' });
  } else if (items.length === 0 || items.length > options.maxItems) {
    problems.push({ field: 'items', problem: `has ${items.length} items`, fix: `Send between 1 and ${options.maxItems} items; split larger batches.` });
  }
  if (problems.length) throw invalidRequest(problems);
  const shared: Record<string, Json> = {};
  for (const key of SHARED_FIELDS) if (key in root) shared[key] = root[key] as Json;
  return (items as Json[]).map((item, i) => {
    if (!isObject(item)) throw invalidRequest([{ field: `items[${i}]`, problem: 'is not a JSON object', fix: 'Send {task_id, agent_id?, submitted_output}.' }]);
    for (const key of Object.keys(item)) {
      if (!ITEM_FIELDS.has(key)) {
        throw invalidRequest([{ field: `items[${i}].${key}`, problem: 'is not a field of a batch item', fix: 'Send only task_id, agent_id and submitted_output per item; shared fields go at the top.' }]);
      }
    }
    return canonicalize({ ...shared, ...item });
  });
}

export async function batchRoutes(app: FastifyInstance, options: BatchRoutesOptions): Promise<void> {
  const { pipeline } = options;
  const payments = options.payments ?? null;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

    scope.post(
      '/verify/batch',
      {
        bodyLimit: options.bodyLimit,
        // The strict parser validates; the declared schema is documentation.
        validatorCompiler: () => () => true,
        schema: {
          summary: `Verify up to ${options.maxItems} outputs against one schema; one signed receipt per output, in order`,
          tags: ['verify'],
          body: {
            type: 'object',
            required: ['expected_schema', 'items'],
            properties: {
              expected_schema: { type: 'object' },
              strict_schema: { type: 'boolean', default: false, description: 'An unknown schema keyword or format is a 422 for the whole batch (nothing taken or charged).' },
              items: {
                type: 'array',
                minItems: 1,
                maxItems: options.maxItems,
                items: { type: 'object', required: ['task_id', 'submitted_output'], properties: { task_id: { type: 'string' }, agent_id: { type: 'string' }, submitted_output: {} } },
              },
            },
          },
          response: {
            200: {
              description: 'A summary and one signed receipt per item, in order.',
              type: 'object',
              properties: {
                summary: { type: 'object', properties: { total: { type: 'integer' }, passed: { type: 'integer' }, failed: { type: 'integer' } } },
                receipts: { type: 'array', items: { $ref: 'Receipt#' } },
              },
            },
            ...errorResponses(413, 415, 422, 429, 500, 503),
            ...(payments ? paymentRequiredResponse() : {}),
          },
        },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const body: unknown = request.body;
        if (!Buffer.isBuffer(body) || body.length === 0) {
          throw invalidRequest([{ field: 'body', problem: 'empty', fix: 'Send a JSON batch request {expected_schema, items: [...]}.' }]);
        }
        const items = splitBatch(body, { maxItems: options.maxItems, maxDepth });
        const ctx: AdmitContext = {
          transport: 'batch',
          client: { clientKey: options.clientKey(request) },
          payment: payments ? payments.readPaymentSignature(request.headers['payment-signature']) : undefined,
          resource: {
            url: `${options.baseUrl ?? ''}/verify/batch`,
            description: `Verify ${items.length} outputs against one schema: one signed receipt per output (${items.length} × the verification price)`,
            mimeType: 'application/json',
            transport: 'http',
            method: 'POST',
          },
        };
        const done = await pipeline.handle({ operation: 'batch', items, itemField }, ctx);
        if (done.kind !== 'answer') return sendRefusalReply(reply, done, payments);
        const summary = JSON.stringify({ total: done.texts.length, passed: done.passed, failed: done.texts.length - done.passed });
        // Sent only now, after every receipt is committed (and, when paid, settled). The signed texts go
        // out byte for byte: each is exactly what its signature covers.
        return sendCompletedReply(reply, done.completion, `{"summary":${summary},"receipts":[${done.texts.join(',')}]}`, payments);
      },
    );
  });
}
