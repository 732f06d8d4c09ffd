/**
 * @module Payments (x402 v2) entry point: builds the facilitator client the
 * configuration asks for (a hosted facilitator over HTTP, or the built-in one on
 * the operator's chain RPC) and the payment gate on top of it.
 */
import { HTTPFacilitatorClient, type FacilitatorClient } from '@x402/core/server';
import type { FacilitatorEvmSigner } from '@x402/evm';
import type { FacilitatorSvmSigner } from '@x402/svm';
import type { PaymentConfig } from './config.js';
import { createPaymentGate, type PaymentGate, type PaymentGateStore, type TransactionStatusCheck } from './gate.js';
import { createLocalFacilitator, createViemFacilitatorSigner, type LocalFacilitator } from './local-facilitator.js';
import { createSvmFacilitatorSigner, readSvmKeyFile, type SvmSettlementSigner } from './svm-signer.js';
import { ConfigError } from '../config-values.js';

export * from './config.js';
export * from './gate.js';
export * from './transport.js';
export { createLocalFacilitator, createViemFacilitatorSigner, registerFacilitatorRoutes, createFacilitatorServer, withSerialSubmissions } from './local-facilitator.js';
export type { LocalFacilitator, LocalFacilitatorOptions, FacilitatorRoutesOptions, TransactionStatus } from './local-facilitator.js';
export { createSvmFacilitatorSigner, readSvmKeyFile, sealSvmKey, svmAddressOf } from './svm-signer.js';
export type { SvmFacilitatorSignerOptions, SvmSettlementSigner, SvmTransactionStatus } from './svm-signer.js';

export interface PaymentsOptions {
  config: PaymentConfig;
  store: PaymentGateStore;
  serviceName?: string;
  /** Override the local facilitator's EVM signer (tests, or a custom wallet). */
  evmSigner?: FacilitatorEvmSigner;
  /** Opens a fee-payer key file sealed under KEY_ENCRYPTION_KEY (config.keyEncryptionKey). */
  keyEncryptionKey?: Buffer | null;
  /** Override the local facilitator's Solana fee-payer signer (tests, or a custom wallet). */
  svmSigner?: FacilitatorSvmSigner | SvmSettlementSigner;
  /** Use this facilitator client instead of the configured one. */
  facilitator?: FacilitatorClient;
  /** Reads settlement transactions from the chain (default: the built-in facilitator's, when it is the one used). */
  transactionStatus?: TransactionStatusCheck;
  now?: () => number;
  log?: { warn(obj: unknown, msg?: string): void; error?(obj: unknown, msg?: string): void };
}

export interface Payments {
  gate: PaymentGate;
  /** The built-in facilitator when X402_FACILITATOR_URL=local (mount it with registerFacilitatorRoutes). */
  localFacilitator: LocalFacilitator | null;
}

/** Build the facilitator and the gate for an enabled configuration; null when payments are off. */
export function createPayments(options: PaymentsOptions): Payments | null {
  const { config } = options;
  if (!config.enabled) return null;
  let localFacilitator: LocalFacilitator | null = null;
  let facilitator = options.facilitator;
  if (!facilitator) {
    if (config.facilitator.mode === 'remote') {
      const auth = config.facilitator.authorization;
      facilitator = new HTTPFacilitatorClient({
        url: config.facilitator.url,
        timeoutMs: config.facilitator.timeoutMs,
        ...(auth
          ? { createAuthHeaders: async () => ({ verify: { Authorization: auth }, settle: { Authorization: auth }, supported: { Authorization: auth } }) }
          : {}),
      });
    } else {
      const f = config.facilitator;
      const evmSigner =
        options.evmSigner ??
        (f.evmRpcUrl && f.evmPrivateKey ? createViemFacilitatorSigner({ rpcUrl: f.evmRpcUrl, privateKey: f.evmPrivateKey, confirmationTimeoutMs: f.confirmationTimeoutMs }) : undefined);
      const svmSigner = options.svmSigner ?? (f.svmRpcUrl && f.svmKeyFile ? svmSignerFrom(f.svmRpcUrl, f.svmKeyFile, f.confirmationTimeoutMs, options.keyEncryptionKey ?? null) : undefined);
      localFacilitator = createLocalFacilitator({
        evmSigner,
        evmNetworks: config.networks.filter((n) => n.family === 'evm').map((n) => n.network),
        svmSigner,
        svmNetworks: config.networks.filter((n) => n.family === 'svm').map((n) => n.network),
      });
      facilitator = localFacilitator;
    }
  }
  const gate = createPaymentGate({
    config,
    store: options.store,
    facilitator,
    serviceName: options.serviceName,
    now: options.now,
    log: options.log,
    transactionStatus: options.transactionStatus ?? (localFacilitator ? (network, tx, payment) => localFacilitator!.transactionStatus(network, tx, payment) : undefined),
  });
  return { gate, localFacilitator };
}

/** The configured Solana fee payer on its RPC; a key file that cannot be used stops the start, naming the setting. */
function svmSignerFrom(rpcUrl: string, keyFile: string, confirmationTimeoutMs: number, kek: Buffer | null): SvmSettlementSigner {
  let key;
  try {
    key = readSvmKeyFile(keyFile, kek);
  } catch (e) {
    throw new ConfigError('X402_LOCAL_SVM_KEY_FILE', e instanceof Error ? e.message : 'unreadable');
  }
  return createSvmFacilitatorSigner({ rpcUrl, key, confirmationTimeoutMs });
}
