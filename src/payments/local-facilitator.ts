/**
 * @module The built-in ("local") x402 facilitator: the official in-process
 * `x402Facilitator` with the official `exact` EVM scheme, driven by a chain
 * signer the operator supplies (a viem wallet on an RPC endpoint, or the
 * in-memory chain). It is usable directly as a FacilitatorClient and is also
 * served over HTTP as `/verify`, `/settle` and `/supported` — the same wire
 * format a hosted facilitator speaks — so buyers and tests exercise the real
 * protocol end to end. Those routes are behind a bearer token: they make the
 * operator's key pay gas, so they must never be open to strangers. What they
 * answer about a refused or failed payment is a reason and a sentence; the
 * library's own error text stays in the log.
 *
 * Every settlement is sent from one account, and an account's transactions need
 * consecutive nonces: submitted concurrently, they would race for the same nonce
 * ("nonce too low") and honest payments would fail. So the facilitator submits
 * its transactions one at a time (a queue per facilitator), and only waits for
 * the receipts concurrently.
 */
import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { toFacilitatorEvmSigner, type FacilitatorEvmSigner } from '@x402/evm';
import { ExactSvmScheme as ExactSvmFacilitatorScheme } from '@x402/svm/exact/facilitator';
import type { FacilitatorSvmSigner } from '@x402/svm';
import { createPublicClient, createWalletClient, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Network } from './config.js';
import { facilitatorDetail, publicSettleResponse, publicVerifyResponse } from './facilitator-errors.js';
import type { SvmSettlementSigner } from './svm-signer.js';

export interface LocalFacilitatorOptions {
  /** Signer that reads the chain, checks signatures and submits settlements. */
  evmSigner?: FacilitatorEvmSigner;
  evmNetworks?: Network[];
  /**
   * Solana fee-payer signer (settles through its own RPC). One that can also read a transaction's
   * outcome (createSvmFacilitatorSigner's) lets pending Solana settlements be reconciled.
   */
  svmSigner?: FacilitatorSvmSigner | SvmSettlementSigner;
  svmNetworks?: Network[];
}

export interface LocalFacilitator extends FacilitatorClient {
  /** The official in-process facilitator underneath. */
  readonly facilitator: x402Facilitator;
  /**
   * What the chain says about a settlement transaction: mined and succeeded,
   * mined and reverted, expired (a Solana transaction past its blockhash that
   * never landed), or not known yet (not mined, or the node does not answer).
   * `payment` is the buyer's payload (on Solana, its transaction's blockhash).
   */
  transactionStatus(network: string, transaction: string, payment?: PaymentPayload): Promise<TransactionStatus>;
}

export type TransactionStatus = 'success' | 'reverted' | 'expired' | 'unknown';

/** How long a status check waits for a receipt before answering `unknown`. */
const STATUS_CHECK_MS = 2_000;

/**
 * Submit one transaction at a time: each submission reads the account's next
 * nonce from the node only after the previous transaction was accepted. The
 * waits for receipts are not in the queue, so settlements still overlap.
 */
