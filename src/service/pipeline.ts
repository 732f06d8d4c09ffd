/**
 * @module The one admission pipeline behind every transport (REST, MCP, and any
 * later one): prepare → admit → run → record → complete.
 *
 * - `prepare` strictly parses exactly the text that holds the request (the REST
 *   body, the MCP tool arguments' own source text), validates it, compiles its
 *   schema, evaluates it and builds the response ready to be signed — where the
 *   runner runs (a verification worker, by default). Anything wrong (422,
 *   too_complex, a worker stopped at its deadline) is answered here, before
 *   anything is reserved; the verdict never depends on who pays.
 * - `admit` asks the admission policy (free allowance; with payments on, the x402
 *   policy of src/payments) whether the request may be answered: `Admitted` or `Refused`.
 *   The free allowance admits a client this process knows to have units left at once, and
 *   takes its unit in `recordUnsigned`, in the transaction that stores its receipt; if none
 *   was left by then, nothing is stored and the request is refused (src/service/allowance-hints.ts).
 * - `execute` signs the prepared response (the run step), then the admission's
 *   `record` (store the receipt; a paid admission may store it pending), then its
 *   `complete` (settle and publish, or void). A free admission records a verification
 *   unsigned instead (`recordUnsigned`): the store signs it as it stores it where it
 *   can (the embedded store's writer thread), so the signature costs the HTTP thread
 *   nothing; the bytes are the same either way (Ed25519 is deterministic). Any
 *   failure before `complete` calls `release` (allowance refunded, reservation
 *   freed): errors are never charged.
 *
 * Adapters translate transport details only (headers, `_meta`, status codes);
 * they never decide whether a request is valid or who pays for it.
 */
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { ApiError } from '../errors.js';
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
  transport?: 'http' | 'mcp';
  method?: 'GET' | 'POST';
  routePattern?: string;
  /** A batch: how many verifications one payment pays for (the price is multiplied by it). */
  units?: number;
}

export interface AdmitContext {
  transport: Transport;
  client: ClientContext;
  /** An x402 payment as the transport carried it; `present` with a null payload when it could not be decoded. */
  payment?: { present: boolean; payload: unknown };
  /** The resource being paid for (used when payment is asked). */
  resource: PaidResource;
}

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

/** What a successful completion hands back to the transport. */
export interface Completion {
  /** x402 settlement response of a paid request (REST: PAYMENT-RESPONSE header; MCP: `_meta`). */
  settlement?: SettleResponse;
  /** The allowance state after a free request (REST: headers; MCP: `_meta`). */
  allowance?: AllowanceInfo;
}

/** The result of the run step: a signed document and the facts its record needs. */
export type RunResult =
  | { operation: 'verify'; receipt: IssuedReceipt }
  | { operation: 'score'; signed: SignedResult }
  /** A document this payment had already bought (a retry after a pending settlement): nothing ran. */
  | { operation: 'stored'; prepared: Operation; text: string };

/**
 * A request allowed to run. The pipeline calls `record` and then `complete` after a
 * successful run, or `release` when anything before `complete` fails.
 */
export interface Admitted {
  admitted: true;
  /** True when a payment (not the free allowance) pays for it. */
  paid: boolean;
  /** The allowance state after the unit was taken (free path), else null. */
  allowance: AllowanceInfo | null;
  /** The signed text this payment had already bought: execute runs nothing and only completes. */
  answer?: string;
  /**
   * Store what the run produced. The free path stores the receipt for good; the paid
   * path stores nothing here: `complete` hands the receipt to the gate, which stores it
   * pending, settles, and publishes or voids it.
   */
  record(result: RunResult): Promise<void>;
  /**
   * When present, a verification is recorded here instead of run and then recorded: the admission
   * gets the receipt unsigned, has it signed and stored (the free path: by the store's writer thread
   * where it can, in the step that stores it) and hands back the receipt as stored, or the refusal of
   * a unit found gone at store time (nothing stored).
   */
  recordUnsigned?(unsigned: UnsignedReceipt): Promise<IssuedReceipt | Refused>;
  /**
   * Finish: settle a payment. A failed settlement returns a refusal (nothing charged, receipt
   * voided); an unknown outcome returns `settlement_pending` (the receipt stays pending).
   */
  complete(result: RunResult): Promise<Completion | Refused>;
  /** Undo the admission (refund the allowance unit, release the payment reservation). Idempotent. */
  release(reason: string): Promise<void>;
}

export type Admission = Admitted | Refused;

/**
 * A whole batch allowed to run, as one admission: `units` allowance units taken at once, or
 * one payment of units × the price. The pipeline runs every item, then calls `record` with
 * all receipts (stored in one transaction) and `complete`; `release` when anything before
 * `complete` fails, so a batch is stored and charged whole or not at all.
 */
