/**
 * @module The payment gate: the transport-neutral x402 v2 flow shared by the
 * REST routes and the MCP tools. It builds PaymentRequired for a route (through
 * the official x402ResourceServer and the `exact` EVM/SVM server schemes, so
 * prices become atomic amounts and assets/domains come from the SDK), verifies
 * a buyer's payment with the facilitator, reserves the payment key in the store
 * for the request it came with before any work is done (so one authorization buys
 * one request, even under concurrency and across instances: the same request again
 * gets what it bought, another request is refused), settles after the work, and
 * writes every step to the payment ledger.
 *
 * No receipt without payment: the receipt a paid call produces is stored as a
 * pending settlement (durable, invisible) before the settlement starts, and is
 * published (moved to the receipts: lookup, reputation, score) only once the
 * money has moved. A failed settlement voids it; a settlement whose outcome is
 * unknown (not mined in time, facilitator timeout) keeps it pending with the
 * reservation, and `reconcile` settles the question later from the chain.
 */
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { ExactSvmScheme as ExactSvmServerScheme } from '@x402/svm/exact/server';
import { getTokenPayerFromTransaction } from '@x402/svm';
import { getTransactionDecoder } from '@solana/kit';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import { ApiError } from '../errors.js';
import type { PaidResource, SettlementPending } from '../service/pipeline.js';
import type { PaymentEventKind, PaymentKey, PaymentReservation, PaymentStore, PendingSettlement, ReceiptRecord, ReceiptStore } from '../store/store.js';
import type { PaidRoute, PaymentConfig, PaymentNetworkConfig } from './config.js';
import { httpDiscovery, mcpDiscovery } from './discovery.js';
import { facilitatorDetail, publicReason, publicSettlement, reasonSentence } from './facilitator-errors.js';

/** The store ports the gate uses: the payments, and the receipts it publishes once they are paid for. */
export type PaymentGateStore = PaymentStore & Pick<ReceiptStore, 'saveReceipt' | 'saveReceipts' | 'getReceipt'>;

/**
 * What the chain says about a settlement transaction (the built-in facilitator can tell; a hosted one cannot):
 * mined and succeeded, mined and failed, `expired` (never landed and can no longer: a Solana transaction
 * past its blockhash), or not known yet. `payment` is the buyer's payload the transaction was sent for.
 */
export type TransactionStatusCheck = (network: string, transaction: string, payment?: PaymentPayload) => Promise<'success' | 'reverted' | 'expired' | 'unknown'>;

export interface PaymentGateOptions {
  config: PaymentConfig;
  store: PaymentGateStore;
  facilitator: FacilitatorClient;
  serviceName?: string;
  /** Injected clock (ms), used for the validity-window check and ledger timestamps. */
  now?: () => number;
  /** Reads a settlement transaction's outcome from the chain (reconciliation by transaction hash). */
  transactionStatus?: TransactionStatusCheck;
  log?: { warn(obj: unknown, msg?: string): void; error?(obj: unknown, msg?: string): void };
}

/** What the buyer is paying for, as named in PaymentRequired.resource. */
export type ResourceDescription = PaidResource;

/** Why a payment was not accepted. Stable strings; shown to buyers. */
export type PaymentRejection =
  | 'invalid_payment'
  | 'unsupported_version'
  | 'no_matching_requirements'
  | 'authorization_window_too_long'
  | 'authorization_expires_too_soon'
  | 'unsupported_payload'
  | 'payment_verification_failed'
  | 'payment_already_used'
  /** The payment is held for (or was spent on) another request: one payment pays for the one request it was first sent with. */
  | 'payment_used_for_another_request'
  /** The same authorization is still being settled; retry later, it was not refused. */
  | 'settlement_pending';

/** A verified, reserved payment. Hand it back to `settle` or `cancel`, exactly once. */
export interface PaymentTicket {
  readonly route: PaidRoute;
  readonly key: PaymentKey;
  readonly payload: PaymentPayload;
  readonly requirements: PaymentRequirements;
  readonly payer: string;
  readonly resource: ResourceDescription;
  /**
   * Set when this authorization was already settled (a retry after a pending settlement that
   * turned out mined): the work runs and its result is published without charging again.
   */
  readonly settled?: SettleResponse;
}

/** A settlement whose outcome is not known yet: the buyer must not pay again, nor be told nothing was charged. */
export type PendingOutcome = SettlementPending;

export type AuthorizeResult =
  | { ok: true; ticket: PaymentTicket }
  /** A retry of a payment that had bought a receipt, now settled: here is that receipt; nothing runs or is charged again. */
  | { ok: false; reason: 'paid_receipt'; message: string; receipt: string; settlement: SettleResponse; receipts?: string[] }
  /** The same authorization is still being settled: not a refusal; the buyer must not pay again. */
  | { ok: false; reason: 'settlement_pending'; message: string; pending: PendingOutcome }
  | { ok: false; reason: Exclude<PaymentRejection, 'settlement_pending'>; message: string; paymentRequired: PaymentRequired };

export type SettleResult =
  | { ok: true; settlement: SettleResponse }
  | { ok: false; pending: PendingOutcome; settlement: SettleResponse | null; message: string }
  | { ok: false; pending?: undefined; settlement: SettleResponse | null; message: string; paymentRequired: PaymentRequired };

