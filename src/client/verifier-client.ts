/**
 * @module The typed client agents use to call the service: verify, stored
 * receipts, reputation, trust score, and offline receipt checks against the
 * service's own agent card. Runs in Node 20+ and browsers: only
 * `fetch`, and the pure-JS receipt verifier (no Node API, nothing server-side).
 * With a `payer`, 402 answers are paid through the official @x402/fetch and the
 * settlement (PAYMENT-RESPONSE) is returned with the result.
 */
import type { x402Client } from '@x402/core/client';
import type { SettleResponse } from '@x402/core/types';
import type { ClientEvmSigner } from '@x402/evm';
import { verifyReceiptPortable } from '../receipts/verify-receipt-portable.js';
import type { ReceiptVerification } from '../receipts/receipt-verifier.js';
import { runRepairLoop, type VerifyAndRepairOptions, type VerifyAndRepairResult } from './repair-loop.js';
import type {
  AllowanceState,
  ApiErrorBody,
  BatchVerificationRequest,
  BatchVerificationResponse,
  Receipt,
  Reputation,
  TrustScore,
  VerificationRequest,
} from './types.js';

export type { ReceiptVerification };

/** Who pays when the service answers 402: an x402 client with its schemes registered, or an EVM account (e.g. viem's). */
export type Payer = x402Client | ClientEvmSigner;

/** How the client retries errors the service marks retryable (VerifierClientOptions.retry). */
export interface RetryOptions {
  /** Further attempts after a retryable error (default 2). */
  attempts?: number;
  /** Longest wait honoured from `retry_after`, in seconds (default 30); a longer one is returned as the error. */
  maxWaitSeconds?: number;
}

/** Options of createVerifierClient: the service's URL, and optionally fetch, a payer and retries. */
export interface VerifierClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The fetch to use (default globalThis.fetch). */
  fetch?: typeof globalThis.fetch;
  /** Pays 402 answers through @x402/fetch; without it a 402 is a VerifierError with code `payment_required`. */
  payer?: Payer;
  /** Retry errors the service marks retryable (503, 500), waiting `retry_after`. Off unless given. */
  retry?: RetryOptions | boolean;
}

/** A result that may have been paid for. */
export interface Paid<T> {
  body: T;
  /** The response text exactly as received (the signed bytes). */
  text: string;
  /** The decoded PAYMENT-RESPONSE when this call was paid, else null. */
  settlement: SettleResponse | null;
  /** The Free-Allowance-* headers, when the route reports them. */
  allowance: AllowanceState | null;
}

/** The answer of a batch: the summary and receipts, plus the one settlement that paid for all of them. */
export type BatchResult = BatchVerificationResponse<Receipt> & {
  /** The decoded PAYMENT-RESPONSE when the batch was paid (one payment of N × the price), else null. */
  settlement: SettleResponse | null;
  /** The Free-Allowance-* headers. */
  allowance: AllowanceState | null;
};

/** Options of VerifierClient.checkReceipt. */
export interface CheckReceiptOptions {
  /** The original request (object or JSON text): its four hashes are then checked too. */
  request?: VerificationRequest | string;
}

/** A typed client of one verifier service (made by createVerifierClient); each method is one route of docs/protocol.md. */
export interface VerifierClient {
  /** The service's base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** POST /verify/schema: the signed receipt (pass or fail). `signal` aborts the call. */
  verify(request: VerificationRequest, options?: { signal?: AbortSignal }): Promise<Paid<Receipt>>;
  /**
   * The repair loop (docs/repair.md): verify; apply the receipt's determined repairs and verify
   * again; when no repair is left, call `regenerate` with the remaining hints and verify its
   * answer. Resolves with the pass and every receipt; rejects with a RepairLoopError (carrying
   * the receipts so far) when attempts, time, the model or the body limit end it first.
   */
  verifyAndRepair(options: VerifyAndRepairOptions): Promise<VerifyAndRepairResult>;
  /**
   * POST /verify/batch: one signed receipt per item, in order, all or nothing. With payments on and
   * a `payer`, a 402 is paid once for the whole batch (N × the verification price).
   */
  verifyBatch(request: BatchVerificationRequest): Promise<BatchResult>;
  /** GET /verifications/{id}: the stored receipt, byte-identical to the original answer. */
  getReceipt(verificationId: string): Promise<Receipt>;
  /** GET /reputation/{agent_id}: one page of history; pass `next_cursor` back as `cursor` for the next. */
  reputation(agentId: string, options?: { cursor?: string | null; limit?: number }): Promise<Reputation>;
  /** GET /score/{agent_id}: the signed trust score. */
  score(agentId: string): Promise<Paid<TrustScore>>;
  /**
   * Verify a receipt (object or its JSON text) offline against the keys this
   * service publishes in its agent card (fetched once and cached; fetched again
   * when the receipt names a key the cached card does not list).
   */
  checkReceipt(receipt: Receipt | TrustScore | string, options?: CheckReceiptOptions): Promise<ReceiptVerification>;
}

