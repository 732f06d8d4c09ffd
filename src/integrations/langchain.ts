/**
 * @module `agent-output-verifier/langchain`: the repair loop for LangChain.js
 * (`@langchain/core` 1.x, Node 20+). A runnable that asks a chat model,
 * verifies the answer through the service and re-asks with the remaining hints
 * until a receipt passes. `@langchain/core` is an optional peer dependency,
 * loaded only when the runnable is built, so this entry imports fine without it
 * and says what to install.
 */
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import type { BaseMessage } from '@langchain/core/messages';
import type { Runnable } from '@langchain/core/runnables';
import { jsonInstruction, loadPeer, runModelLoop, type ModelLoopOptions, type Turn, type VerifiedOutput } from './model-loop.js';

export type { VerifiedOutput, VerificationSpec, ModelLoopOptions } from './model-loop.js';

/** Anything that takes messages and answers with a message: a chat model, or a chain ending in one. */
export type ChatRunnable = Runnable<BaseLanguageModelInput, BaseMessage>;

/** Options of createVerifiedChain: the chat model, plus the repair loop's ModelLoopOptions. */
export interface VerifiedChainOptions extends ModelLoopOptions {
  /** The chat model (or a chain ending in one) asked for the output. */
  model: ChatRunnable;
  /** The system instruction; by default one asking for JSON against `verification.expected_schema`. */
  system?: string;
}

/** A message's text, whether its content is a string or a list of parts. */
function textOf(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  return content.map((part) => (typeof part === 'string' ? part : part.type === 'text' ? String((part as { text?: unknown }).text ?? '') : '')).join('');
}

/**
 * A runnable taking the task (a string, or messages) and returning the verified
 * output with its receipts (the pass last). `invoke` rejects with a
 * RepairLoopError carrying the receipts so far when no pass is reached within
 * `maxAttempts` verifications and `timeoutMs`.
 *
 * @example
 * ```ts
 * import { ChatOpenAI } from '@langchain/openai';
 * import { createVerifierClient } from 'agent-output-verifier/client';
 * import { createVerifiedChain } from 'agent-output-verifier/langchain';
 *
 * const chain = await createVerifiedChain({
 *   client: createVerifierClient({ baseUrl: 'http://127.0.0.1:8080' }),
 *   model: new ChatOpenAI({ model: 'gpt-4o-mini' }),
 *   verification: { task_id: 'invoice-42', expected_schema: invoiceSchema },
 * });
 * const { object, receipt } = await chain.invoke('Write invoice INV-0042 for 3 WIDGET-1 at 29.');
 * ```
 */
export async function createVerifiedChain(options: VerifiedChainOptions): Promise<Runnable<string | BaseMessage[], VerifiedOutput>> {
  const [{ RunnableLambda }, { AIMessage, HumanMessage, SystemMessage }] = await loadPeer('@langchain/core', 'langchain', '@langchain/core@1', () =>
    Promise.all([import('@langchain/core/runnables'), import('@langchain/core/messages')]),
  );
  const system = new SystemMessage(options.system ?? jsonInstruction(options.verification));
  return RunnableLambda.from(async (input: string | BaseMessage[]) => {
    const base: BaseMessage[] = [system, ...(typeof input === 'string' ? [new HumanMessage(input)] : input)];
    const ask = async (turns: Turn[], signal: AbortSignal): Promise<string> => {
      const messages = [...base, ...turns.map((t) => (t.role === 'user' ? new HumanMessage(t.content) : new AIMessage(t.content)))];
      return textOf(await options.model.invoke(messages, { signal }));
    };
    return runModelLoop([], ask, options);
  });
}