/** What one reconciliation of a pending settlement concluded. */
export type ReconcileOutcome = 'settled' | 'failed' | 'pending';

export interface PriceInfo {
  route: PaidRoute;
  /** "$0.02" */
  price: string;
  accepts: PaymentRequirements[];
}

export interface PaymentGate {
  readonly enabled: boolean;
  readonly config: PaymentConfig;
  /** Fetch the facilitator's supported kinds and build the requirements. Retried on later calls when it fails. */
  initialize(): Promise<void>;
  /** The accepted payment options of a route (requires initialize). */
  requirements(route: PaidRoute): Promise<PaymentRequirements[]>;
  /** The live price list, for /.well-known/x402, /llms.txt and the agent card. */
  prices(): Promise<PriceInfo[]>;
  /** Build the PaymentRequired object for a route and resource. */
  paymentRequired(route: PaidRoute, resource: ResourceDescription, error?: string): Promise<PaymentRequired>;
  /**
   * Verify the payment with the facilitator and reserve it for `request` (what the request is named by,
   * see src/payments/admission.ts). Nothing is charged yet. A payment already held answers for its own
   * request only: what it bought (`paid_receipt`), or `settlement_pending` while that is not known;
   * with any other request it is refused (`payment_used_for_another_request`).
   */
  authorize(route: PaidRoute, resource: ResourceDescription, payment: unknown, request: string): Promise<AuthorizeResult>;
  /**
   * The work succeeded: store its receipt (if any) as pending, settle, then publish the receipt
   * and keep the reservation (settled); void the receipt and release the reservation (failed);
   * or keep both (pending: outcome unknown, see reconcile). The receipt is visible only when settled.
   */
  settle(ticket: PaymentTicket, record: ReceiptRecord | readonly ReceiptRecord[] | null): Promise<SettleResult>;
  /** Resolve one pending settlement from the chain (or the facilitator): publish, void or keep it. */
  reconcile(pending: PendingSettlement): Promise<ReconcileOutcome>;
  /** Reconcile every pending settlement (start-up, then periodically). Never throws. */
  reconcileAll(): Promise<Record<ReconcileOutcome, number>>;
  /** The work failed: release the reservation (the same authorization may be retried), record. */
  cancel(ticket: PaymentTicket, reason: string, verificationId?: string | null): Promise<void>;
}

/** Seconds of clock skew tolerated on top of maxTimeoutSeconds when checking a validity window. */
const WINDOW_SKEW_SECONDS = 30;
/** The facilitator's errorReason for a submitted transaction not mined within its wait. */
const SETTLEMENT_PENDING = 'settlement_pending';
/**
 * Failure reasons meaning the authorization's nonce is spent on chain (by a transfer or a cancellation), or
 * (Solana) that the facilitator already sent this very transaction: its outcome is the first send's.
 */
const NONCE_USED_RE = /nonce.*(used|already)|authorization.*used|duplicate_settlement/i;
/**
 * How long a settlement attempt may still be running (facilitator timeout plus the wait for the
 * transaction); before that, a pending settlement without a transaction is not submitted again.
 */
const IN_FLIGHT_MS = 120_000;
/** Suggested wait before retrying a pending settlement. */
const PENDING_RETRY_SECONDS = 5;
/** Suggested wait before retrying while the first copy of a payment is still being worked on. */
const IN_PROGRESS_RETRY_SECONDS = 2;
const ANOTHER_REQUEST_MESSAGE =
  'This payment was used for another request: one payment pays for the one request it was first sent with. ' +
  'Nothing was charged for this request; sign a new payment for it.';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Shape-check an untrusted payment payload (decoded header or MCP _meta). */
export function asPaymentPayload(value: unknown): PaymentPayload | null {
  if (!isObject(value)) return null;
  if (typeof value.x402Version !== 'number') return null;
  if (!isObject(value.payload)) return null;
  if (value.x402Version === 2) {
    const a = value.accepted;
    if (!isObject(a) || typeof a.scheme !== 'string' || typeof a.network !== 'string' || typeof a.amount !== 'string') return null;
    if (typeof a.asset !== 'string' || typeof a.payTo !== 'string') return null;
  }
  return value as unknown as PaymentPayload;
}

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const UINT256_RE = /^(0|[1-9][0-9]{0,76})$/;
const NONCE_RE = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE_RE = /^0x(?:[0-9a-fA-F]{2}){65,}$/;
const MAX_SIGNATURE_CHARS = 20_000;

/**
 * Why an EVM `exact` payload cannot be taken, or null when its EIP-3009 authorization is
 * well formed. Checked before the facilitator is asked, so a malformed field is a refused
 * payment (402), never a facilitator error (5xx). Only EIP-3009 is supported: a payload that
 * also carries a Permit2 authorization is refused, because the facilitator would settle that
 * one while the replay reservation is keyed by the EIP-3009 nonce.
 */
