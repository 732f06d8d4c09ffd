/**
 * @module The one request lifecycle behind every transport (REST, MCP, A2A, the
 * batch route): `handle(source, context)` prepares, admits, records and completes a
 * request and resolves with an answer or a refusal; transports only translate the
 * source in and the outcome out (headers, `_meta`, status codes).
 *
 * - prepare: strictly parses exactly the text that holds the request (the REST
 *   body, the MCP tool arguments' own source text), validates it, compiles its
 *   schema, evaluates it and builds the response ready to be signed — where the
 *   runner runs (a verification worker, by default). Anything wrong (422,
 *   too_complex, a worker stopped at its deadline) is answered here as a `Failed`
 *   outcome, before anything is reserved; the verdict never depends on who pays.
 * - admit: the admission policy (free allowance; with payments on, the x402 policy
 *   of src/payments) answers `Admitted` or `Refused`. The free allowance admits a
 *   client this process knows to have units left at once and takes its unit in the
 *   transaction that stores its receipt; if none was left by then, nothing is stored
 *   and the request is refused (src/service/allowance-hints.ts).
 * - record: the admission produces and keeps the result through the pipeline's
 *   `Signer`. A free verification is handed over unsigned and stored signed by the
 *   store where it can (the embedded store's writer thread), so the signature costs
 *   the HTTP thread nothing; the bytes are the same either way (Ed25519 is
 *   deterministic). A paid one is signed here and kept for `complete`, which stores it
 *   pending, settles, and publishes or voids it.
 * - complete: settle a payment (or report the allowance). Any failure before
 *   `complete` calls `release` (allowance refunded, reservation freed): errors are
 *   never charged.
 *
 * Every expected end is a value (`Outcome`: an answer, a refusal, or a coded failure);
 * only a fault of the code itself rejects, and transports answer that with their
 * generic 500. Adapters never decide whether a request is valid or who pays for it.
 */
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { ApiError, isApiError, type ErrorCode, type FieldProblem } from '../errors.js';
import type { IssuedReceipt, UnsignedReceipt } from '../receipts/issue-receipt.js';
import type { ReceiptRecord } from '../store/store.js';
import { createAllowanceHints, type AllowanceHints } from './allowance-hints.js';
import type { AllowanceInfo, ClientContext, SignedResult, VerifierService } from './types.js';

/** How a request arrived; metrics and payment resources are labelled with it. */
export type Transport = 'rest' | 'mcp' | 'a2a' | 'batch';

/** The priced operations. */
export type Operation = 'verify' | 'score';

/** A verification request that passed every request check (its schema compiles). */
export interface PreparedVerification {
  readonly operation: 'verify';
  /** The exact text or bytes that hold the request; the run step parses them where it runs. */
  readonly source: string | Uint8Array;
  /** Size of the request in bytes (the free size limit of the payment policy applies to it). */
  readonly bodyBytes: number;
  readonly taskId: string;
  readonly agentId: string | null;
  /** The request_hash of the request (docs/protocol.md#hashes): a payment is bound to the request it paid for. */
  readonly requestHash: string;
}

/** A trust-score request for a valid, scorable agent id. */
export interface PreparedScore {
  readonly operation: 'score';
  readonly agentId: string;
  readonly bodyBytes: 0;
}

export type Prepared = PreparedVerification | PreparedScore;

/** What a payment is for, as named in x402 PaymentRequired.resource. */
export interface PaidResource {
  url: string;
  description?: string;
  mimeType?: string;
  /** Transport: decides which discovery declaration (HTTP or MCP tool) is attached. */
  transport?: 'http' | 'mcp';
  /** HTTP method, for the discovery declaration. */
  method?: 'GET' | 'POST';
  /** Route pattern with params, e.g. `/score/:agent_id`, for the discovery declaration. */
  routePattern?: string;
  /**
   * A batch: how many verifications one payment pays for. Every accepted option then asks
   * `units` × the route's price, so one authorization of that amount pays the whole batch.
   */
  units?: number;
}

