/**
 * @module verifyAndRepair: the repair loop of `agent-output-verifier/client`
 * (docs/repair.md). Verify through the service; when the receipt fails, apply
 * its determined repairs and verify again; when no repair is left, ask the
 * caller's `regenerate` (their model) with the remaining hints and verify its
 * answer. Every output the loop returns was verified as sent: a patched or
 * regenerated output is never passed on without its own signed receipt.
 *
 * Bounded by verifications (`maxAttempts`) and total time (`timeoutMs`); every
 * way of not reaching a pass ends in a RepairLoopError that carries the
 * receipts so far. Browser-safe like the rest of the client.
 */
import {
  applyRepairs,
  DEFAULT_MAX_BODY_BYTES,
  jsonBodyBytes,
  outputHash,
  RepairError,
  type RepairOption,
  type RepairRecord,
} from '../repair/apply-repairs.js';
import type { Hint, JsonValue, Receipt, VerificationRequest } from './types.js';

/** What `regenerate` is told about the output that still fails. */
export interface RegenerateFeedback {
  /** The remaining problems as short text, one per line, ready for a prompt. */
  text: string;
  /** The same hints as JSON (with their `repair` members, when any). */
  hints: Hint[];
  blockingChecks: string[];
  /** The output that failed (with the determined repairs already applied). */
  output: JsonValue;
  /** The failing receipt. */
  receipt: Receipt;
  /** 1 for the first call to regenerate, 2 for the next… */
  attempt: number;
  /** Aborted when the loop's time is up: pass it to your model call. */
  signal: AbortSignal;
}

/** The caller's model: return the corrected output as a JSON value, or as JSON text. */
export type Regenerate = (feedback: RegenerateFeedback) => unknown;

/** Options of VerifierClient.verifyAndRepair: the request, and how far the loop may go. */
export interface VerifyAndRepairOptions {
  /** The first request to verify. */
  request: VerificationRequest;
  /** Called when the receipt fails and no repair applies. Without it the loop stops there. */
  regenerate?: Regenerate;
  /** Verifications at most, the first included (default 3). Each one is a call to the service. */
  maxAttempts?: number;
  /** The whole loop's time budget in milliseconds, model calls included (default 60000). */
  timeoutMs?: number;
  /** Also apply the first option of each candidate repair (default false). */
  candidates?: boolean;
  /** The service's body limit (BODY_LIMIT_BYTES, default 1 MiB): no request over it is sent. */
  maxBodyBytes?: number;
}

/** One verification of the loop. */
export interface RepairAttempt {
  /** What produced the output: the caller, the receipt's repairs, or `regenerate`. */
  kind: 'initial' | 'repair' | 'regenerate';
  request: VerificationRequest;
  receipt: Receipt;
  /** The receipt exactly as received (the signed bytes). */
  text: string;
  /** For `repair`: the repairs applied. */
  applied?: RepairRecord[];
}

/** What VerifierClient.verifyAndRepair resolves with: the request that passed and every receipt on the way. */
export interface VerifyAndRepairResult {
  result: 'pass';
  /** The request that passed, and its output. */
  request: VerificationRequest;
  output: JsonValue;
  /** Every attempt's receipt, in order; the last one is the pass. */
  receipts: Receipt[];
  attempts: RepairAttempt[];
}

/** Why a repair loop ended without a pass (RepairLoopError.code). */
export type RepairLoopErrorCode =
  | 'not_converged'
  | 'timeout'
  | 'regenerate_failed'
  | 'regenerate_invalid'
  | 'body_limit'
  | 'repair_failed'
  | 'verify_failed';

/** The loop ended without a pass. `receipts` and `attempts` hold everything verified so far (the last one failing). */
export class RepairLoopError extends Error {
  readonly code: RepairLoopErrorCode;
  readonly receipts: Receipt[];
  readonly attempts: RepairAttempt[];
  constructor(code: RepairLoopErrorCode, message: string, attempts: RepairAttempt[], cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'RepairLoopError';
    this.code = code;
    this.attempts = attempts.slice();
    this.receipts = attempts.map((a) => a.receipt);
  }
}

type HintWithRepair = Hint & { repair?: { certainty: string; note?: string; options?: RepairOption[] } };

/** The remaining problems as prompt text: the checks that block, then one line per hint. */
export function feedbackText(receipt: Receipt): string {
  const hints = (receipt.hints ?? []) as HintWithRepair[];
  const lines = [`The output failed verification (blocking: ${receipt.summary.blocking_checks.join(', ') || 'none'}). Fix every problem below and answer with the corrected JSON only.`];
  for (const h of hints) {
    let line = `- ${h.check} at ${h.path || '(root)'}: expected ${h.expected}, found ${h.found}`;
    if (h.repair?.certainty === 'candidate' && h.repair.options) line += `; possible fixes: ${h.repair.options.map((o) => o.note).join(' | ')}`;
    else if (h.repair?.note) line += `; fix: ${h.repair.note}`;
    lines.push(line);
  }
  if ((receipt.hints_omitted ?? 0) > 0) lines.push(`(${receipt.hints_omitted} more problems not listed)`);
  return lines.join('\n');
}

class Deadline extends Error {}

/**
 * Runs the loop with `verify` (the client's POST /verify/schema). Resolves with
 * the pass; rejects with a RepairLoopError otherwise.
 */