function evmPayloadProblem(payload: PaymentPayload): string | null {
  const p = payload.payload as Record<string, unknown>;
  const extra = Object.keys(p).filter((k) => k !== 'authorization' && k !== 'signature');
  if ('permit2Authorization' in p) return 'Only EIP-3009 (transferWithAuthorization) payments are accepted; this payload carries a Permit2 authorization.';
  if (extra.length > 0) return `The payment payload has unexpected fields (${extra.slice(0, 3).join(', ')}).`;
  const auth = p.authorization;
  if (!isObject(auth)) return 'The payment payload has no EIP-3009 authorization.';
  for (const f of ['from', 'to'] as const) if (typeof auth[f] !== 'string' || !ADDRESS_RE.test(auth[f])) return `authorization.${f} must be a 0x-prefixed 20-byte address.`;
  for (const f of ['value', 'validAfter', 'validBefore'] as const) {
    if (typeof auth[f] !== 'string' || !UINT256_RE.test(auth[f])) return `authorization.${f} must be a non-negative integer in decimal.`;
  }
  if (typeof auth.nonce !== 'string' || !NONCE_RE.test(auth.nonce)) return 'authorization.nonce must be 0x followed by 64 hex digits.';
  if (typeof p.signature !== 'string' || p.signature.length > MAX_SIGNATURE_CHARS || !SIGNATURE_RE.test(p.signature)) {
    return 'signature must be 0x-prefixed hex of at least 65 bytes.';
  }
  return null;
}

const svmTransactionDecoder = getTransactionDecoder();
const BASE64_RE = /^[A-Za-z0-9+/]+={0,2}$/;
/** A Solana transaction is at most 1232 bytes on the wire; its base64 is shorter than this. */
const MAX_SVM_TRANSACTION_CHARS = 2_000;

/** A key for ledger entries of refusals that have no readable payer or nonce. */
function refusalKey(payment: unknown): PaymentKey {
  const v = isObject(payment) ? payment : {};
  const accepted = isObject(v.accepted) ? v.accepted : {};
  const auth = isObject(v.payload) && isObject(v.payload.authorization) ? v.payload.authorization : {};
  const text = (x: unknown) => (typeof x === 'string' && x.length > 0 && x.length <= 200 ? x : null);
  return {
    network: text(accepted.network) ?? 'unknown',
    payer: text(auth.from)?.toLowerCase() ?? 'unknown',
    nonce: text(auth.nonce)?.toLowerCase() ?? 'unknown',
  };
}

/** The replay key of a payment: (network, payer, nonce); Solana uses the payer's transaction signature. */
function paymentKeyOf(payload: PaymentPayload, network: PaymentNetworkConfig['family']): { key: PaymentKey; payer: string } | null {
  const net = payload.accepted.network;
  if (network === 'evm') {
    const auth = (payload.payload as Record<string, unknown>).authorization;
    if (!isObject(auth) || typeof auth.from !== 'string' || typeof auth.nonce !== 'string') return null;
    if (!/^0x[0-9a-fA-F]{40}$/.test(auth.from) || !/^0x[0-9a-fA-F]{64}$/.test(auth.nonce)) return null;
    const payer = auth.from.toLowerCase();
    return { key: { network: net, payer, nonce: auth.nonce.toLowerCase() }, payer };
  }
  try {
    // Decoded here rather than by the SDK's helper, which writes every undecodable payload to stderr.
    const wire = (payload.payload as { transaction?: unknown }).transaction;
    if (typeof wire !== 'string' || wire.length > MAX_SVM_TRANSACTION_CHARS || !BASE64_RE.test(wire)) return null;
    const tx = svmTransactionDecoder.decode(Buffer.from(wire, 'base64'));
    const payer = getTokenPayerFromTransaction(tx);
    const sig = payer ? (tx.signatures as Record<string, Uint8Array | null>)[payer] : null;
    if (!payer || !sig) return null;
    return { key: { network: net, payer, nonce: Buffer.from(sig).toString('hex') }, payer };
  } catch {
    return null;
  }
}