/** Who asks, over which transport, with which payment: what a transport knows about a request besides its source. */
export interface AdmitContext {
  transport: Transport;
  client: ClientContext;
  /** An x402 payment as the transport carried it; `present` with a null payload when it could not be decoded. */
  payment?: { present: boolean; payload: unknown };
  /** The resource being paid for (used when payment is asked). */
  resource: PaidResource;
}

/** A request as a transport received it. */
export type RequestSource =
  /** A verification request: the exact text or bytes that hold it. */
  | { operation: 'verify'; source: string | Uint8Array }
  /** The signed trust score of an agent. */
  | { operation: 'score'; agentId: string }
  /** A request without a body (the x402 discovery probe): a refusal asking for payment, or 422 with payments off. */
  | { operation: 'probe' }
  | BatchSource;

/** A batch: each item's own request text, in order; validated, admitted, stored and charged whole or not at all. */
export interface BatchSource {
  operation: 'batch';
  items: readonly string[];
  /** How the batch names a field of item `index` in an item's validation error (`task_id` → `items[3].task_id`). */
  itemField(index: number, field: string): string;
}

export type SingleSource = Exclude<RequestSource, BatchSource>;

/**
 * Why a request was refused. `free_allowance_exhausted` (payments off, 429);
 * with payments on, every refusal carries a PaymentRequired: `free_trial_exhausted`,
 * `payment_required` (large body, discovery probe, paid-only operation),
 * `payment_invalid`, `settlement_failed`.
 */
export type RefusalCode =
  | 'free_allowance_exhausted'
  | 'free_trial_exhausted'
  | 'payment_required'
  | 'payment_invalid'
  | 'settlement_failed'
  | 'settlement_pending';

/** A settlement whose outcome is not known yet: the buyer must not pay again, nor be told nothing was charged. */
export interface SettlementPending {
  /** The receipt waiting for the settlement (verify), or null (score). */
  verificationId: string | null;
  transaction: string | null;
  message: string;
  /** Seconds after which a retry is worth it. */
  retryAfter: number;
}

export interface Refused {
  admitted: false;
  kind: 'refused';
  code: RefusalCode;
  message: string;
  /** The client's live allowance state (for headers, 402 bodies, MCP `_meta`). */
  allowance: AllowanceInfo;
  /** x402 PaymentRequired (src/payments builds it; adapters encode it for their transport). */
  paymentRequired?: PaymentRequired;
  /** A failed settlement's response, when there was one. */
  settlement?: SettleResponse | null;
  /** Set with code `settlement_pending`: the outcome is unknown; retry with the same payment (REST: 202). */
  pending?: SettlementPending;
}

/**
 * A request answered with a coded error of src/errors.ts instead of a document: not valid (422),
 * over a work limit (too_complex), stopped at a worker's limit (verification_aborted), or a store or
 * facilitator not reachable (503 unavailable). Nothing was reserved, or what was is released: nothing
 * is charged. Transports render it as the error body of docs/protocol.md#errors.
 */
export interface Failed {
  admitted: false;
  kind: 'failed';
  code: ErrorCode;
  message: string;
  fields: FieldProblem[];
  /** Seconds after which a retry is worth it (the Retry-After of a retryable code). */
  retryAfter?: number;
}

/** A coded error as the value a lifecycle step resolves with. */
export function failedOf(error: ApiError): Failed {
  const failed: Failed = { admitted: false, kind: 'failed', code: error.code, message: error.message, fields: error.fields };
  if (error.retryAfter !== undefined) failed.retryAfter = error.retryAfter;
  return failed;
}

/** What a successful completion hands back to the transport. */
export interface Completion {
  /** x402 settlement response of a paid request (REST: PAYMENT-RESPONSE header; MCP: `_meta`). */
  settlement?: SettleResponse;
  /** The allowance state after a free request (REST: headers; MCP: `_meta`). */
  allowance?: AllowanceInfo;
}