function createSubmissionQueue(): <T>(fn: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

/** The signer with its transaction submissions serialised (reads and receipt waits untouched). */
export function withSerialSubmissions(signer: FacilitatorEvmSigner): FacilitatorEvmSigner {
  const submit = createSubmissionQueue();
  return {
    ...signer,
    getAddresses: () => signer.getAddresses(),
    readContract: (args) => signer.readContract(args),
    verifyTypedData: (args) => signer.verifyTypedData(args),
    writeContract: (args) => submit(() => signer.writeContract(args)),
    sendTransaction: (args) => submit(() => signer.sendTransaction(args)),
    waitForTransactionReceipt: (args) => signer.waitForTransactionReceipt(args),
    getCode: (args) => signer.getCode(args),
  };
}

async function receiptStatus(signer: FacilitatorEvmSigner, transaction: string): Promise<TransactionStatus> {
  if (!/^0x[0-9a-fA-F]{64}$/.test(transaction)) return 'unknown';
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'unknown'>((resolve) => {
    timer = setTimeout(() => resolve('unknown'), STATUS_CHECK_MS);
    timer.unref();
  });
  try {
    const receipt = await Promise.race([signer.waitForTransactionReceipt({ hash: transaction as `0x${string}` }), timeout]);
    if (receipt === 'unknown') return 'unknown';
    return receipt.status === 'success' ? 'success' : 'reverted';
  } catch {
    return 'unknown';
  } finally {
    clearTimeout(timer);
  }
}

/** Build the in-process facilitator and wrap it as a FacilitatorClient. */
export function createLocalFacilitator(options: LocalFacilitatorOptions): LocalFacilitator {
  const facilitator = new x402Facilitator();
  const evmSigner = options.evmSigner ? withSerialSubmissions(options.evmSigner) : null;
  if (evmSigner && (options.evmNetworks?.length ?? 0) > 0) {
    facilitator.register(options.evmNetworks!, new ExactEvmFacilitatorScheme(evmSigner));
  }
  if (options.svmSigner && (options.svmNetworks?.length ?? 0) > 0) {
    facilitator.register(options.svmNetworks!, new ExactSvmFacilitatorScheme(options.svmSigner));
  }
  return {
    facilitator,
    verify: (payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> => facilitator.verify(payload, requirements),
    settle: (payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> => facilitator.settle(payload, requirements),
    getSupported: async (): Promise<SupportedResponse> => facilitator.getSupported() as SupportedResponse,
    async transactionStatus(network: string, transaction: string, payment?: PaymentPayload): Promise<TransactionStatus> {
      if (evmSigner && (options.evmNetworks ?? []).includes(network as Network)) return receiptStatus(evmSigner, transaction);
      const svm = options.svmSigner;
      if (svm && 'transactionStatus' in svm && (options.svmNetworks ?? []).includes(network as Network)) {
        const wire = (payment?.payload as { transaction?: unknown } | undefined)?.transaction;
        return svm.transactionStatus(transaction, typeof wire === 'string' ? wire : null);
      }
      return 'unknown';
    },
  };
}

export interface ViemFacilitatorSignerOptions {
  rpcUrl: string;
  privateKey: `0x${string}`;
  /** Bound on each receipt wait, so a slow chain reports `settlement_pending` instead of hanging. */
  confirmationTimeoutMs?: number;
}

/** A facilitator signer on a JSON-RPC endpoint (the configured X402_LOCAL_EVM_RPC_URL). */
export function createViemFacilitatorSigner(options: ViemFacilitatorSignerOptions): FacilitatorEvmSigner {
  const account = privateKeyToAccount(options.privateKey);
  const transport = http(options.rpcUrl);
  const wallet = createWalletClient({ account, transport }).extend(publicActions);
  const reader = createPublicClient({ transport });
  return toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) => reader.readContract(args as Parameters<typeof reader.readContract>[0]),
      verifyTypedData: (args) => reader.verifyTypedData(args as Parameters<typeof reader.verifyTypedData>[0]),
      writeContract: (args) => wallet.writeContract({ ...(args as object), chain: null } as Parameters<typeof wallet.writeContract>[0]),
      sendTransaction: (args) => wallet.sendTransaction({ ...args, chain: null }),
      waitForTransactionReceipt: (args) => reader.waitForTransactionReceipt(args),
      getCode: (args) => reader.getCode(args),
    },
    { confirmationTimeoutMs: options.confirmationTimeoutMs ?? 30_000 },
  );
}

interface FacilitatorRequestBody {
  x402Version?: unknown;
  paymentPayload?: unknown;
  paymentRequirements?: unknown;
}

function readRequest(body: unknown): { payload: PaymentPayload; requirements: PaymentRequirements } | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as FacilitatorRequestBody;
  const p = b.paymentPayload as PaymentPayload | undefined;
  const r = b.paymentRequirements as PaymentRequirements | undefined;
  if (typeof p !== 'object' || p === null || typeof r !== 'object' || r === null) return null;
  if (typeof p.x402Version !== 'number' || typeof p.payload !== 'object' || p.payload === null) return null;
  if (typeof r.scheme !== 'string' || typeof r.network !== 'string' || typeof r.amount !== 'string') return null;
  return { payload: p, requirements: r };
}

