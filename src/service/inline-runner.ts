/**
 * @module The verification runner that works in the calling thread: strict
 * parse, validation and schema compilation for `prepare`, then verify + sign for
 * `run`. Used inside the worker pool's workers, by the CLI, and by the service
 * when the pool is turned off (VERIFY_WORKERS=0).
 */
import { parseVerificationRequest } from '../core/request.js';
import type { ParsedRequest } from '../core/types.js';
import type { Verifier } from '../core/verify.js';
import { canonicalize } from '../receipts/jcs.js';
import { sha256Hex } from '../receipts/hashes.js';
import type { IssuedReceipt, ReceiptIssuer, ReceiptStamp } from '../receipts/issue-receipt.js';
import type { PreparedVerification, VerificationRunner } from './pipeline.js';

export interface InlineRunnerOptions {
  verifier: Pick<Verifier, 'compile'>;
  issuer: ReceiptIssuer;
  /** Maximum nesting depth of a request (docs/protocol.md#strict-json, default 64). */
  maxDepth: number;
}

/** Parse, validate and compile (throws ApiError); the compiled schema stays in the verifier's cache for `issue`. */
export function prepareRequest(source: string | Uint8Array, options: InlineRunnerOptions): ParsedRequest {
  const parsed = parseVerificationRequest(source, { maxDepth: options.maxDepth });
  // The schema hash is the cache key the issuer uses, so the run finds the compiled schema.
  options.verifier.compile(parsed.request.expected_schema, { schemaKey: sha256Hex(canonicalize(parsed.request.expected_schema)) });
  return parsed;
}

export function preparedOf(source: string | Uint8Array, parsed: ParsedRequest): PreparedVerification {
  return {
    operation: 'verify',
    source,
    bodyBytes: typeof source === 'string' ? Buffer.byteLength(source, 'utf8') : source.byteLength,
    taskId: parsed.request.task_id,
    agentId: parsed.request.agent_id,
  };
}

export function createInlineRunner(options: InlineRunnerOptions): VerificationRunner {
  // The parse of each prepared request, so that run() does not parse it again.
  const parsedOf = new WeakMap<PreparedVerification, ParsedRequest>();
  return {
    async prepare(source) {
      const parsed = prepareRequest(source, options);
      const prepared = preparedOf(source, parsed);
      parsedOf.set(prepared, parsed);
      return prepared;
    },
    async run(prepared, stamp: ReceiptStamp): Promise<IssuedReceipt> {
      const parsed = parsedOf.get(prepared) ?? parseVerificationRequest(prepared.source, { maxDepth: options.maxDepth });
      return options.issuer.issue(parsed, stamp);
    },
    async close() {},
  };
}