/** What an admission recorded for one request: a signed document and the facts its record needs. */
export type RunResult =
  | { operation: 'verify'; receipt: IssuedReceipt }
  | { operation: 'score'; signed: SignedResult }
  /** A document this payment had already bought (a retry after a pending settlement): nothing ran. */
  | { operation: 'stored'; prepared: Operation; text: string };

/** What an admission recorded for a batch: every item's receipt, in order, or the texts a payment had already bought. */
export type BatchResult = { operation: 'batch'; receipts: IssuedReceipt[] } | { operation: 'stored'; texts: string[] };

/** The pipeline's signing steps, handed to an admission's `record`. */
export interface Signer {
  /** Sign here: a verification's receipt (the runner's run step), or the signed trust score. */
  sign(prepared: Prepared): Promise<RunResult>;
  /** Sign every item (where the runner runs them) before anything is stored; the first item's failure rejects. */
  signAll(prepared: readonly PreparedVerification[]): Promise<IssuedReceipt[]>;
  /** A verification's receipt drafted but unsigned, for an admission that has it signed where it is stored. */
  unsigned(prepared: PreparedVerification): UnsignedReceipt;
}

/**
 * A request (`P`: one prepared request, or a batch's) allowed to run. The pipeline calls
 * `record` and then `complete`, or `release` when `record` fails.
 */
export interface Admitted<P = Prepared, R = RunResult> {
  admitted: true;
  /** True when a payment (not the free allowance) pays for it. */
  paid: boolean;
  /**
   * Produce and keep the result through `signer`: the free path has it signed and stores it for good
   * (a batch in one transaction); the paid path signs it and stores nothing here (`complete` hands it
   * to the gate, which stores it pending); a retry of a settled payment hands back what it bought.
   * Resolves with the result, or the refusal of a unit found gone when the receipt was to be stored
   * (nothing stored).
   */
  record(prepared: P, signer: Signer): Promise<R | Refused>;
  /**
   * Finish: settle a payment. A failed settlement returns a refusal (nothing charged, receipt
   * voided); an unknown outcome returns `settlement_pending` (the receipt stays pending).
   */
  complete(result: R): Promise<Completion | Refused>;
  /** Undo the admission (refund the allowance, release the payment reservation). Idempotent. */
  release(reason: string): Promise<void>;
}

export type Admission = Admitted | Refused;

/** A whole batch allowed to run, as one admission: `units` allowance units taken at once, or one payment of units × the price. */
export type BatchAdmitted = Admitted<readonly PreparedVerification[], BatchResult>;

export type BatchAdmission = BatchAdmitted | Refused;

/** Decides who pays for a prepared request. The default spends the free allowance; src/payments adds x402. */
export interface AdmissionPolicy {
  admit(prepared: Prepared, ctx: AdmitContext): Promise<Admission>;
  /** The answer to a request without a body (the x402 discovery probe); null when there is none (payments off). */
  probe(ctx: AdmitContext): Promise<Refused | null>;
  /** Admit a batch of verifications whole (N units or one payment of N × the price), or refuse it whole. */
  admitBatch(prepared: readonly PreparedVerification[], ctx: AdmitContext): Promise<BatchAdmission>;
}

/**
 * Where verifications run (in this thread, or a worker pool that cannot stall the HTTP
 * thread). All the work happens in `prepare`, so that whatever can refuse a request
 * (422, too_complex, a worker's deadline) refuses it before anything is reserved; the
 * verdict does not depend on who pays. `run` only signs.
 */
