/**
 * @module The x402 admission policy of the pipeline (src/service/pipeline.ts),
 * the same for every transport: a request carrying a payment is verified and
 * reserved by the gate and settled after the work; without one, a verification
 * over the free size limit needs payment, otherwise it spends the shared free
 * allowance (a client known to have units left takes its unit with its receipt, as
 * in the free-only policy), and once that is spent it is refused with a PaymentRequired; the
 * trust score is always paid. The discovery probe (a POST without a body) gets a
 * PaymentRequired too. Transports only encode what this decides.
 *
 * A paid verification's receipt is not stored by `record`: `complete` hands it to
 * the gate, which stores it pending, settles, and publishes it only once the money
 * moved (voided on failure; kept pending, answered `settlement_pending`, when the
 * outcome is unknown). A payment is bound to the request it came with (`requestOf`):
 * sent again with that request it gets the receipt it bought, and nothing runs or is
 * charged again; sent with another request it is refused as `payment_invalid`.
 *
 * A batch of N (POST /verify/batch) follows the same rules with N units at once: one
 * payment of N × the verification price pays the whole batch (its receipts are kept
 * pending together, settled once, published in one transaction or voided together);
 * without a payment it takes N free units in one statement, or none, and is then
 * refused with a PaymentRequired naming the batch amount and resource.
 */
import { createHash } from 'node:crypto';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import {
  receiptRecord,
  type Prepared,
  type PreparedVerification,
  takeAllowance,
  takeBatchAllowance,
  type AdmissionPolicy,
  type Admitted,
  type BatchAdmitted,
  type Completion,
  type Refused,
  type RefusalCode,
  type SettlementPending,
  type Transport,
} from '../service/pipeline.js';
import { createAllowanceHints } from '../service/allowance-hints.js';
import type { AllowanceInfo, ClientContext, VerifierService } from '../service/types.js';
import type { ReceiptRecord } from '../store/store.js';
import type { AuthorizeResult, PaymentGate, PaymentTicket } from './gate.js';
import { unpaidCode } from './transport.js';

export interface PaymentPolicyOptions {
  gate: PaymentGate;
  service: VerifierService;
}

/** Where a transport carries the payment, for messages that tell the buyer how to pay. */
function howToPay(transport: Transport): string {
  return transport === 'mcp' ? 'pay per call with x402 in params._meta["x402/payment"]' : 'pay per call with x402 (see PAYMENT-REQUIRED)';
}

/**
 * What a payment is bound to: the request it pays for, so that the same payment sent with another
 * request is refused and with the same one gets what it bought. A verification is named by its
 * request_hash (the same request over any transport has the same one); a score by its agent id and a
 * batch by its items' request_hashes in order, each hashed under a label of its own.
 */
export function requestOf(prepared: Prepared): string {
  return prepared.operation === 'verify' ? prepared.requestHash : labelled('score', prepared.agentId);
}

export function batchRequestOf(prepared: readonly PreparedVerification[]): string {
  return labelled('batch', prepared.map((p) => p.requestHash).join(','));
}

function labelled(label: string, text: string): string {
  return createHash('sha256').update(`${label}\n${text}`, 'utf8').digest('hex');
}

function pendingRefusal(pending: SettlementPending, allowance: AllowanceInfo): Refused {
  return { admitted: false, kind: 'refused', code: 'settlement_pending', message: pending.message, allowance, pending };
}

function refusal(
  code: RefusalCode,
  message: string,
  allowance: AllowanceInfo,
  paymentRequired: PaymentRequired,
  settlement?: SettleResponse | null,
): Refused {
  return { admitted: false, kind: 'refused', code, message, allowance, paymentRequired, ...(settlement !== undefined ? { settlement } : {}) };
}