export interface BatchAdmitted {
  admitted: true;
  paid: boolean;
  /** The allowance state after the units were taken (free path), else null. */
  allowance: AllowanceInfo | null;
  /** The receipts this payment had already bought (a retry after a pending settlement): nothing runs. */
  answer?: string[];
  /** Store every receipt in one transaction (free path); the paid path stores them pending in `complete`. */
  record(receipts: readonly IssuedReceipt[]): Promise<void>;
  /** Settle the one payment (paid path); a failed settlement returns a refusal with every receipt voided. */
  complete(receipts: readonly IssuedReceipt[]): Promise<Completion | Refused>;
  /** Give back every unit taken, or release the payment reservation. Idempotent. */
  release(reason: string): Promise<void>;
}

export type BatchAdmission = BatchAdmitted | Refused;

/** Decides who pays for a prepared request. The default spends the free allowance; src/payments adds x402. */
export interface AdmissionPolicy {
  admit(prepared: Prepared, ctx: AdmitContext): Promise<Admission>;
  /** The answer to a request without a body (the x402 discovery probe); null when there is none (payments off). */
  probe(ctx: AdmitContext): Promise<Refused | null>;
  /** Admit a batch of verifications whole (N units or one payment of N × the price), or refuse it whole. */
  admitBatch?(prepared: readonly PreparedVerification[], ctx: AdmitContext): Promise<BatchAdmission>;
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
   * this id and time, ready to be signed. Throws ApiError (422, too_complex, verification_aborted).
   */
  prepare(source: string | Uint8Array, stamp: { verificationId: string; verifiedAt: Date }): Promise<PreparedVerification>;
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

export interface Executed {
  result: RunResult;
  completion: Completion;
}

export interface ExecutedBatch {
  /** The signed receipt texts, in item order, exactly as stored. */
  texts: string[];
  /** How many passed (of the receipts that ran now; of the stored ones for a paid retry). */
  passed: number;
  completion: Completion;
}

export interface Pipeline {
  prepareVerification(source: string | Uint8Array): Promise<PreparedVerification>;
  /** Validates the agent id (422) and refuses example agents; nothing is reserved. */
  prepareScore(agentId: string): PreparedScore;
  admit(prepared: Prepared, ctx: AdmitContext): Promise<Admission>;
  probe(ctx: AdmitContext): Promise<Refused | null>;
  /** run → record → complete; release on any failure before complete. Returns the refusal of a failed settlement. */
  execute(prepared: Prepared, admitted: Admitted, transport: Transport): Promise<Executed | Refused>;
  /** The allowance state (for headers on answers that took no unit). */
  peekAllowance(client: ClientContext): Promise<AllowanceInfo>;
  /** Admit a whole batch, or refuse it whole (nothing taken). */
  admitBatch(prepared: readonly PreparedVerification[], ctx: AdmitContext): Promise<BatchAdmission>;
  /**
   * Run every item, then record all receipts at once, then complete. Any failure before
   * `complete` (an item's run, the store write) releases the whole admission and throws:
   * nothing is stored or charged. Returns the refusal of a failed settlement.
   */
  executeBatch(prepared: readonly PreparedVerification[], admitted: BatchAdmitted, transport: Transport): Promise<ExecutedBatch | Refused>;
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

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { runner, service, policy } = deps;

  async function run(prepared: Prepared): Promise<RunResult> {
    if (prepared.operation === 'score') return { operation: 'score', signed: await service.score(prepared.agentId) };
    return { operation: 'verify', receipt: await runner.run(prepared) };
  }

