/**
 * @module A verification worker of the pool (src/service/pool-runner.ts). Each worker
 * holds its own verifier and compiled-schema cache and answers one kind of task, `draft`: strict parse, request validation, schema compilation,
 * evaluation and the response ready to be signed. Replies are plain data: an
 * ApiError crosses the thread boundary as its code and fields, never as an exception,
 * so the main thread renders exactly the error the inline runner would have thrown.
 * Private keys never enter a worker; the main thread signs the draft.
 */
import { threadId } from 'node:worker_threads';
import { workerData } from 'piscina';
import { isApiError } from '../errors.js';
import { createPresigner } from '../receipts/v1/attestation.js';
import { draftReceipt } from '../receipts/issue-receipt.js';
import type { Verifier } from '../core/verify.js';
import { createConfiguredVerifier } from './issuer.js';
import { parseVerificationRequest } from '../core/request.js';
import { abortedByMemory } from './inline-runner.js';
import { createTaskSlots, type VerifyTask, type VerifyTaskReply, type VerifyWorkerData } from './verify-task.js';

const data = workerData as VerifyWorkerData;
let lastSteps = 0;
const verifier = createConfiguredVerifier(data.verifier, { onEvaluated: (e) => (lastSteps = e.steps) });
const presigner = createPresigner({ serviceName: data.serviceName, baseUrl: data.baseUrl });
const slots = createTaskSlots(data.slots);
const slot = slots.claim(threadId);
// With a compiled-schema cache, the compile right after an evaluation under the same key is a
// lookup, so the schema's facts cost nothing; without one they would cost a second compile.
const cached = data.verifier.schemaCacheSize > 0 && data.verifier.schemaCacheBytes > 0;
let lastKey: string | undefined;
const keyed: Pick<Verifier, 'evaluate'> = {
  evaluate(parsed, options) {
    lastKey = options?.schemaKey;
    return verifier.evaluate(parsed, options);
  },
};

// The first `\p{…}` in any pattern scans a string of every code point (about 0.1 s of CPU). Built
// here, before the worker takes tasks, it never counts against a request's deadline; a replaced
// worker pays it again at its own start, not a caller.
try {
  verifier.compile({ type: 'string', pattern: '^\\p{L}*$' }, { schemaKey: 'warm-up' });
} catch {
  // A warm-up that fails only leaves the cost to the first request that needs it.
}

export default function handle(task: VerifyTask): VerifyTaskReply {
  // The pool's deadline starts now, not when the task was queued.
  if (task.token !== undefined) slots.start(slot, task.token, Date.now());
  try {
    const parsed = parseVerificationRequest(task.source, { maxDepth: data.maxDepth });
    lastKey = undefined;
    lastSteps = 0;
    const draft = draftReceipt(parsed, { verificationId: task.verificationId, verifiedAt: task.verifiedAt }, task.keyVersion, {
      verifier: keyed,
      presigner,
      verifierVersion: data.verifierVersion,
      input: data.signingInput,
    });
    if (task.facts === true && cached && lastKey !== undefined) {
      // Deterministic facts about compiling this schema: the main thread decides from them whether it may hold it.
      const { compiledSize } = verifier.compile(parsed.request.expected_schema, { schemaKey: lastKey });
      return { ok: true, kind: 'draft', draft, schema: { key: lastKey, compiledSize, steps: lastSteps } };
    }
    return { ok: true, kind: 'draft', draft };
  } catch (err) {
    const e = abortedByMemory(err);
    if (isApiError(e)) return { ok: false, error: { code: e.code, message: e.message, fields: e.fields, retryAfter: e.retryAfter } };
    throw e;
  } finally {
    slots.finish(slot);
  }
}