export interface VerificationRunner {
  /**
   * Parse strictly, validate, compile the schema, evaluate, and build the response for
   * this id and time, ready to be signed; or the coded failure (422, too_complex, verification_aborted,
   * unavailable when too many wait). Rejects only on a fault of the runner itself.
   */
  prepare(source: string | Uint8Array, stamp: { verificationId: string; verifiedAt: Date }): Promise<PreparedVerification | Failed>;
  /** Sign the prepared response (after admission). */
  run(prepared: PreparedVerification): Promise<IssuedReceipt>;
  /** The prepared response and the key it is for, unsigned, for an admission that has it signed where it is stored. */
  unsigned(prepared: PreparedVerification): UnsignedReceipt;
  close(): Promise<void>;
}

export interface PipelineDeps {
  runner: VerificationRunner;
  service: VerifierService;
  policy: AdmissionPolicy;
  clock(): Date;
  newId(): string;
  /** Called once per signed verification that completed, for metrics. */
  onVerified?(event: { transport: Transport; result: 'pass' | 'fail'; paid: boolean }): void;
}

/** What the pipeline answers a request with; `text` is the signed document to send, byte for byte as stored. */
export type Answer =
  /** A verification that ran now: its receipt. */
  | { admitted: true; kind: 'answer'; operation: 'verify'; text: string; receipt: IssuedReceipt; completion: Completion }
  /** A trust score signed now. */
  | { admitted: true; kind: 'answer'; operation: 'score'; text: string; score: SignedResult; completion: Completion }
  /** The document (`of` a verification or a score) this payment had already bought: nothing ran or was charged again. */
  | { admitted: true; kind: 'answer'; operation: 'stored'; of: Operation; text: string; completion: Completion };

/** A batch's answer: the signed receipt texts in item order, exactly as stored, and how many passed. */
export interface BatchAnswer {
  admitted: true;
  kind: 'answer';
  operation: 'batch';
  texts: string[];
  passed: number;
  completion: Completion;
}

/** How a request ended, switched on by `kind`: the signed answer, a refusal of its admission, or a coded failure. */
export type Outcome = Answer | Refused | Failed;

/** How a batch ended: every item's receipt, or one refusal or failure for the whole batch. */
export type BatchOutcome = BatchAnswer | Refused | Failed;

export interface Pipeline {
  /**
   * The whole lifecycle of one request: an answer; a refusal (allowance spent, payment needed or
   * failed, settlement pending); or a coded failure (the request is not valid, over a work limit,
   * stopped, or the store is unavailable: nothing reserved, or the admission released, so nothing
   * charged). Rejects only on a fault of the code itself (the admission released as well).
   */
  handle(source: SingleSource, context: AdmitContext): Promise<Outcome>;
  handle(source: BatchSource, context: AdmitContext): Promise<BatchOutcome>;
  /** The allowance state (for headers on answers that took no unit). */
  peekAllowance(client: ClientContext): Promise<AllowanceInfo>;
  readonly service: VerifierService;
}

/** The store record of an issued receipt: every field typed by the issuer, nothing re-read from the response. */
export function receiptRecord(receipt: IssuedReceipt): ReceiptRecord {
  return {
    verificationId: receipt.verificationId,
    agentId: receipt.agentId,
    taskId: receipt.taskId,
    result: receipt.result,
    overallRatio: receipt.overallRatio,
    verifiedAt: receipt.verifiedAt,
    keyVersion: receipt.keyVersion,
    receipt: receipt.text,
  };
}

/** A refusal or a failure: the end of a request that is not an answer. */
function isEnd<T extends object>(outcome: T | Refused | Failed): outcome is Refused | Failed {
  return (outcome as { admitted?: unknown }).admitted === false;
}

/** Whether a step's value is a coded failure rather than what the step makes. */
export function isFailed<T extends object>(outcome: T | Failed): outcome is Failed {
  return (outcome as { kind?: unknown }).kind === 'failed';
}

