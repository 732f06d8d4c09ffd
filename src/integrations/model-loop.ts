/**
 * @module The repair loop around a chat model, shared by the framework
 * adapters (agent-output-verifier/ai-sdk, agent-output-verifier/langchain):
 * ask the model, verify its JSON through the service, and re-ask in the same
 * conversation with the remaining hints until a receipt passes. Framework-free:
 * each adapter only turns the conversation into its own messages.
 */
import { asJson, RepairLoopError, type RepairAttempt } from '../client/repair-loop.js';
import type { VerifierClient } from '../client/verifier-client.js';
import type { JsonValue, Receipt, VerificationRequest } from '../client/types.js';

/** One message of the conversation with the model. */
export interface Turn {
  role: 'user' | 'assistant';
  content: string;
}

/** The verification request without the output, which the model produces. */
export type VerificationSpec = Omit<VerificationRequest, 'submitted_output'>;

/** What the repair loop of ./ai-sdk and ./langchain takes besides the model: the client, the verification, and the loop's limits. */
export interface ModelLoopOptions {
  /** The verifier service's client (createVerifierClient from agent-output-verifier/client). */
  client: VerifierClient;
  /** What the output is verified against: task_id, expected_schema, rules, bounds… */
  verification: VerificationSpec;
  /** Verifications at most, the first included (default 3). */
  maxAttempts?: number;
  /** The whole loop's time budget in milliseconds, model calls included (default 60000). */
  timeoutMs?: number;
  /** Also apply the first option of each candidate repair (default false). */
  candidates?: boolean;
  /** The service's body limit in bytes (default 1 MiB). */
  maxBodyBytes?: number;
}

/** The verified output and the receipts that prove it, the passing one last. */
export interface VerifiedOutput<T = JsonValue> {
  object: T;
  /** The passing receipt. */
  receipt: Receipt;
  receipts: Receipt[];
  attempts: RepairAttempt[];
  /** The request that passed (to check the receipt against: client.checkReceipt(receipt, { request })). */
  request: VerificationRequest;
}

/** The system instruction the adapters give by default: JSON only, against the schema. */
export function jsonInstruction(verification: VerificationSpec): string {
  return `Answer with a single JSON value and nothing else (no prose, no code fence). It must conform to this JSON Schema:\n${JSON.stringify(verification.expected_schema)}`;
}

/** The message that re-asks the model: the remaining problems and its last output as verified. */
export function reaskMessage(feedbackText: string, output: JsonValue): string {
  return `${feedbackText}\n\nYour last output, as verified (automatic repairs applied):\n${JSON.stringify(output)}`;
}

/**
 * Runs the loop with `ask`, which sends the conversation to the model and
 * resolves with its text. Rejects with a RepairLoopError (receipts so far) when
 * no pass is reached: the model throws (`regenerate_failed`), answers non-JSON
 * (`regenerate_invalid`), the attempts or the time run out.
 */
export async function runModelLoop(turns: Turn[], ask: (turns: Turn[], signal: AbortSignal) => Promise<string>, options: ModelLoopOptions): Promise<VerifiedOutput> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const started = Date.now();
  const conversation = turns.slice();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('time is up')), timeoutMs);
  let first: string;
  try {
    first = await Promise.race([
      ask(conversation, controller.signal),
      new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(new RepairLoopError('timeout', `no answer from the model within ${timeoutMs} ms`, [])))),
    ]);
  } catch (e) {
    if (e instanceof RepairLoopError) throw e;
    throw new RepairLoopError('regenerate_failed', `the model failed: ${e instanceof Error ? e.message : String(e)}`, [], e);
  } finally {
    clearTimeout(timer);
  }
  conversation.push({ role: 'assistant', content: first });
  const output = asJson(first);
  if (output === undefined) throw new RepairLoopError('regenerate_invalid', `the model's answer is not JSON: ${JSON.stringify(first.slice(0, 80))}`, []);
  const remaining = timeoutMs - (Date.now() - started);
  if (remaining <= 0) throw new RepairLoopError('timeout', `no pass within ${timeoutMs} ms`, []);

  const result = await options.client.verifyAndRepair({
    request: { ...options.verification, submitted_output: output },
    maxAttempts: options.maxAttempts,
    timeoutMs: remaining,
    candidates: options.candidates,
    maxBodyBytes: options.maxBodyBytes,
    regenerate: async (feedback) => {
      conversation.push({ role: 'user', content: reaskMessage(feedback.text, feedback.output) });
      const text = await ask(conversation, feedback.signal);
      conversation.push({ role: 'assistant', content: text });
      return text;
    },
  });
  return { object: result.output, receipt: result.receipts[result.receipts.length - 1], receipts: result.receipts, attempts: result.attempts, request: result.request };
}

/** Loads an optional peer dependency, or says plainly which package to install. */
export async function loadPeer<T>(specifier: string, entry: string, install: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new Error(`agent-output-verifier/${entry} needs the optional peer dependency '${specifier}', which is not installed: run \`npm install ${install}\``, { cause: e });
    }
    throw e;
  }
}