export interface FacilitatorRoutesOptions {
  prefix?: string;
  /**
   * Bearer token every request must carry (`Authorization: Bearer <token>`).
   * Required: the routes make the operator's account pay gas for whatever is submitted.
   */
  token: string;
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  if (!m) return false;
  const given = Buffer.from(m[1]!, 'utf8');
  const want = Buffer.from(token, 'utf8');
  return given.length === want.length && timingSafeEqual(given, want);
}

/**
 * Register `POST {prefix}/verify`, `POST {prefix}/settle` and `GET {prefix}/supported`,
 * all behind the bearer token (401 without it, nothing verified or settled).
 * Verdicts (valid or not, settled or not) are 200 with the x402 response body;
 * only a malformed request is a 400 and an internal failure a 500.
 */
export async function registerFacilitatorRoutes(app: FastifyInstance, facilitator: FacilitatorClient, options: FacilitatorRoutesOptions): Promise<void> {
  if (typeof options.token !== 'string' || options.token.length < 16) throw new TypeError('the facilitator routes need a bearer token of at least 16 characters');
  const prefix = (options.prefix ?? '').replace(/\/+$/, '');
  const token = options.token;
  await app.register(async (scope) => {
    scope.addHook('onRequest', async (request, reply) => {
      if (!tokenMatches(request.headers.authorization, token)) {
        return reply
          .code(401)
          .header('WWW-Authenticate', 'Bearer')
          .type('application/json; charset=utf-8')
          .send(JSON.stringify({ error: 'unauthorized', message: 'The facilitator routes need the operator\'s bearer token.' }));
      }
    });
    registerRoutes(scope, facilitator, prefix);
  });
}

function registerRoutes(app: FastifyInstance, facilitator: FacilitatorClient, prefix: string): void {
  app.get(`${prefix}/supported`, async () => facilitator.getSupported());
  facilitatorRoute(app, `${prefix}/verify`, {
    invalid: { isValid: false, invalidReason: 'invalid_payload', invalidMessage: 'paymentPayload and paymentRequirements are required' },
    run: (req) => facilitator.verify(req.payload, req.requirements),
    refusal: (verdict) => (verdict.isValid ? null : facilitatorDetail(verdict.invalidReason, verdict.invalidMessage)),
    answer: publicVerifyResponse,
    failure: 'verify',
  });
  facilitatorRoute(app, `${prefix}/settle`, {
    invalid: { success: false, errorReason: 'invalid_payload', transaction: '', network: 'unknown:unknown' },
    run: (req) => facilitator.settle(req.payload, req.requirements),
    refusal: (settlement) => (settlement.success ? null : facilitatorDetail(settlement.errorReason, settlement.errorMessage)),
    answer: publicSettleResponse,
    failure: 'settle',
  });
}

/**
 * One facilitator route: a body without a payload and requirements is a 400 in the route's own
 * shape; the caller gets the reason and a sentence of a refusal, while the facilitator's own text
 * (a library exception) stays in this log; a throw is a bare 500.
 */
function facilitatorRoute<R>(
  app: FastifyInstance,
  path: string,
  route: {
    invalid: object;
    run(req: NonNullable<ReturnType<typeof readRequest>>): Promise<R>;
    refusal(result: R): unknown;
    answer(result: R): unknown;
    failure: 'verify' | 'settle';
  },
): void {
  app.post(path, async (request, reply) => {
    const req = readRequest(request.body);
    if (!req) return reply.code(400).send(route.invalid);
    try {
      const result = await route.run(req);
      const detail = route.refusal(result);
      if (detail !== null) request.log.warn({ detail }, route.failure === 'verify' ? 'facilitator refused a payment' : 'facilitator settlement failed');
      return route.answer(result);
    } catch (e) {
      request.log.warn({ err: e }, `facilitator ${route.failure} failed`);
      return reply.code(500).send({ error: `${route.failure}_failed` });
    }
  });
}

/**
 * A standalone facilitator HTTP server (not yet listening); call `.listen()` on it.
 * With `token`, every route needs it; without, the server is open and must only
 * listen where strangers cannot reach it (a private network, loopback in tests).
 */
export async function createFacilitatorServer(facilitator: FacilitatorClient, options: { logger?: boolean; token?: string } = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: 256 * 1024 });
  if (options.token !== undefined) await registerFacilitatorRoutes(app, facilitator, { token: options.token });
  else registerRoutes(app, facilitator, '');
  return app;
}