/** The first rejection of settled promises, in order, or every value. */
function allOrFirstFailure<T>(settled: readonly PromiseSettledResult<T>[]): T[] {
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { runner, service, policy } = deps;

  const signer: Signer = {
    async sign(prepared) {
      if (prepared.operation === 'score') return { operation: 'score', signed: await service.score(prepared.agentId) };
      return { operation: 'verify', receipt: await runner.run(prepared) };
    },
    async signAll(prepared) {
      return allOrFirstFailure(await Promise.allSettled(prepared.map((p) => runner.run(p))));
    },
    unsigned: (prepared) => runner.unsigned(prepared),
  };

  // Whole seconds: verified_at is RFC 3339 without fractions, and equals the attestation timestamp.
  const prepareVerification = (source: string | Uint8Array) =>
    runner.prepare(source, { verificationId: deps.newId(), verifiedAt: new Date(Math.floor(deps.clock().getTime() / 1000) * 1000) });

  /**
   * record → complete; release when record fails (an error is never charged: the unit or the reservation
   * goes back). A coded error of the work or the store (store unavailable, …) ends as a `Failed`.
   */
  async function conclude<P, R extends object>(
    prepared: P,
    admission: Admitted<P, R>,
  ): Promise<{ result: R; completion: Completion } | Refused | Failed> {
    let result: R | Refused;
    try {
      result = await admission.record(prepared, signer);
    } catch (err) {
      await admission.release(isApiError(err) ? err.code : 'work_failed').catch(() => undefined);
      if (isApiError(err)) return failedOf(err);
      throw err;
    }
    if (isEnd(result)) return result;
    const completion = await admission.complete(result);
    if (isEnd(completion)) return completion;
    return { result, completion };
  }

  async function handleOne(prepared: Prepared, context: AdmitContext): Promise<Outcome> {
    const admission = await policy.admit(prepared, context);
    if (!admission.admitted) return admission;
    const done = await conclude(prepared, admission);
    if (isEnd(done)) return done;
    const { result, completion } = done;
    switch (result.operation) {
      case 'verify':
        deps.onVerified?.({ transport: context.transport, result: result.receipt.result, paid: admission.paid });
        return { admitted: true, kind: 'answer', operation: 'verify', text: result.receipt.text, receipt: result.receipt, completion };
      case 'score':
        return { admitted: true, kind: 'answer', operation: 'score', text: result.signed.text, score: result.signed, completion };
      case 'stored':
        return { admitted: true, kind: 'answer', operation: 'stored', of: result.prepared, text: result.text, completion };
    }
  }

  async function handleBatch(source: BatchSource, context: AdmitContext): Promise<BatchOutcome> {
    // Every item is prepared (validated, verified, drafted) before anything is reserved. Items run in
    // parallel on the verification workers; the failure reported is the first item's, as in order.
    const settled = await Promise.allSettled(source.items.map((text) => prepareVerification(text)));
    const prepared: PreparedVerification[] = [];
    for (const [i, item] of settled.entries()) {
      if (item.status === 'rejected') throw item.reason;
      if (!isFailed(item.value)) {
        prepared.push(item.value);
        continue;
      }
      const failed = item.value;
      return {
        ...failed,
        message: `Item ${i} of the batch is not valid: ${failed.message}`,
        fields: failed.fields.map((f) => ({ ...f, field: source.itemField(i, f.field) })),
      };
    }
    // All or nothing: N allowance units in one statement, or one payment of N × the price.
    const admission = await policy.admitBatch(prepared, context);
    if (!admission.admitted) return admission;
    const done = await conclude(prepared, admission);
    if (isEnd(done)) return done;
    const { result, completion } = done;
    if (result.operation === 'stored') {
      const passed = result.texts.filter((t) => (JSON.parse(t) as { result?: unknown }).result === 'pass').length;
      return { admitted: true, kind: 'answer', operation: 'batch', texts: result.texts, passed, completion };
    }
    let passed = 0;
    for (const r of result.receipts) {
      if (r.result === 'pass') passed++;
      deps.onVerified?.({ transport: context.transport, result: r.result, paid: admission.paid });
    }
    return { admitted: true, kind: 'answer', operation: 'batch', texts: result.receipts.map((r) => r.text), passed, completion };
  }

  async function lifecycle(source: RequestSource, context: AdmitContext): Promise<Outcome | BatchOutcome> {
    switch (source.operation) {
      case 'verify': {
        // Validation and compilation first: an invalid request is a 422 before anything is reserved.
        const prepared = await prepareVerification(source.source);
        return isFailed(prepared) ? prepared : handleOne(prepared, context);
      }
      case 'score': {
        // Validates the agent id (422) and refuses example agents; nothing is reserved.
        const unscorable = service.unscorable(source.agentId);
        if (unscorable) return failedOf(unscorable);
        return handleOne({ operation: 'score', agentId: source.agentId, bodyBytes: 0 }, context);
      }
      case 'batch':
        return handleBatch(source, context);
      case 'probe': {
        // With payments on, a request without a body is the x402 discovery probe.
        const refused = await policy.probe(context);
        if (refused) return refused;
        return failedOf(
          new ApiError('invalid_request', {
            message: 'The request body is empty.',
            fields: [{ field: 'body', problem: 'empty', fix: 'send a JSON verification request (see /openapi.json)' }],
          }),
        );
      }
    }
  }

  function handle(source: SingleSource, context: AdmitContext): Promise<Outcome>;
  function handle(source: BatchSource, context: AdmitContext): Promise<BatchOutcome>;
  async function handle(source: RequestSource, context: AdmitContext): Promise<Outcome | BatchOutcome> {
    try {
      return await lifecycle(source, context);
    } catch (err) {
      // A coded error from a port (the store's guard answers `unavailable`, the payment gate an unreachable
      // facilitator) before anything was reserved, or after the admission was released: a failure like any other.
      if (isApiError(err)) return failedOf(err);
      throw err;
    }
  }

  return { service, handle, peekAllowance: (client) => service.peekAllowance(client) };
}