export async function runRepairLoop(
  verify: (request: VerificationRequest, signal: AbortSignal) => Promise<{ body: Receipt; text: string }>,
  options: VerifyAndRepairOptions,
): Promise<VerifyAndRepairResult> {
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 3));
  const timeoutMs = options.timeoutMs ?? 60_000;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const attempts: RepairAttempt[] = [];
  const fail = (code: RepairLoopErrorCode, message: string, cause?: unknown) => new RepairLoopError(code, message, attempts, cause);

  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new Deadline('time is up'));
      reject(new Deadline('time is up'));
    }, timeoutMs);
  });
  expired.catch(() => undefined);
  // Every wait races the deadline, so a model or a network that never answers cannot hold the loop.
  const inTime = <T>(work: Promise<T>): Promise<T> => Promise.race([work, expired]);

  // The loop needs the hints, which only the full form carries; detail is not part of any hash.
  let current: VerificationRequest = options.request.detail === 'compact' ? { ...options.request, detail: 'full' } : options.request;
  const failedOutputs = new Set<string>();

  const verifyOnce = async (request: VerificationRequest, kind: RepairAttempt['kind'], applied?: RepairRecord[]): Promise<Receipt> => {
    const bytes = jsonBodyBytes(request);
    if (bytes > maxBodyBytes) throw fail('body_limit', `the ${kind === 'initial' ? 'request' : `${kind === 'repair' ? 'repaired' : 'regenerated'} request`} is ${bytes} bytes, over the body limit of ${maxBodyBytes}; it was not sent`);
    let answer: { body: Receipt; text: string };
    try {
      answer = await inTime(verify(request, controller.signal));
    } catch (e) {
      if (e instanceof Deadline || controller.signal.aborted) throw fail('timeout', `no pass within ${timeoutMs} ms (during a verification)`, e);
      throw fail('verify_failed', `the service refused the ${kind} request: ${e instanceof Error ? e.message : String(e)}`, e);
    }
    attempts.push({ kind, request, receipt: answer.body, text: answer.text, ...(applied ? { applied } : {}) });
    if (answer.body.result === 'fail') failedOutputs.add(answer.body.output_hash);
    return answer.body;
  };
  const budgetLeft = (why: string) => {
    if (attempts.length >= maxAttempts) throw fail('not_converged', `still failing after ${attempts.length} verification${attempts.length === 1 ? '' : 's'} (maxAttempts ${maxAttempts}); ${why}`);
  };

  try {
    let receipt = await verifyOnce(current, 'initial');
    let regenerations = 0;
    while (receipt.result !== 'pass') {
      let repaired;
      try {
        repaired = applyRepairs(current, receipt, { candidates: options.candidates, maxBodyBytes });
      } catch (e) {
        if (e instanceof RepairError) throw fail(e.code === 'body_limit' ? 'body_limit' : 'repair_failed', e.message, e);
        throw e;
      }
      if (repaired.applied.length > 0) {
        budgetLeft('the last receipt has repairs left to verify');
        current = repaired.request;
        receipt = await verifyOnce(current, 'repair', repaired.applied);
        continue;
      }
      if (!options.regenerate) throw fail('not_converged', 'the output still fails, no repair applies, and no regenerate was given');
      budgetLeft('no verification left for a regenerated output');
      regenerations += 1;
      const feedback: RegenerateFeedback = {
        text: feedbackText(receipt),
        hints: (receipt.hints ?? []).slice(),
        blockingChecks: receipt.summary.blocking_checks.slice(),
        output: current.submitted_output,
        receipt,
        attempt: regenerations,
        signal: controller.signal,
      };
      let answer: unknown;
      try {
        answer = await inTime(Promise.resolve().then(() => options.regenerate!(feedback)));
      } catch (e) {
        if (e instanceof Deadline) throw fail('timeout', `no pass within ${timeoutMs} ms (waiting for regenerate)`, e);
        throw fail('regenerate_failed', `regenerate threw: ${e instanceof Error ? e.message : String(e)}`, e);
      }
      const output = asJson(answer);
      if (output === undefined) throw fail('regenerate_invalid', `regenerate returned ${describe(answer)}, not a JSON value or JSON text`);
      if (failedOutputs.has(outputHash(output))) throw fail('not_converged', 'regenerate returned an output already verified and failing');
      current = { ...current, submitted_output: output };
      receipt = await verifyOnce(current, 'regenerate');
    }
    return { result: 'pass', request: current, output: current.submitted_output, receipts: attempts.map((a) => a.receipt), attempts };
  } finally {
    clearTimeout(timer);
  }
}

/** A JSON value from what a model returned: text is parsed as JSON (a Markdown code fence around it is dropped); anything without a JSON form is undefined. */
export function asJson(value: unknown): JsonValue | undefined {
  let parsed = value;
  if (typeof value === 'string') {
    // Models often wrap JSON in a Markdown code fence: the fence is not part of the answer.
    const fenced = /^\s*```[a-zA-Z0-9]*\s*\n([\s\S]*?)\n?```\s*$/.exec(value);
    try {
      parsed = JSON.parse(fenced ? fenced[1] : value);
    } catch {
      return undefined;
    }
  }
  try {
    outputHash(parsed); // the canonical form exists only for plain JSON (no undefined, NaN, functions, cycles)
  } catch {
    return undefined;
  }
  return parsed as JsonValue;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `text that is not JSON (${JSON.stringify(value.slice(0, 60))}${value.length > 60 ? '…' : ''})`;
  if (value === undefined) return 'undefined';
  return `a value without a JSON form (${typeof value})`;
}
