/**
 * @module REST adapter of batch verification: POST /verify/batch. One schema,
 * bounds and rules shared by up to `maxItems` outputs, each with its own task_id
 * and agent_id. Each item becomes the request /verify/schema would receive (the
 * shared fields plus the item's own) and goes through the same admission pipeline
 * (prepare → admit → execute), so every receipt is the one /verify/schema would
 * sign for that request, stored and logged the same way. The whole batch is
 * validated and admitted before anything runs: an invalid batch is one 422 naming
 * the item and field, and the free allowance is taken for every item up front or
 * not at all.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestField } from '../core/request.js';
import { DEFAULT_MAX_DEPTH, parseStrictJson, StrictJsonError } from '../core/strict-json.js';
import type { Json } from '../core/types.js';
import { ApiError, invalidRequest, type FieldProblem } from '../errors.js';
import { canonicalize } from '../receipts/jcs.js';
import { refusalError, type Admitted, type AdmitContext, type Pipeline, type PreparedVerification } from '../service/pipeline.js';
import type { AllowanceInfo } from '../service/types.js';
import { errorResponses } from './schemas.js';
import { setAllowanceHeaders } from './verify-routes.js';

export interface BatchRoutesOptions {
  pipeline: Pipeline;
  clientKey(request: FastifyRequest): string;
  bodyLimit: number;
  /** Most items one batch may carry. */
  maxItems: number;
  /** Nesting limit of one item's request; the batch body may nest two levels deeper (items → [i]). */
  maxDepth?: number;
  /** With payments on the route refuses every batch (a price per item is not charged yet). */
  paymentsOn: boolean;
}

const SHARED_FIELDS = ['expected_schema', 'bounds', 'rules', 'enforce_rules', 'strict_content_check', 'detail'] as const;
const ITEM_FIELDS = new Set(['task_id', 'agent_id', 'submitted_output']);
const BATCH_FIELDS = new Set<string>([...SHARED_FIELDS, 'items']);
const JSON_TYPE = 'application/json; charset=utf-8';

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
            ...errorResponses(413, 415, 422, 429, 500, 501, 503),
          },
        },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        if (options.paymentsOn) throw new ApiError('batch_unavailable_with_payments');
        const body: unknown = request.body;
        if (!Buffer.isBuffer(body) || body.length === 0) {
          throw invalidRequest([{ field: 'body', problem: 'empty', fix: 'Send a JSON batch request {expected_schema, items: [...]}.' }]);
        }
        const texts = splitBatch(body, { maxItems: options.maxItems, maxDepth });
        // Every item is validated (and the schema compiled, once, into the cache) before anything is reserved.
        const prepared: PreparedVerification[] = [];
        for (let i = 0; i < texts.length; i++) {
          try {
            prepared.push(await pipeline.prepareVerification(texts[i] as string));
          } catch (e) {
            if (e instanceof ApiError) {
              throw new ApiError(e.code, {
                message: `Item ${i} of the batch is not valid: ${e.message}`,
                fields: e.fields.map((f) => ({ ...f, field: itemField(i, f.field) })),
                retryAfter: e.retryAfter,
              });
            }
            throw e;
          }
        }

        const client = { clientKey: options.clientKey(request) };
        const ctx: AdmitContext = { transport: 'batch', client, resource: { url: request.url, transport: 'http', method: 'POST' } };
        // All or nothing: refuse without taking anything when fewer units remain than items.
        const before = await pipeline.peekAllowance(client);
        if (!before.allowed || before.remaining < prepared.length) {
          setAllowanceHeaders(reply, before);
          throw new ApiError('free_allowance_exhausted', {
            message: `This batch needs ${prepared.length} verifications of the free daily allowance and ${before.remaining} remain; it resets at ${before.resetsAt}. Nothing was taken.`,
            retryAfter: before.retryAfter,
          });
        }
        const admissions: Admitted[] = [];
        const releaseAll = (from: number, reason: string) =>
          Promise.all(admissions.slice(from).map((a) => a.release(reason).catch(() => undefined)));
        for (const p of prepared) {
          const admission = await pipeline.admit(p, ctx).catch(async (err: unknown) => {
            await releaseAll(0, 'batch_refused');
            throw err;
          });
          if (!admission.admitted) {
            // Another request spent the allowance meanwhile: give back what this batch took.
            await releaseAll(0, 'batch_refused');
            setAllowanceHeaders(reply, await pipeline.peekAllowance(client));
            throw refusalError(admission);
          }
          admissions.push(admission);
        }

        const receipts: string[] = [];
        let passed = 0;
        let allowance: AllowanceInfo | undefined;
        for (let i = 0; i < prepared.length; i++) {
          let done;
          try {
            done = await pipeline.execute(prepared[i] as PreparedVerification, admissions[i] as Admitted, 'batch');
          } catch (err) {
            // The failed item was refunded by execute; the items not run yet are refunded here.
            await releaseAll(i + 1, 'work_failed');
            throw err;
          }
          if ('admitted' in done || done.result.operation !== 'verify') {
            await releaseAll(i + 1, 'work_failed');
            throw new Error('a batch item produced no receipt');
          }
          receipts.push(done.result.receipt.text);
          if (done.result.receipt.result === 'pass') passed++;
          allowance = done.completion.allowance ?? allowance;
        }
        setAllowanceHeaders(reply, allowance ?? (await pipeline.peekAllowance(client)));
        const summary = JSON.stringify({ total: receipts.length, passed, failed: receipts.length - passed });
        // The signed texts go out byte for byte: each is exactly what its signature covers.
        return reply.code(200).type(JSON_TYPE).send(`{"summary":${summary},"receipts":[${receipts.join(',')}]}`);
      },
    );
  });
}