/**
 * The default policy (payments off): a verification takes one unit of the client's
 * free daily allowance (refused with free_allowance_exhausted once spent, refunded
 * when the work fails); the trust score is free.
 */
export function createAllowancePolicy(service: VerifierService): AdmissionPolicy {
  const hints = createAllowanceHints();
  return {
    async admit(prepared, ctx) {
      if (prepared.operation === 'score') return freeAdmission(service, ctx.client, null);
      return takeAllowance(service, ctx.client, hints);
    },
    probe: async () => null,
    admitBatch: (prepared, ctx) => takeBatchAllowance(service, ctx.client, prepared.length),
  };
}

/**
 * Give back what a free admission took, once: `units` allowance units (none for a free score), and
 * the allowance state after it for `complete`.
 */
function refundOnce(service: VerifierService, client: ClientContext, allowance: AllowanceInfo | null, units: number) {
  let released = false;
  let current = allowance;
  return {
    complete: async (): Promise<Completion> => (current ? { allowance: current } : {}),
    async release(): Promise<void> {
      if (released || allowance === null) return;
      released = true;
      if (units === 1) await service.refundAllowance(client);
      else await service.refundAllowanceUnits(client, units);
      current = await service.peekAllowance(client);
    },
  };
}

/**
 * Take `units` units of the free allowance at once for a batch, in one store statement:
 * Admitted (free) or Refused free_allowance_exhausted with nothing taken. Shared with the
 * x402 policy's free branch.
 */
export async function takeBatchAllowance(service: VerifierService, client: ClientContext, units: number): Promise<BatchAdmission> {
  const allowance = await service.takeAllowance(client, units);
  if (!allowance.allowed) {
    return {
      admitted: false,
      kind: 'refused',
      code: 'free_allowance_exhausted',
      message: `This batch needs ${units} verifications of the free daily allowance and ${allowance.remaining} of ${allowance.limit} remain; it resets at ${allowance.resetsAt}. Nothing was taken.`,
      allowance,
    };
  }
  return {
    admitted: true,
    paid: false,
    async record(prepared, signer) {
      const receipts = await signer.signAll(prepared);
      // One transaction: the whole batch is stored (and queued for the log) or none of it.
      await service.saveReceipts(receipts.map(receiptRecord));
      return { operation: 'batch', receipts };
    },
    ...refundOnce(service, client, allowance, units),
  };
}

