/**
 * @module The payment gate: the transport-neutral x402 v2 flow shared by the
 * REST routes and the MCP tools. It builds PaymentRequired for a route (through
 * the official x402ResourceServer and the `exact` EVM/SVM server schemes, so
 * prices become atomic amounts and assets/domains come from the SDK), verifies
 * a buyer's payment with the facilitator, reserves the payment key in the store
 * before any work is done (so one authorization buys one call, even under
 * concurrency and across instances), settles after the work, and writes every
 * step to the payment ledger.
 */
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { ExactSvmScheme as ExactSvmServerScheme } from '@x402/svm/exact/server';
import { decodeTransactionFromPayload, getTokenPayerFromTransaction } from '@x402/svm';
import { bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import { ApiError } from '../errors.js';
import type { PaymentEventKind, PaymentKey, Store } from '../store/store.js';
import type { PaidRoute, PaymentConfig, PaymentNetworkConfig } from './config.js';
import { httpDiscovery, mcpDiscovery } from './discovery.js';

/** The store methods the gate uses (a subset of Store, so tests can pass a small fake). */
export type PaymentStore = Pick<Store, 'reservePayment' | 'releasePayment' | 'recordPaymentEvent'> & Partial<Pick<Store, 'settlePayment'>>;

export interface PaymentGateOptions {
  config: PaymentConfig;
  store: PaymentStore;
  facilitator: FacilitatorClient;
  serviceName?: string;
  /** Injected clock (ms), used for the validity-window check and ledger timestamps. */
  now?: () => number;
  log?: { warn(obj: unknown, msg?: string): void };
}

/** What the buyer is paying for, as named in PaymentRequired.resource. */
export interface ResourceDescription {
  url: string;
  description?: string;
  mimeType?: string;
  /** Transport: decides which discovery declaration (HTTP or MCP tool) is attached. */
  transport?: 'http' | 'mcp';
  /** HTTP method, for the discovery declaration. */
  method?: 'GET' | 'POST';
  /** Route pattern with params, e.g. `/score/:agent_id`, for the discovery declaration. */
  routePattern?: string;
}

/** Why a payment was not accepted. Stable strings; shown to buyers. */
export type PaymentRejection =
  | 'invalid_payment'
  | 'unsupported_version'
  | 'no_matching_requirements'
  | 'authorization_window_too_long'
  | 'payment_verification_failed'
  | 'payment_already_used';

/** A verified, reserved payment. Hand it back to `settle` or `cancel`, exactly once. */
export interface PaymentTicket {
  readonly route: PaidRoute;
  readonly key: PaymentKey;
  readonly payload: PaymentPayload;
  readonly requirements: PaymentRequirements;
  readonly payer: string;
  readonly resource: ResourceDescription;
}

export type AuthorizeResult =
  | { ok: true; ticket: PaymentTicket }
  | { ok: false; reason: PaymentRejection; message: string; paymentRequired: PaymentRequired };

export type SettleResult =
  | { ok: true; settlement: SettleResponse }
  | { ok: false; settlement: SettleResponse | null; message: string; paymentRequired: PaymentRequired };

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
  /** Verify the payment with the facilitator and reserve it. Nothing is charged yet. */
  authorize(route: PaidRoute, resource: ResourceDescription, payment: unknown): Promise<AuthorizeResult>;
  /** The work succeeded: settle, keep the reservation, record. On failure the reservation is released. */
  settle(ticket: PaymentTicket, verificationId: string | null): Promise<SettleResult>;
  /** The work failed: release the reservation (the same authorization may be retried), record. */
  cancel(ticket: PaymentTicket, reason: string, verificationId?: string | null): Promise<void>;
}

/** Seconds of clock skew tolerated on top of maxTimeoutSeconds when checking a validity window. */
const WINDOW_SKEW_SECONDS = 30;

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