/** Create the gate. Call `initialize()` at start (it is also run lazily). */
export function createPaymentGate(options: PaymentGateOptions): PaymentGate {
  const { config, store, facilitator } = options;
  const now = options.now ?? (() => Date.now());
  const server = new x402ResourceServer(facilitator);
  for (const n of config.networks) {
    server.register(n.network, n.family === 'evm' ? new ExactEvmServerScheme() : new ExactSvmServerScheme());
  }
  server.registerExtension(bazaarResourceServerExtension);

  let initPromise: Promise<void> | null = null;
  const routeRequirements = new Map<PaidRoute, PaymentRequirements[]>();

  async function doInitialize(): Promise<void> {
    await server.initialize();
    for (const route of ['verify', 'score'] as const) {
      const reqs = await server.buildPaymentRequirementsFromOptions(
        config.networks.map((n) => ({
          scheme: 'exact',
          network: n.network,
          payTo: n.payTo,
          price: config.prices[route],
          maxTimeoutSeconds: config.maxTimeoutSeconds,
        })),
        undefined,
      );
      for (const [i, r] of reqs.entries()) {
        const want = config.networks[i].asset;
        if (r.asset.toLowerCase() !== want.toLowerCase()) {
          throw new Error(`x402: ${r.network} priced in ${r.asset}, expected ${want}`);
        }
      }
      routeRequirements.set(route, reqs);
    }
  }

  function initialize(): Promise<void> {
    if (!initPromise) {
      initPromise = doInitialize().catch((e) => {
        initPromise = null;
        throw e;
      });
    }
    return initPromise;
  }

  /** The facilitator is down or misbehaving: a retryable 503, never a charge. */
  function facilitatorUnavailable(e: unknown): ApiError {
    options.log?.warn({ err: e }, 'x402 facilitator unavailable');
    return new ApiError('unavailable', { message: 'The payment facilitator is not reachable right now; nothing was charged. Try again shortly.', retryAfter: 5 });
  }

  async function requirements(route: PaidRoute): Promise<PaymentRequirements[]> {
    await initialize().catch((e: unknown) => {
      throw facilitatorUnavailable(e);
    });
    return routeRequirements.get(route)!.map((r) => ({ ...r, extra: structuredClone(r.extra) }));
  }

  function extensionsFor(route: PaidRoute, resource: ResourceDescription): Record<string, unknown> {
    if (resource.transport === 'mcp') return mcpDiscovery(route);
    const declared = httpDiscovery(route);
    const path = (() => {
      try {
        return new URL(resource.url).pathname;
      } catch {
        return resource.url;
      }
    })();
    return server.enrichExtensions(declared, {
      method: resource.method ?? (route === 'verify' ? 'POST' : 'GET'),
      adapter: { getPath: () => path },
      routePattern: resource.routePattern,
    });
  }

  /** The accepted options for a resource: a batch of N asks N × the route's price, in atomic units. */
  async function requirementsFor(route: PaidRoute, resource: ResourceDescription): Promise<PaymentRequirements[]> {
    const accepts = await requirements(route);
    const units = resource.units ?? 1;
    if (units === 1) return accepts;
    if (!Number.isSafeInteger(units) || units < 1) throw new TypeError(`units must be a positive integer, got ${units}`);
    return accepts.map((r) => ({ ...r, amount: (BigInt(r.amount) * BigInt(units)).toString() }));
  }

  async function paymentRequired(route: PaidRoute, resource: ResourceDescription, error?: string): Promise<PaymentRequired> {
    const accepts = await requirementsFor(route, resource);
    return server.createPaymentRequiredResponse(
      accepts,
      {
        url: resource.url,
        description: resource.description,
        mimeType: resource.mimeType ?? 'application/json',
        ...(options.serviceName ? { serviceName: options.serviceName } : {}),
      },
      error,
      // The discovery declaration describes the single-request route; a batch is not listed under it.
      resource.units === undefined ? extensionsFor(route, resource) : undefined,
    );
  }

  async function record(kind: PaymentEventKind, key: PaymentKey, route: PaidRoute, amount: string, verificationId: string | null, detail: string | null): Promise<void> {
    try {
      await store.recordPaymentEvent({ key, kind, route, amount, verificationId, at: new Date(now()).toISOString(), detail });
    } catch (e) {
      // The ledger is an audit trail; a failed append must not turn a settled payment into an error.
      options.log?.warn({ err: e, kind }, 'payment ledger append failed');
    }
  }

  async function reject(
    route: PaidRoute,
    resource: ResourceDescription,
    reason: Exclude<PaymentRejection, 'settlement_pending'>,
    message: string,
    ledger?: { key: PaymentKey; amount: string },
  ): Promise<AuthorizeResult> {
    // Every refusal is in the ledger, also those decided before the facilitator is asked.
    if (ledger) await record('refused', ledger.key, route, ledger.amount, null, `${reason}: ${message}`.slice(0, 500));
    return { ok: false, reason, message, paymentRequired: await paymentRequired(route, resource, message) };
  }

  async function authorize(route: PaidRoute, resource: ResourceDescription, payment: unknown, request: string): Promise<AuthorizeResult> {
    const accepts = await requirementsFor(route, resource);
    const payload = asPaymentPayload(payment);
    const refusal = (amount?: string) => ({ key: refusalKey(payment), amount: amount ?? accepts[0]?.amount ?? '0' });
    if (!payload) return reject(route, resource, 'invalid_payment', 'The payment could not be read: expected an x402 PaymentPayload.', refusal());
    if (payload.x402Version !== 2) return reject(route, resource, 'unsupported_version', 'Only x402Version 2 payments are accepted.', refusal());
    const matched = server.findMatchingRequirements(accepts, payload);
    if (!matched) {
      return reject(
        route,
        resource,
        'no_matching_requirements',
        'The payment does not match any accepted option of this route (network, asset, amount or recipient differ).',
        refusal(),
      );
    }
    const net = config.networks.find((n) => n.network === matched.network)!;

    if (net.family === 'evm') {
      const problem = evmPayloadProblem(payload);
      if (problem) {
        const unsupported = 'permit2Authorization' in (payload.payload as Record<string, unknown>);
        return reject(route, resource, unsupported ? 'unsupported_payload' : 'invalid_payment', problem, refusal(matched.amount));
      }
    }
    const keyed = paymentKeyOf(payload, net.family);
    if (!keyed) return reject(route, resource, 'invalid_payment', 'The payment carries no payer or nonce.', refusal(matched.amount));

    // A payment already held answers for the request it was reserved for, whatever its validity window
    // says by now: what it bought, or that it is under way; for another request it is refused.
    const answered = await heldAnswer(route, resource, keyed.key, request, { payload, requirements: matched });
    if (answered) return answered;

    if (net.family === 'evm') {
      const auth = (payload.payload as { authorization: { validBefore: string; validAfter: string } }).authorization;
      const validBefore = Number(auth.validBefore);
      const seconds = Math.floor(now() / 1000);
      // An authorization valid for longer than we ask for could be held back and replayed later; refuse it.
      if (validBefore - seconds > matched.maxTimeoutSeconds + WINDOW_SKEW_SECONDS) {
        return reject(route, resource, 'authorization_window_too_long', `The authorization is valid for longer than ${matched.maxTimeoutSeconds} seconds.`, refusal(matched.amount));
      }
      // The work and the settlement must fit in what is left, or the buyer would be refused after the work.
      if (validBefore - seconds < config.minValiditySeconds) {
        return reject(
          route,
          resource,
          'authorization_expires_too_soon',
          `The authorization must stay valid for at least ${config.minValiditySeconds} more seconds (validBefore), so it cannot expire before it is settled.`,
          refusal(matched.amount),
        );
      }
    }

    let verdict: Awaited<ReturnType<typeof server.verifyPayment>>;
    try {
      verdict = await server.verifyPayment(payload, matched);
    } catch (e) {
      // A facilitator answering 4xx with a verdict is a refusal; anything else is an outage.
      const v = e as { invalidReason?: unknown; invalidMessage?: unknown; name?: string };
      if (typeof v.invalidReason === 'string') {
        verdict = { isValid: false, invalidReason: v.invalidReason, ...(typeof v.invalidMessage === 'string' ? { invalidMessage: v.invalidMessage } : {}) };
      } else throw facilitatorUnavailable(e);
    }
    if (!verdict.isValid) {
      // The facilitator's own text (a library exception, for the built-in one) stays in the ledger and the log.
      const detail = facilitatorDetail(verdict.invalidReason, verdict.invalidMessage);
      options.log?.warn({ key: keyed.key, detail }, 'x402 payment refused by the facilitator');
      await record('verify_failed', keyed.key, route, matched.amount, null, detail);
      const reason = publicReason(verdict.invalidReason, 'payment_verification_failed');
      return reject(route, resource, 'payment_verification_failed', `The facilitator rejected the payment (${reason}): ${reasonSentence(reason, 'verify')}`);
    }
    // Reserve before any work: of N concurrent requests carrying the same authorization, one wins.
    let reserved = await store.reservePayment(keyed.key, request);
    if (!reserved) {
      // Another copy won meanwhile: the answer is the held payment's. Nothing there any more (its
      // settlement failed and released it): one more try.
      const raced = await heldAnswer(route, resource, keyed.key, request, { payload, requirements: matched });
      if (raced) return raced;
      reserved = await store.reservePayment(keyed.key, request);
    }
    if (!reserved) {
      await record('replay_rejected', keyed.key, route, matched.amount, null, null);
      return alreadyUsed(route, resource);
    }
    await record('verified', keyed.key, route, matched.amount, null, verdict.payer ?? keyed.payer);
    return { ok: true, ticket: { route, key: keyed.key, payload, requirements: matched, payer: verdict.payer ?? keyed.payer, resource } };
  }

  async function alreadyUsed(route: PaidRoute, resource: ResourceDescription): Promise<AuthorizeResult> {
    const message = 'This payment authorization was already used.';
    return { ok: false, reason: 'payment_already_used', message, paymentRequired: await paymentRequired(route, resource, message) };
  }

  /**
   * The answer for a payment that is already held (reserved, pending or settled), or null when it is
   * free (or its earlier settlement failed and released it: a fresh attempt). Held for another request:
   * refused, whatever state it is in. Held for this one: what it bought, or `settlement_pending`.
   */
  async function heldAnswer(
    route: PaidRoute,
    resource: ResourceDescription,
    key: PaymentKey,
    request: string,
    payment: { payload: PaymentPayload; requirements: PaymentRequirements },
  ): Promise<AuthorizeResult | null> {
    // The pending row first: a settlement that finishes between the reads is then seen as settled.
    const pending = await store.pendingSettlement(key);
    const held = await store.paymentReservation(key);
    if (!pending && !held) return null;
    const boundTo = held?.requestHash ?? (pending ? requestOfPending(pending) : null);
    if (boundTo !== request) {
      await record('replay_rejected', key, route, payment.requirements.amount, null, boundTo === null ? 'held before requests were bound' : 'another request');
      if (boundTo === null) return alreadyUsed(route, resource);
      return reject(route, resource, 'payment_used_for_another_request', ANOTHER_REQUEST_MESSAGE);
    }
    if (pending) return retryPending(route, resource, pending);
    if (held!.status === 'settled') return bought(route, resource, key, held!, payment);
    // Reserved, nothing pending yet: a copy of this very request is being worked on now.
    if (now() - Date.parse(held!.reservedAt) < IN_FLIGHT_MS) {
      const message =
        'This payment is being used for this same request right now and its outcome is not known yet: the charge may go through. ' +
        'Do not pay again; send this same request with the same payment in a few seconds.';
      return { ok: false, reason: 'settlement_pending', message, pending: { verificationId: null, transaction: null, retryAfter: IN_PROGRESS_RETRY_SECONDS, message } };
    }
    // Reserved long ago and never settled (its work stopped): it stays used.
    return null;
  }

  /** A settled payment's answer to its own request: the receipts it bought, or a score run again unpaid. */
  async function bought(
    route: PaidRoute,
    resource: ResourceDescription,
    key: PaymentKey,
    held: PaymentReservation,
    payment: { payload: PaymentPayload; requirements: PaymentRequirements },
  ): Promise<AuthorizeResult> {
    const settlement = settledResponse(key, held.transaction, payment.payload);
    const ids = held.verificationIds;
    if (ids === null) return alreadyUsed(route, resource);
    if (ids.length > 0) {
      // Published before the payment was marked settled: all of them are there.
      const texts = await Promise.all(ids.map((id) => store.getReceipt(id)));
      if (!texts.every((t): t is string => t !== null)) return alreadyUsed(route, resource);
      const message = ids.length > 1 ? 'This payment was settled; here are the receipts it paid for.' : 'This payment was settled; here is the receipt it paid for.';
      return { ok: false, reason: 'paid_receipt', message, receipt: texts[0]!, receipts: texts, settlement };
    }
    // A paid score stores nothing: it runs again, and is not charged again.
    return { ok: true, ticket: { route, key, payload: payment.payload, requirements: payment.requirements, payer: key.payer, resource, settled: settlement } };
  }

  /** The settlement a retry is answered with: the payer as the buyer signed it (its checksum case on EVM). */
  function settledResponse(key: PaymentKey, transaction: string | null, payload: PaymentPayload | null): SettleResponse {
    const from = payload && isObject(payload.payload) && isObject(payload.payload.authorization) ? payload.payload.authorization.from : undefined;
    const payer = typeof from === 'string' && from.toLowerCase() === key.payer ? from : key.payer;
    return { success: true, transaction: transaction ?? '', network: key.network as SettleResponse['network'], payer };
  }

  function paymentOf(p: PendingSettlement): { payload: PaymentPayload; requirements: PaymentRequirements } | null {
    try {
      return JSON.parse(p.payment) as { payload: PaymentPayload; requirements: PaymentRequirements };
    } catch {
      return null;
    }
  }

  /** The request a pending settlement from before bindings was for: a single receipt's request_hash, else unknown. */
  function requestOfPending(p: PendingSettlement): string | null {
    if (p.batch || !p.record) return null;
    try {
      const hash = (JSON.parse(p.record.receipt) as { request_hash?: unknown }).request_hash;
      return typeof hash === 'string' ? hash : null;
    } catch {
      return null;
    }
  }

  function pendingOutcome(p: PendingSettlement): PendingOutcome {
    return {
      verificationId: p.record?.verificationId ?? null,
      transaction: p.transaction,
      retryAfter: PENDING_RETRY_SECONDS,
      message:
        'The payment is being settled and its outcome is not known yet: the charge may already have gone through. ' +
        'Do not pay again; send this same request with the same payment, or fetch the receipt by its verification_id, in a few seconds. ' +
        'If the settlement fails, nothing is charged and no receipt is published.',
    };
  }

  async function retryPending(route: PaidRoute, resource: ResourceDescription, earlier: PendingSettlement): Promise<AuthorizeResult | null> {
    const outcome = await reconcile(earlier);
    const pending = (await store.pendingSettlement(earlier.key)) ?? earlier;
    if (outcome === 'pending') {
      return { ok: false, reason: 'settlement_pending', message: pendingOutcome(pending).message, pending: pendingOutcome(pending) };
    }
    if (outcome === 'settled') {
      const payment = paymentOf(pending);
      const settlement = settledResponse(pending.key, pending.transaction, payment?.payload ?? null);
      if (pending.batch) {
        // A paid batch: every receipt it bought, in order (published together, so all or none are there).
        const texts = await Promise.all(pending.batch.map((r) => store.getReceipt(r.verificationId)));
        if (texts.every((t): t is string => t !== null)) {
          return { ok: false, reason: 'paid_receipt', message: 'This payment was settled; here are the receipts it paid for.', receipt: texts[0]!, receipts: texts, settlement };
        }
      } else if (pending.record) {
        const text = await store.getReceipt(pending.record.verificationId);
        if (text !== null) return { ok: false, reason: 'paid_receipt', message: 'This payment was settled; here is the receipt it paid for.', receipt: text, settlement };
      }
      // A paid score: run the work again; the payment is already settled.
      if (!payment) return alreadyUsed(route, resource);
      return { ok: true, ticket: { route, key: pending.key, payload: payment.payload, requirements: payment.requirements, payer: settlement.payer ?? pending.key.payer, resource, settled: settlement } };
    }
    // The earlier settlement failed: nothing was charged and the reservation is released; the caller
    // treats this request as a fresh attempt with the same authorization.
    return null;
  }

  /** Make a pending settlement's receipt visible: it is stored before this resolves. Idempotent. */
  async function publish(p: PendingSettlement): Promise<void> {
    if (p.record && (await store.getReceipt(p.record.verificationId)) === null) {
      try {
        // A batch is published in one transaction: all its receipts are visible, or none.
        if (p.batch) await store.saveReceipts(p.batch);
        else await store.saveReceipt(p.record);
      } catch (e) {
        // Another instance may have published it at the same moment.
        if ((await store.getReceipt(p.record.verificationId)) === null) throw e;
      }
    }
  }

  /**
   * The money moved: publish, mark the payment used for good. `keep`: the buyer was told "pending",
   * so the row stays (as settled) for their retry with the same payment to get this receipt.
   */
  async function finishSettled(p: PendingSettlement, settlement: SettleResponse, keep = false): Promise<void> {
    await publish(p);
    // The reservation names what the payment bought: a retry of its request is answered from it.
    const bought = { verificationIds: (p.batch ?? (p.record ? [p.record] : [])).map((r) => r.verificationId), transaction: settlement.transaction || null };
    const marked = await store.settlePayment(p.key, bought).then(
      () => true,
      (e: unknown) => {
        options.log?.warn({ err: e }, 'marking a payment settled failed (it stays reserved)');
        return false;
      },
    );
    // Not marked: the pending row (as settled) still answers the buyer's retry.
    if (keep || !marked) await store.markPendingSettled(p.key, settlement.transaction || null);
    else await store.deletePendingSettlement(p.key);
    await record('settled', p.key, p.route as PaidRoute, amountOf(p), p.record?.verificationId ?? null, settlement.transaction || null);
  }

  /** `failure`: the reason code, and the facilitator's full answer for the ledger (the code alone when there is none). */
  async function finishFailed(p: PendingSettlement, failure: { reason: string; detail: string }): Promise<void> {
    // Voided first: from here the receipt can never be published.
    await store.deletePendingSettlement(p.key);
    await store.releasePayment(p.key).catch((e: unknown) => options.log?.warn({ err: e }, 'releasing a payment reservation failed'));
    await record('settle_failed', p.key, p.route as PaidRoute, amountOf(p), p.record?.verificationId ?? null, failure.detail);
    for (const r of p.batch ?? (p.record ? [p.record] : [])) await record('voided', p.key, p.route as PaidRoute, amountOf(p), r.verificationId, failure.reason);
  }

  function amountOf(p: PendingSettlement): string {
    try {
      const amount = (JSON.parse(p.payment) as { requirements?: { amount?: unknown } }).requirements?.amount;
      return typeof amount === 'string' ? amount : '0';
    } catch {
      return '0';
    }
  }

  /**
   * Call the facilitator; classify its answer. Thrown errors without a verdict leave the outcome unknown.
   * `reason` is a stable code (the facilitator's when it is one), `raw` its own reason as given, `detail`
   * its full answer for the ledger; a failed `settlement` is the public form (facilitator-errors.ts).
   */
  async function submit(
    payload: PaymentPayload,
    reqs: PaymentRequirements,
  ): Promise<{ kind: 'settled' | 'failed' | 'pending'; settlement: SettleResponse | null; reason: string; raw: string; detail: string }> {
    try {
      const settlement = await server.settlePayment(payload, reqs);
      if (settlement.success) return { kind: 'settled', settlement, reason: '', raw: '', detail: '' };
      const raw = settlement.errorReason ?? 'settlement_failed';
      const reason = publicReason(raw, 'settlement_failed');
      const detail = facilitatorDetail(raw, settlement.errorMessage);
      if (raw !== SETTLEMENT_PENDING) options.log?.warn({ detail }, 'x402 settlement failed');
      return { kind: raw === SETTLEMENT_PENDING ? 'pending' : 'failed', settlement: publicSettlement(settlement, reason, reqs.network), reason, raw, detail };
    } catch (e) {
      const v = e as { errorReason?: unknown; errorMessage?: unknown; message?: unknown };
      options.log?.warn({ err: e }, 'x402 settlement call failed');
      const raw = typeof v.errorReason === 'string' ? v.errorReason : 'facilitator_unreachable';
      const reason = publicReason(raw, 'settlement_failed');
      const detail = facilitatorDetail(raw, typeof v.errorMessage === 'string' ? v.errorMessage : v.message);
      // The facilitator answered with a verdict: definite. No answer (timeout, connection lost): it may have submitted.
      if (typeof v.errorReason === 'string' && raw !== SETTLEMENT_PENDING) return { kind: 'failed', settlement: null, reason, raw, detail };
      return { kind: 'pending', settlement: null, reason, raw, detail };
    }
  }

  async function settle(ticket: PaymentTicket, records: ReceiptRecord | readonly ReceiptRecord[] | null): Promise<SettleResult> {
    // A paid score asked again: settled before and nothing to publish (its settlement is in the ledger once).
    if (ticket.settled && records === null) return { ok: true, settlement: ticket.settled };
    // A paid batch: every receipt is kept pending (and later published or voided) together.
    const batch = Array.isArray(records) ? [...(records as readonly ReceiptRecord[])] : undefined;
    const receipt = batch ? (batch[0] ?? null) : (records as ReceiptRecord | null);
    const verificationId = receipt?.verificationId ?? null;
    const pending: PendingSettlement = {
      key: ticket.key,
      route: ticket.route,
      record: receipt,
      ...(batch ? { batch } : {}),
      payment: JSON.stringify({ payload: ticket.payload, requirements: ticket.requirements }),
      transaction: ticket.settled?.transaction || null,
      createdAt: new Date(now()).toISOString(),
      state: 'pending',
    };
    // Durable and invisible before any money moves: a crash from here on is reconciled at the next start.
    try {
      await store.savePendingSettlement(pending);
    } catch (e) {
      // Nothing was settled: free the authorization for a retry, and report the error (never charged).
      if (!ticket.settled) await cancel(ticket, 'store_failed', verificationId).catch(() => undefined);
      throw e;
    }
    if (ticket.settled) {
      await finishSettled(pending, ticket.settled);
      return { ok: true, settlement: ticket.settled };
    }
    const r = await submit(ticket.payload, ticket.requirements);
    if (r.kind === 'settled') {
      // The money has moved: publish; from here nothing may turn this into an error for the buyer.
      try {
        await finishSettled(pending, r.settlement!);
      } catch (e) {
        // Stays pending (and invisible) until the reconciler publishes it; the buyer is told so.
        options.log?.error?.({ err: e }, 'publishing a paid receipt failed; it stays pending');
        const tx = r.settlement!.transaction;
        if (tx) await store.setPendingTransaction(ticket.key, tx).catch(() => undefined);
        const p = pendingOutcome({ ...pending, transaction: tx || null });
        return { ok: false, pending: p, settlement: r.settlement, message: p.message };
      }
      return { ok: true, settlement: r.settlement! };
    }
    if (r.kind === 'pending') {
      const tx = r.settlement?.transaction || null;
      if (tx) await store.setPendingTransaction(ticket.key, tx).catch((e: unknown) => options.log?.warn({ err: e }, 'storing a pending transaction failed'));
      await record('settle_pending', ticket.key, ticket.route, ticket.requirements.amount, verificationId, tx ?? r.reason);
      const p = pendingOutcome({ ...pending, transaction: tx });
      return { ok: false, pending: p, settlement: r.settlement, message: p.message };
    }
    await finishFailed(pending, r);
    const message = `Settlement failed (${r.reason}): ${reasonSentence(r.reason, 'settle')} Nothing was charged and no receipt was issued.`;
    const pr = await paymentRequired(ticket.route, ticket.resource, message).catch(() => null);
    return {
      ok: false,
      settlement: r.settlement,
      message,
      paymentRequired: pr ?? { x402Version: 2, error: message, resource: { url: ticket.resource.url }, accepts: [ticket.requirements] },
    };
  }

  /**
   * Reconciliations under way in this process, by payment key: concurrent retries of one pending
   * payment share one look at the chain (and one ledger entry for its outcome).
   */
  const reconciling = new Map<string, Promise<ReconcileOutcome>>();

  function reconcile(p: PendingSettlement): Promise<ReconcileOutcome> {
    const id = `${p.key.network}\n${p.key.payer}\n${p.key.nonce}`;
    const running = reconciling.get(id);
    if (running) return running;
    const started = reconcileOnce(p).finally(() => reconciling.delete(id));
    reconciling.set(id, started);
    return started;
  }

  async function reconcileOnce(p: PendingSettlement): Promise<ReconcileOutcome> {
    if (p.state === 'settled') return 'settled';
    const payment = paymentOf(p);
    if (!payment) {
      options.log?.warn({ key: p.key }, 'a pending settlement has an unreadable payment; left for the operator');
      return 'pending';
    }
    if (p.transaction && options.transactionStatus) {
      // By transaction hash: what the chain says is what happened.
      const status = await options.transactionStatus(p.key.network, p.transaction, payment.payload).catch(() => 'unknown' as const);
      if (status === 'success') {
        await finishSettled(p, { success: true, transaction: p.transaction, network: p.key.network as SettleResponse['network'], payer: p.key.payer }, true);
        return 'settled';
      }
      if (status === 'reverted' || status === 'expired') {
        const reason = status === 'reverted' ? 'transaction_reverted' : 'transaction_expired';
        await finishFailed(p, { reason, detail: `${reason}: ${p.transaction}` });
        return 'failed';
      }
      return 'pending';
    }
    // No transaction known (or no chain access): ask the facilitator again with the same authorization.
    // It cannot be charged twice: the authorization's nonce is spent by at most one transfer. Not while
    // the first attempt may still be running, though (it would only race it).
    if (now() - Date.parse(p.createdAt) < IN_FLIGHT_MS) return 'pending';
    const r = await submit(payment.payload, payment.requirements);
    if (r.kind === 'settled') {
      await finishSettled(p, r.settlement!, true);
      return 'settled';
    }
    if (r.kind === 'failed' && !NONCE_USED_RE.test(r.raw)) {
      await finishFailed(p, r);
      return 'failed';
    }
    // Still unknown, or "already used" (perhaps by the very transfer we cannot see): keep it pending.
    const tx = r.settlement?.transaction;
    if (tx) await store.setPendingTransaction(p.key, tx).catch(() => undefined);
    return 'pending';
  }

  async function reconcileAll(): Promise<Record<ReconcileOutcome, number>> {
    const counts: Record<ReconcileOutcome, number> = { settled: 0, failed: 0, pending: 0 };
    let all: PendingSettlement[];
    try {
      all = await store.pendingSettlements();
    } catch (e) {
      options.log?.warn({ err: e }, 'reading pending settlements failed');
      return counts;
    }
    for (const p of all) {
      try {
        counts[await reconcile(p)]++;
      } catch (e) {
        counts.pending++;
        options.log?.warn({ err: e, key: p.key }, 'reconciling a pending settlement failed; retried later');
      }
    }
    return counts;
  }

  async function cancel(ticket: PaymentTicket, reason: string, verificationId: string | null = null): Promise<void> {
    await store.releasePayment(ticket.key);
    await record('released', ticket.key, ticket.route, ticket.requirements.amount, verificationId, reason);
  }

  async function prices(): Promise<PriceInfo[]> {
    const out: PriceInfo[] = [];
    for (const route of ['verify', 'score'] as const) out.push({ route, price: config.prices[route], accepts: await requirements(route) });
    return out;
  }

  return {
    enabled: config.enabled,
    config,
    initialize,
    requirements,
    prices,
    paymentRequired,
    authorize,
    settle,
    reconcile,
    reconcileAll,
    cancel,
  };
}
