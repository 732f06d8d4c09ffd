/**
 * @module `agent-output-verifier/ai-sdk`: the repair loop for the Vercel AI SDK
 * v5 (`ai@5`, Node 18+; v6 and later need Node 22 and are not supported here).
 * `ai` is an optional peer dependency, loaded only when generateVerifiedObject
 * runs, so this entry imports fine without it and says what to install.
 */
import type { LanguageModel, ModelMessage } from 'ai';
import { jsonInstruction, loadPeer, runModelLoop, type ModelLoopOptions, type Turn, type VerifiedOutput } from './model-loop.js';

export type { VerifiedOutput, VerificationSpec, ModelLoopOptions } from './model-loop.js';

/** Options of generateVerifiedObject: the model and the task, plus the repair loop's ModelLoopOptions. */
export interface GenerateVerifiedObjectOptions extends ModelLoopOptions {
  /** Any AI SDK v5 language model (a provider's model, or MockLanguageModelV2 in tests). */
  model: LanguageModel;
  /** The task, as a prompt or as messages (one of the two). */
  prompt?: string;
  messages?: ModelMessage[];
  /** The system instruction; by default one asking for JSON against `verification.expected_schema`. */
  system?: string;
  /** Further generateText settings (temperature, maxOutputTokens, providerOptions, …). */
  settings?: Record<string, unknown>;
}

/**
 * Generates an object with the model and verifies it; a failing receipt's
 * determined repairs are applied and verified, and the model is re-asked with
 * the remaining hints, within `maxAttempts` verifications and `timeoutMs`.
 * Resolves with the object and every signed receipt (the pass last); rejects
 * with a RepairLoopError carrying the receipts so far.
 *
 * @example
 * ```ts
 * import { openai } from '@ai-sdk/openai';
 * import { createVerifierClient } from 'agent-output-verifier/client';
 * import { generateVerifiedObject } from 'agent-output-verifier/ai-sdk';
 *
 * const { object, receipt } = await generateVerifiedObject({
 *   client: createVerifierClient({ baseUrl: 'http://127.0.0.1:8080' }),
 *   model: openai('gpt-4o-mini'),
 *   prompt: 'Write invoice INV-0042 for 3 WIDGET-1 at 29.',
 *   verification: { task_id: 'invoice-42', expected_schema: invoiceSchema },
 * });
 * ```
 */
export async function generateVerifiedObject<T = unknown>(options: GenerateVerifiedObjectOptions): Promise<VerifiedOutput<T>> {
  const { generateText } = await loadPeer('ai', 'ai-sdk', 'ai@5', () => import('ai'));
  if ((options.prompt === undefined) === (options.messages === undefined)) throw new TypeError('give either prompt or messages');
  const system = options.system ?? jsonInstruction(options.verification);
  const base: ModelMessage[] = options.messages ?? [{ role: 'user', content: options.prompt as string }];
  const start: Turn[] = [];
  const ask = async (turns: Turn[], signal: AbortSignal): Promise<string> => {
    // The caller's messages, then the loop's own turns (answers and re-asks) as plain text messages.
    const messages: ModelMessage[] = [...base, ...turns.map((t): ModelMessage => (t.role === 'user' ? { role: 'user', content: t.content } : { role: 'assistant', content: t.content }))];
    const result = await generateText({ ...options.settings, model: options.model, system, messages, abortSignal: signal });
    return result.text;
  };
  return (await runModelLoop(start, ask, options)) as VerifiedOutput<T>;
}