  return {
    service,
    // Whole seconds: verified_at is RFC 3339 without fractions, and equals the attestation timestamp.
    prepareVerification: (source) =>
      runner.prepare(source, { verificationId: deps.newId(), verifiedAt: new Date(Math.floor(deps.clock().getTime() / 1000) * 1000) }),
    prepareScore(agentId) {
      service.checkScorable(agentId);
      return { operation: 'score', agentId, bodyBytes: 0 };
    },
    admit: (prepared, ctx) => policy.admit(prepared, ctx),
    probe: (ctx) => policy.probe(ctx),
    peekAllowance: (client) => service.peekAllowance(client),

    async execute(prepared, admitted, transport) {
      let result: RunResult;
      try {
        if (admitted.answer !== undefined) {
          result = { operation: 'stored', prepared: prepared.operation, text: admitted.answer };
        } else if (prepared.operation === 'verify' && admitted.recordUnsigned) {
          const recorded = await admitted.recordUnsigned(runner.unsigned(prepared));
          if ('admitted' in recorded) return recorded;
          result = { operation: 'verify', receipt: recorded };
        } else {
          result = await run(prepared);
          await admitted.record(result);
        }
      } catch (err) {
        // An error is never charged: the unit or the reservation goes back.
        await admitted.release(err instanceof ApiError ? err.code : 'work_failed').catch(() => undefined);
        throw err;
      }
      const completion = await admitted.complete(result);
      if ('admitted' in completion) return completion;
      if (result.operation === 'verify') deps.onVerified?.({ transport, result: result.receipt.result, paid: admitted.paid });
      return { result, completion };
    },

    async admitBatch(prepared, ctx) {
      if (!policy.admitBatch) throw new Error('the admission policy does not admit batches');
      return policy.admitBatch(prepared, ctx);
    },

    async executeBatch(prepared, admitted, transport) {
      if (admitted.answer !== undefined) {
        const completion = await admitted.complete([]);
        if ('admitted' in completion) return completion;
        const passed = admitted.answer.filter((t) => (JSON.parse(t) as { result?: unknown }).result === 'pass').length;
        return { texts: admitted.answer, passed, completion };
      }
      let receipts: IssuedReceipt[];
      try {
        // Every item runs (where the runner runs them) before anything is stored.
        const runs = await Promise.allSettled(prepared.map(async (p) => (await run(p)) as Extract<RunResult, { operation: 'verify' }>));
        const failed = runs.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
        receipts = runs.map((r) => (r as PromiseFulfilledResult<Extract<RunResult, { operation: 'verify' }>>).value.receipt);
        await admitted.record(receipts);
      } catch (err) {
        // Nothing was stored: every unit, or the reservation, goes back.
        await admitted.release(err instanceof ApiError ? err.code : 'work_failed').catch(() => undefined);
        throw err;
      }
      const completion = await admitted.complete(receipts);
      if ('admitted' in completion) return completion;
      let passed = 0;
      for (const r of receipts) {
        if (r.result === 'pass') passed++;
        deps.onVerified?.({ transport, result: r.result, paid: admitted.paid });
      }
      return { texts: receipts.map((r) => r.text), passed, completion };
    },
  };
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
      if (prepared.operation === 'score') return freeAdmission(service, null, ctx.client);
      return takeAllowance(service, ctx.client, hints);
    },
    probe: async () => null,
    admitBatch: (prepared, ctx) => takeBatchAllowance(service, ctx.client, prepared.length),
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
      code: 'free_allowance_exhausted',
      message: `This batch needs ${units} verifications of the free daily allowance and ${allowance.remaining} of ${allowance.limit} remain; it resets at ${allowance.resetsAt}. Nothing was taken.`,
      allowance,
    };
  }
  let released = false;
  let current: AllowanceInfo = allowance;
  return {
    admitted: true,
    paid: false,
    allowance,
    // One transaction: the whole batch is stored (and queued for the log) or none of it.
    record: (receipts) => service.saveReceipts(receipts.map(receiptRecord)),
    complete: async () => ({ allowance: current }),
    async release() {
      if (released) return;
      released = true;
      await service.refundAllowanceUnits(client, units);
      current = await service.peekAllowance(client);
    },
  };
}

/**
 * Take one unit of the free allowance: Admitted (free) or `exhausted`'s refusal (by default
 * free_allowance_exhausted; the x402 policy's free branch answers with a PaymentRequired). With
 * `hints`, a client known to have units left is admitted at once and its unit is taken with its
 * receipt, in one write, or the same refusal comes from `complete` (see allowance-hints.ts);
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
  return freeAdmission(service, allowance, client);
}

function allowanceExhausted(allowance: AllowanceInfo): Refused {
  return {
    admitted: false,
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
    allowance: null,
    async record() {
      settle();
      throw new Error('a unit of the free allowance is taken with a receipt');
    },
    async recordUnsigned(unsigned) {
      try {
        const recorded = await service.consumeAllowanceAndSave(client, unsigned);
        hints.learn(client.clientKey, recorded.allowance);
        // No unit left when the receipt was to be stored: nothing was stored, the receipt is dropped.
        if (recorded.receipt === null) return exhausted(recorded.allowance);
        allowance = recorded.allowance;
        return recorded.receipt;
      } finally {
        settle();
      }
    },
    complete: async () => (allowance === null ? {} : { allowance }),
    // Nothing was taken: the unit is taken only with a stored receipt.
    release: async () => settle(),
  };
}

function freeAdmission(service: VerifierService, allowance: AllowanceInfo | null, client: ClientContext): Admitted {
  let released = false;
  let current = allowance;
  return {
    admitted: true,
    paid: false,
    allowance,
    // A score stores nothing; a verification is recorded by recordUnsigned.
    async record(result) {
      if (result.operation === 'verify') throw new Error('a free verification is recorded unsigned');
    },
    recordUnsigned: (unsigned) => service.saveReceipt(unsigned),
    complete: async () => (current ? { allowance: current } : {}),
    async release() {
      if (released || allowance === null) return;
      released = true;
      await service.refundAllowance(client);
      current = await service.peekAllowance(client);
    },
  };
}

/** The coded error of a refusal that carries no PaymentRequired (payments off). */
export function refusalError(refused: Refused): ApiError {
  return new ApiError('free_allowance_exhausted', { message: refused.message, retryAfter: refused.allowance.retryAfter });
}