/** An error answer of the service, carrying its error body (`code`, `fields[].fix`, `retryable`, `retry_after`). */
export class VerifierError extends Error {
  readonly status: number;
  readonly body: ApiErrorBody;
  /** For a 402 (no payer, or payment refused): the service's payment offer and free-trial state. */
  readonly paymentRequired: unknown;

  constructor(status: number, body: ApiErrorBody, paymentRequired: unknown = null) {
    super(`${body.code}: ${body.message}`);
    this.name = 'VerifierError';
    this.status = status;
    this.body = body;
    this.paymentRequired = paymentRequired;
  }

  get code(): string {
    return this.body.code;
  }
  get fields(): ApiErrorBody['fields'] {
    return this.body.fields;
  }
  get retryable(): boolean {
    return this.body.retryable;
  }
  /** Seconds to wait before retrying, when retryable. */
  get retryAfter(): number | undefined {
    return this.body.retry_after;
  }
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/** The error body of a non-JSON or unexpected answer (a proxy page, a truncated body). */
function unexpected(status: number, text: string): ApiErrorBody {
  const retryable = status >= 500;
  return {
    code: 'unexpected_response',
    message: `HTTP ${status}: the answer is not the service's JSON${text ? ` (${text.slice(0, 120)})` : ''}`,
    status,
    retryable,
    charged: false,
    next_actions: [],
    fields: [],
    ...(retryable ? { retry_after: 1 } : {}),
  };
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === 'string' && typeof v.message === 'string';
}

/** Base64 JSON as in the x402 headers (UTF-8 aware, no Buffer). */
function decodeBase64Json(text: string): unknown {
  try {
    const binary = atob(text);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
  } catch {
    return null;
  }
}

function allowanceOf(headers: Headers): AllowanceState | null {
  const remaining = headers.get('free-allowance-remaining');
  const limit = headers.get('free-allowance-limit');
  const resetsAt = headers.get('free-allowance-resets');
  if (remaining === null || limit === null || resetsAt === null) return null;
  return { remaining: Number(remaining), limit: Number(limit), resetsAt };
}

function isX402Client(payer: Payer): payer is x402Client {
  return typeof (payer as { register?: unknown }).register === 'function';
}

/** The fetch that pays 402 answers, built on first use (the x402 packages load only when a payer is configured). */
async function payingFetch(base: typeof globalThis.fetch, payer: Payer): Promise<typeof globalThis.fetch> {
  const { wrapFetchWithPayment } = await import('@x402/fetch');
  let client: x402Client;
  if (isX402Client(payer)) {
    client = payer;
  } else {
    const [{ x402Client: X402Client }, { ExactEvmScheme }] = await Promise.all([import('@x402/core/client'), import('@x402/evm/exact/client')]);
    client = new X402Client().register('eip155:*', new ExactEvmScheme(payer));
  }
  return wrapFetchWithPayment(base, client) as typeof globalThis.fetch;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Creates a client of the verifier service at `options.baseUrl` (docs/client.md). It needs only
 * `fetch`, so it runs in Node 20+ and in browsers. An error answer rejects with a VerifierError
 * carrying the service's error body; with a `payer`, a 402 is paid through x402 and the call
 * retried; with `retry`, retryable errors are retried after their `retry_after`.
 *
 * @example
 * ```ts
 * import { createVerifierClient, VerifierError } from 'agent-output-verifier/client';
 *
 * const client = createVerifierClient({ baseUrl: 'http://127.0.0.1:8080', retry: true });
 * try {
 *   const { body: receipt, text } = await client.verify({
 *     task_id: 'invoice-42',
 *     expected_schema: { type: 'object', required: ['total'], properties: { total: { type: 'number' } } },
 *     submitted_output: { total: 129.5 },
 *   });
 *   console.log(receipt.result, (await client.checkReceipt(text)).valid);
 * } catch (e) {
 *   if (e instanceof VerifierError) console.error(e.code, e.fields);
 * }
 * ```
 */
export function createVerifierClient(options: VerifierClientOptions): VerifierClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  if (!/^https?:\/\//.test(baseUrl)) throw new TypeError('baseUrl must be an http(s) URL');
  const plainFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  let paying: Promise<typeof globalThis.fetch> | null = null;
  const retry: Required<RetryOptions> | null =
    options.retry === undefined || options.retry === false
      ? null
      : { attempts: 2, maxWaitSeconds: 30, ...(options.retry === true ? {} : options.retry) };

  const fetchFor = (payable: boolean): Promise<typeof globalThis.fetch> => {
    if (!payable || !options.payer) return Promise.resolve(plainFetch);
    paying ??= payingFetch(plainFetch, options.payer);
    return paying;
  };

  /** One call; the answer's text and headers, or a VerifierError. Retries retryable errors when configured. */
  async function call(path: string, init: RequestInit, payable: boolean): Promise<{ text: string; response: Response }> {
    const doFetch = await fetchFor(payable);
    for (let attempt = 0; ; attempt++) {
      const response = await doFetch(`${baseUrl}${path}`, init);
      const text = await response.text();
      if (response.ok) return { text, response };
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
      let body: ApiErrorBody;
      if (response.status === 402) {
        // The 402 body is the free-trial state, not the error shape; name it as one.
        const state = (parsed ?? {}) as Record<string, unknown>;
        body = {
          code: typeof state.code === 'string' ? state.code : 'payment_required',
          message: typeof state.message === 'string' ? state.message : 'Payment required (x402).',
          status: 402,
          retryable: false,
          charged: false,
          next_actions: Array.isArray(state.next_actions) ? (state.next_actions as ApiErrorBody['next_actions']) : [],
          fields: [],
        };
        const header = response.headers.get('payment-required');
        throw new VerifierError(402, body, { ...state, ...(header ? { paymentRequired: decodeBase64Json(header) } : {}) });
      }
      body = isErrorBody(parsed) ? parsed : unexpected(response.status, text);
      const wait = body.retry_after ?? 1;
      if (retry && body.retryable && attempt < retry.attempts && wait <= retry.maxWaitSeconds) {
        await sleep(wait * 1000);
        continue;
      }
      throw new VerifierError(response.status, body);
    }
  }

  function paid<T>(text: string, response: Response): Paid<T> {
    const header = response.headers.get('payment-response');
    return {
      body: JSON.parse(text) as T,
      text,
      settlement: header ? (decodeBase64Json(header) as SettleResponse | null) : null,
      allowance: allowanceOf(response.headers),
    };
  }

  let card: Promise<unknown> | null = null;
  const agentCard = (fresh: boolean): Promise<unknown> => {
    if (fresh || card === null) {
      const fetching = call('/.well-known/agent-card.json', { headers: { accept: 'application/json' } }, false).then(({ text }) => JSON.parse(text) as unknown);
      card = fetching;
      // A failed fetch is not cached.
      fetching.catch(() => {
        if (card === fetching) card = null;
      });
    }
    return card;
  };

  async function verify(request: VerificationRequest, opts: { signal?: AbortSignal } = {}): Promise<Paid<Receipt>> {
    const init: RequestInit = { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(request) };
    if (opts.signal) init.signal = opts.signal;
    const { text, response } = await call('/verify/schema', init, true);
    return paid<Receipt>(text, response);
  }

  return {
    baseUrl,

    verify,

    verifyAndRepair(opts) {
      return runRepairLoop((request, signal) => verify(request, { signal }), opts);
    },

    async verifyBatch(request) {
      const { text, response } = await call('/verify/batch', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(request) }, true);
      const { body, settlement, allowance } = paid<BatchVerificationResponse<Receipt>>(text, response);
      return { ...body, settlement, allowance };
    },

    async getReceipt(verificationId) {
      const { text } = await call(`/verifications/${encodeURIComponent(verificationId)}`, { headers: { accept: 'application/json' } }, false);
      return JSON.parse(text) as Receipt;
    },

    async reputation(agentId, opts = {}) {
      const query = new URLSearchParams();
      if (opts.limit !== undefined) query.set('limit', String(opts.limit));
      if (opts.cursor) query.set('cursor', opts.cursor);
      const qs = query.toString();
      const { text } = await call(`/reputation/${encodeURIComponent(agentId)}${qs ? `?${qs}` : ''}`, { headers: { accept: 'application/json' } }, false);
      return JSON.parse(text) as Reputation;
    },

    async score(agentId) {
      const { text, response } = await call(`/score/${encodeURIComponent(agentId)}`, { headers: { accept: 'application/json' } }, true);
      return paid<TrustScore>(text, response);
    },

    async checkReceipt(receipt, opts = {}) {
      const check = (cardValue: unknown) =>
        verifyReceiptPortable(receipt, { agentCard: cardValue }, opts.request === undefined ? {} : { request: opts.request });
      const result = check(await agentCard(false));
      // A key added since the card was cached (rotation): look once more.
      if (!result.valid && result.failedCheck === 'key_not_found') return check(await agentCard(true));
      return result;
    },
  };
}