export function createPaymentPolicy(options: PaymentPolicyOptions): AdmissionPolicy {
  const { gate, service } = options;
  // The free branch admits a client known to have units left at once, as the free-only policy does.
  const hints = createAllowanceHints();

  /**
   * A payment the gate did not authorize: a retry of one it already settled gets what that payment
   * bought (`bought`); one whose settlement is still unknown is pending; anything else is refused.
   */
  async function unauthorized<A>(
    auth: Exclude<AuthorizeResult, { ok: true }>,
    client: ClientContext,
    bought: (paid: Extract<AuthorizeResult, { reason: 'paid_receipt' }>) => A,
  ): Promise<A | Refused> {
    if (auth.reason === 'paid_receipt') return bought(auth);
    if (auth.reason === 'settlement_pending') return pendingRefusal(auth.pending, await service.peekAllowance(client));
    return refusal('payment_invalid', auth.message, await service.peekAllowance(client), auth.paymentRequired);
  }

  /**
   * What an authorized payment does after the run, for one receipt or a batch: the gate stores the
   * receipts pending and settles once (published on success, voided on failure); before that,
   * release() frees the reservation. Either ends the other.
   */
  function settlementOf(ticket: PaymentTicket, client: ClientContext) {
    let released = false;
    return {
      async complete(records: ReceiptRecord | readonly ReceiptRecord[] | null): Promise<Completion | Refused> {
        released = true;
        const settled = await gate.settle(ticket, records);
        if (!settled.ok) {
          const allowance = await service.peekAllowance(client);
          if (settled.pending) return pendingRefusal(settled.pending, allowance);
          return refusal('settlement_failed', settled.message, allowance, settled.paymentRequired, settled.settlement);
        }
        return { settlement: settled.settlement };
      },
      async release(reason: string): Promise<void> {
        if (released) return;
        released = true;
        await gate.cancel(ticket, reason);
      },
    };
  }

  return {
    async probe(ctx) {
      const allowance = await service.peekAllowance(ctx.client);
      const code = unpaidCode(allowance);
      const message =
        code === 'free_trial_exhausted'
          ? `The free daily allowance for this client is used up; ${howToPay(ctx.transport)}.`
          : `This request needs payment (x402); ${howToPay(ctx.transport)}.`;
      return refusal(code, message, allowance, await gate.paymentRequired('verify', ctx.resource, message));
    },

    async admitBatch(prepared, ctx) {
      const units = prepared.length;
      const resource = { ...ctx.resource, units };
      if (ctx.payment?.present) {
        const auth = await gate.authorize('verify', resource, ctx.payment.payload, batchRequestOf(prepared));
        if (!auth.ok) {
          // A retry of the batch this payment settled for: the receipts it bought.
          return unauthorized(auth, ctx.client, (paid) => {
            const texts = paid.receipts ?? [paid.receipt];
            return { admitted: true, paid: true, record: async () => ({ operation: 'stored', texts }), complete: async () => ({ settlement: paid.settlement }), release: async () => {} };
          });
        }
        const paid = settlementOf(auth.ticket, ctx.client);
        const admitted: BatchAdmitted = {
          admitted: true,
          paid: true,
          // Signed here; stored by the gate in complete, every receipt pending until the one settlement is known.
          record: async (items, signer) => ({ operation: 'batch', receipts: await signer.signAll(items) }),
          complete: (result) => paid.complete(result.operation === 'batch' ? result.receipts.map(receiptRecord) : []),
          release: paid.release,
        };
        return admitted;
      }
      const pay = `pay for the whole batch with one x402 payment of ${units} × the verification price (see PAYMENT-REQUIRED)`;
      const large = prepared.findIndex((p) => p.bodyBytes > gate.config.freeMaxBodyBytes);
      if (large >= 0) {
        const allowance = await service.peekAllowance(ctx.client);
        const message = `Item ${large} is over ${gate.config.freeMaxBodyBytes} bytes, which the free allowance does not cover; ${pay}.`;
        return refusal(unpaidCode(allowance), message, allowance, await gate.paymentRequired('verify', resource, message));
      }
      // All N free units in one statement, or none.
      const free = await takeBatchAllowance(service, ctx.client, units);
      if (free.admitted) return free;
      const message = `This batch needs ${units} free verifications and ${free.allowance.remaining} remain today for this client (nothing was taken); ${pay}.`;
      return refusal(unpaidCode(free.allowance), message, free.allowance, await gate.paymentRequired('verify', resource, message));
    },

    async admit(prepared, ctx) {
      const operation = prepared.operation;
      if (ctx.payment?.present) {
        const auth = await gate.authorize(operation, ctx.resource, ctx.payment.payload, requestOf(prepared));
        if (!auth.ok) {
          // A retry of the request this payment settled for: the receipt it bought.
          return unauthorized(auth, ctx.client, (paid) => ({
            admitted: true,
            paid: true,
            record: async () => ({ operation: 'stored', prepared: operation, text: paid.receipt }),
            complete: async () => ({ settlement: paid.settlement }),
            release: async () => {},
          }));
        }
        const paid = settlementOf(auth.ticket, ctx.client);
        const admitted: Admitted = {
          admitted: true,
          paid: true,
          // Signed here; stored by the gate in complete, pending until the settlement is known.
          record: (p, signer) => signer.sign(p),
          complete: (result) => paid.complete(result.operation === 'verify' ? receiptRecord(result.receipt) : null),
          release: paid.release,
        };
        return admitted;
      }

      if (operation === 'score') {
        const message = `The trust score is a paid operation; ${howToPay(ctx.transport)}.`;
        return refusal('payment_required', message, await service.peekAllowance(ctx.client), await gate.paymentRequired('score', ctx.resource, message));
      }
      if (prepared.bodyBytes > gate.config.freeMaxBodyBytes) {
        const allowance = await service.peekAllowance(ctx.client);
        const message = `Bodies over ${gate.config.freeMaxBodyBytes} bytes are not covered by the free allowance; ${howToPay(ctx.transport)}.`;
        return refusal(unpaidCode(allowance), message, allowance, await gate.paymentRequired('verify', ctx.resource, message));
      }
      // Refused at the door, or when a unit taken with its receipt found none left: the same PaymentRequired.
      return takeAllowance(service, ctx.client, hints, async (allowance) => {
        const message = `The free daily allowance for this client is used up; ${howToPay(ctx.transport)}.`;
        return refusal('free_trial_exhausted', message, allowance, await gate.paymentRequired('verify', ctx.resource, message));
      });
    },
  };
}