/**
 * Take one unit of the free allowance: Admitted (free) or `exhausted`'s refusal (by default
 * free_allowance_exhausted; the x402 policy's free branch answers with a PaymentRequired). With
 * `hints`, a client known to have units left is admitted at once and its unit is taken with its
 * receipt, in one write, or the same refusal comes from `record` (see allowance-hints.ts);
 * otherwise the unit is taken first.
 */
export async function takeAllowance(
  service: VerifierService,
  client: ClientContext,
  hints?: AllowanceHints,
  exhausted: (allowance: AllowanceInfo) => Refused | Promise<Refused> = allowanceExhausted,
): Promise<Admission> {
  if (hints?.reserve(client.clientKey)) return unitWithReceipt(service, client, hints, exhausted);
  const allowance = await service.consumeAllowance(client);
  hints?.learn(client.clientKey, allowance);
  if (!allowance.allowed) return exhausted(allowance);
  return freeAdmission(service, client, allowance);
}

function allowanceExhausted(allowance: AllowanceInfo): Refused {
  return {
    admitted: false,
    kind: 'refused',
    code: 'free_allowance_exhausted',
    message: `The free daily allowance of ${allowance.limit} verifications for this client is used up; it resets at ${allowance.resetsAt}.`,
    allowance,
  };
}

/** Admitted on a hint: the unit is taken when the receipt is stored, in the same transaction, or the request is refused then. */
function unitWithReceipt(
  service: VerifierService,
  client: ClientContext,
  hints: AllowanceHints,
  exhausted: (allowance: AllowanceInfo) => Refused | Promise<Refused>,
): Admitted {
  let allowance: AllowanceInfo | null = null;
  let settled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    hints.settle(client.clientKey);
  };
  return {
    admitted: true,
    paid: false,
    async record(prepared, signer) {
      try {
        // A score takes no unit (the policies admit one here only for a verification).
        if (prepared.operation === 'score') return await signer.sign(prepared);
        const recorded = await service.consumeAllowanceAndSave(client, signer.unsigned(prepared));
        hints.learn(client.clientKey, recorded.allowance);
        // No unit left when the receipt was to be stored: nothing was stored, the receipt is dropped.
        if (recorded.receipt === null) return await exhausted(recorded.allowance);
        allowance = recorded.allowance;
        return { operation: 'verify', receipt: recorded.receipt };
      } finally {
        settle();
      }
    },
    complete: async () => (allowance === null ? {} : { allowance }),
    // Nothing was taken: the unit is taken only with a stored receipt.
    release: async () => settle(),
  };
}

/** A free admission whose unit was taken already (`allowance`), or a free score (null: nothing taken). */
function freeAdmission(service: VerifierService, client: ClientContext, allowance: AllowanceInfo | null): Admitted {
  return {
    admitted: true,
    paid: false,
    // A score stores nothing; a verification's receipt is signed where it is stored.
    async record(prepared, signer) {
      if (prepared.operation === 'score') return signer.sign(prepared);
      return { operation: 'verify', receipt: await service.saveReceipt(signer.unsigned(prepared)) };
    },
    ...refundOnce(service, client, allowance, 1),
  };
}

/**
 * The coded error a transport answers with for an outcome that is not an answer and asks for no
 * payment: a failure as it is, or the free allowance spent with payments off (429, retry at the reset).
 */
export function outcomeError(outcome: Refused | Failed): ApiError {
  if (outcome.kind === 'failed') return new ApiError(outcome.code, { message: outcome.message, fields: outcome.fields, retryAfter: outcome.retryAfter });
  return new ApiError('free_allowance_exhausted', { message: outcome.message, retryAfter: outcome.allowance.retryAfter });
}