/** The replay key of a payment: (network, payer, nonce); Solana uses the payer's transaction signature. */
export function paymentKeyOf(payload: PaymentPayload, network: PaymentNetworkConfig['family']): { key: PaymentKey; payer: string } | null {
  const net = payload.accepted.network;
  if (network === 'evm') {
    const auth = (payload.payload as Record<string, unknown>).authorization;
    if (!isObject(auth) || typeof auth.from !== 'string' || typeof auth.nonce !== 'string') return null;
    if (!/^0x[0-9a-fA-F]{40}$/.test(auth.from) || !/^0x[0-9a-fA-F]{64}$/.test(auth.nonce)) return null;
    const payer = auth.from.toLowerCase();
    return { key: { network: net, payer, nonce: auth.nonce.toLowerCase() }, payer };
  }
  try {
    const tx = decodeTransactionFromPayload(payload.payload as { transaction: string });
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

  async function paymentRequired(route: PaidRoute, resource: ResourceDescription, error?: string): Promise<PaymentRequired> {
    const accepts = await requirements(route);
    return server.createPaymentRequiredResponse(
      accepts,
      {
        url: resource.url,
        description: resource.description,
        mimeType: resource.mimeType ?? 'application/json',
        ...(options.serviceName ? { serviceName: options.serviceName } : {}),
      },
      error,
      extensionsFor(route, resource),
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

  async function reject(route: PaidRoute, resource: ResourceDescription, reason: PaymentRejection, message: string): Promise<AuthorizeResult> {
    return { ok: false, reason, message, paymentRequired: await paymentRequired(route, resource, message) };
  }

  async function authorize(route: PaidRoute, resource: ResourceDescription, payment: unknown): Promise<AuthorizeResult> {
    const accepts = await requirements(route);
    const payload = asPaymentPayload(payment);
    if (!payload) return reject(route, resource, 'invalid_payment', 'The payment could not be read: expected an x402 PaymentPayload.');
    if (payload.x402Version !== 2) return reject(route, resource, 'unsupported_version', 'Only x402Version 2 payments are accepted.');
    const matched = server.findMatchingRequirements(accepts, payload);
    if (!matched) {
      return reject(route, resource, 'no_matching_requirements', 'The payment does not match any accepted option of this route (network, asset, amount or recipient differ).');
    }
    const net = config.networks.find((n) => n.network === matched.network)!;

    if (net.family === 'evm') {
      // An authorization valid for longer than we ask for could be held back and replayed later; refuse it.
      const auth = (payload.payload as Record<string, unknown>).authorization as Record<string, unknown> | undefined;
      const validBefore = typeof auth?.validBefore === 'string' && /^\d{1,20}$/.test(auth.validBefore) ? Number(auth.validBefore) : NaN;
      const seconds = Math.floor(now() / 1000);
      if (!Number.isFinite(validBefore)) return reject(route, resource, 'invalid_payment', 'The payment authorization has no valid validBefore.');
      if (validBefore - seconds > matched.maxTimeoutSeconds + WINDOW_SKEW_SECONDS) {
        return reject(route, resource, 'authorization_window_too_long', `The authorization is valid for longer than ${matched.maxTimeoutSeconds} seconds.`);
      }
    }
    const keyed = paymentKeyOf(payload, net.family);
    if (!keyed) return reject(route, resource, 'invalid_payment', 'The payment carries no payer or nonce.');

    let verdict: Awaited<ReturnType<typeof server.verifyPayment>>;
    try {
      verdict = await server.verifyPayment(payload, matched);
    } catch (e) {
      // A facilitator answering 4xx with a verdict is a refusal; anything else is an outage.
      const v = e as { invalidReason?: unknown; name?: string };
      if (typeof v.invalidReason === 'string') verdict = { isValid: false, invalidReason: v.invalidReason };
      else throw facilitatorUnavailable(e);
    }
    if (!verdict.isValid) {
      await record('verify_failed', keyed.key, route, matched.amount, null, verdict.invalidReason ?? 'invalid');
      const why = verdict.invalidReason ? ` (${verdict.invalidReason})` : '';
      return reject(route, resource, 'payment_verification_failed', `The facilitator rejected the payment${why}.`);
    }
    // Reserve before any work: of N concurrent requests carrying the same authorization, one wins.
    const reserved = await store.reservePayment(keyed.key);
    if (!reserved) {
      await record('replay_rejected', keyed.key, route, matched.amount, null, null);
      return reject(route, resource, 'payment_already_used', 'This payment authorization was already used.');
    }
    await record('verified', keyed.key, route, matched.amount, null, verdict.payer ?? keyed.payer);
    return { ok: true, ticket: { route, key: keyed.key, payload, requirements: matched, payer: verdict.payer ?? keyed.payer, resource } };
  }

  async function settle(ticket: PaymentTicket, verificationId: string | null): Promise<SettleResult> {
    let settlement: SettleResponse | null = null;
    let failure: string;
    try {
      settlement = await server.settlePayment(ticket.payload, ticket.requirements);
      if (settlement.success) {
        // The money has moved: from here on nothing may turn this into an error for the buyer.
        if (store.settlePayment) {
          await store.settlePayment(ticket.key).catch((e: unknown) => options.log?.warn({ err: e }, 'marking a payment settled failed (it stays reserved)'));
        }
        await record('settled', ticket.key, ticket.route, ticket.requirements.amount, verificationId, settlement.transaction || null);
        return { ok: true, settlement };
      }
      failure = settlement.errorReason ?? 'settlement_failed';
    } catch (e) {
      const r = (e as { errorReason?: unknown }).errorReason;
      failure = typeof r === 'string' ? r : 'facilitator_error';
      options.log?.warn({ err: e }, 'x402 settlement failed');
    }
    await store.releasePayment(ticket.key).catch((e: unknown) => options.log?.warn({ err: e }, 'releasing a payment reservation failed'));
    await record('settle_failed', ticket.key, ticket.route, ticket.requirements.amount, verificationId, failure);
    const message = `Settlement failed (${failure}); nothing was charged.`;
    const pr = await paymentRequired(ticket.route, ticket.resource, message).catch(() => null);
    return {
      ok: false,
      settlement,
      message,
      paymentRequired: pr ?? { x402Version: 2, error: message, resource: { url: ticket.resource.url }, accepts: [ticket.requirements] },
    };
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
    cancel,
  };
}
