/**
 * @module The built-in ("local") x402 facilitator: the official in-process
 * `x402Facilitator` with the official `exact` EVM scheme, driven by a chain
 * signer the operator supplies (a viem wallet on an RPC endpoint, or the
 * in-memory chain). It is usable directly as a FacilitatorClient and is also
 * served over HTTP as `/verify`, `/settle` and `/supported` — the same wire
 * format a hosted facilitator speaks — so buyers and tests exercise the real
 * protocol end to end.
 */
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

export interface LocalFacilitatorOptions {
  /** Signer that reads the chain, checks signatures and submits settlements. */
  evmSigner?: FacilitatorEvmSigner;
  evmNetworks?: Network[];
  /** Optional Solana fee-payer signer (settles through its own RPC). */
  svmSigner?: FacilitatorSvmSigner;
  svmNetworks?: Network[];
}

export interface LocalFacilitator extends FacilitatorClient {
  /** The official in-process facilitator underneath. */
  readonly facilitator: x402Facilitator;
}

/** Build the in-process facilitator and wrap it as a FacilitatorClient. */
export function createLocalFacilitator(options: LocalFacilitatorOptions): LocalFacilitator {
  const facilitator = new x402Facilitator();
  if (options.evmSigner && (options.evmNetworks?.length ?? 0) > 0) {
    facilitator.register(options.evmNetworks!, new ExactEvmFacilitatorScheme(options.evmSigner));
  }
  if (options.svmSigner && (options.svmNetworks?.length ?? 0) > 0) {
    facilitator.register(options.svmNetworks!, new ExactSvmFacilitatorScheme(options.svmSigner));
  }
  return {
    facilitator,
    verify: (payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> => facilitator.verify(payload, requirements),
    settle: (payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> => facilitator.settle(payload, requirements),
    getSupported: async (): Promise<SupportedResponse> => facilitator.getSupported() as SupportedResponse,
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

/**
 * Register `POST {prefix}/verify`, `POST {prefix}/settle` and `GET {prefix}/supported`.
 * Verdicts (valid or not, settled or not) are 200 with the x402 response body;
 * only a malformed request is a 400 and an internal failure a 500.
 */
export async function registerFacilitatorRoutes(app: FastifyInstance, facilitator: FacilitatorClient, options: { prefix?: string } = {}): Promise<void> {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '');
  app.get(`${prefix}/supported`, async () => facilitator.getSupported());
  app.post(`${prefix}/verify`, async (request, reply) => {
    const req = readRequest(request.body);
    if (!req) return reply.code(400).send({ isValid: false, invalidReason: 'invalid_payload', invalidMessage: 'paymentPayload and paymentRequirements are required' });
    try {
      return await facilitator.verify(req.payload, req.requirements);
    } catch (e) {
      request.log.warn({ err: e }, 'facilitator verify failed');
      return reply.code(500).send({ error: 'verify_failed' });
    }
  });
  app.post(`${prefix}/settle`, async (request, reply) => {
    const req = readRequest(request.body);
    if (!req) {
      return reply.code(400).send({ success: false, errorReason: 'invalid_payload', transaction: '', network: 'unknown:unknown' });
    }
    try {
      return await facilitator.settle(req.payload, req.requirements);
    } catch (e) {
      request.log.warn({ err: e }, 'facilitator settle failed');
      return reply.code(500).send({ error: 'settle_failed' });
    }
  });
}

/** A standalone facilitator HTTP server (not yet listening); call `.listen()` on it. */
export async function createFacilitatorServer(facilitator: FacilitatorClient, options: { logger?: boolean } = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: 256 * 1024 });
  await registerFacilitatorRoutes(app, facilitator);
  return app;
}
