/**
 * @module Shared fixtures of the payment tests: an in-memory Base chain with a
 * USDC-like token, the built-in facilitator served over real HTTP on 127.0.0.1,
 * a real SQLite store in a temp directory, and a buyer using the official
 * x402 client. Nothing here touches the internet.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import type { FacilitatorSvmSigner } from '@x402/svm';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/store.js';
import { BASE_USDC, parsePaymentConfig, type PaymentConfig } from '../src/payments/config.js';
import { createMemoryEvmChain, type MemoryEvmChain } from './memory-chain.js';
import { createLocalFacilitator, createFacilitatorServer, type LocalFacilitator } from '../src/payments/local-facilitator.js';
import { createPaymentGate, type PaymentGate } from '../src/payments/gate.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const PAY_TO_EVM = '0x1111111111111111111111111111111111111111';
export const PAY_TO_SOLANA = 'So11111111111111111111111111111111111111112';
/** A fixed Solana fee-payer address the stub Solana signer advertises. */
export const SOLANA_FEE_PAYER = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

/**
 * A Solana facilitator signer that only names its fee payer: enough for the
 * facilitator's /supported to advertise Solana (and the 402 to list it with the
 * right feePayer); it cannot settle, since there is no Solana node offline.
 */
export function offlineSolanaSigner(feePayer = SOLANA_FEE_PAYER): FacilitatorSvmSigner {
  const offline = async (): Promise<never> => {
    throw new Error('no Solana RPC in offline tests');
  };
  return {
    getAddresses: () => [feePayer as never],
    signTransaction: offline,
    simulateTransaction: offline,
    sendTransaction: offline,
    confirmTransaction: offline,
  } as FacilitatorSvmSigner;
}

export interface PaymentFixture {
  config: PaymentConfig;
  chain: MemoryEvmChain;
  local: LocalFacilitator;
  facilitatorServer: FastifyInstance;
  facilitatorUrl: string;
  store: Store;
  gate: PaymentGate;
  buyer: PrivateKeyAccount;
  buyerClient: x402Client;
  close(): Promise<void>;
}

export async function createPaymentFixture(env: Record<string, string> = {}): Promise<PaymentFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'aov-pay-'));
  const store = createSqliteStore({ file: join(dir, 'db.sqlite'), synchronous: 'NORMAL' });
  await store.migrate();
  const chain = createMemoryEvmChain({
    chainId: 8453,
    tokens: [{ address: BASE_USDC, name: 'USD Coin', version: '2', decimals: 6 }],
    facilitatorAddress: privateKeyToAccount(generatePrivateKey()).address,
  });
  const local = createLocalFacilitator({
    evmSigner: chain.signer,
    evmNetworks: ['eip155:8453'],
    svmSigner: offlineSolanaSigner(),
    svmNetworks: ['solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'],
  });
  const facilitatorServer = await createFacilitatorServer(local);
  const address = await facilitatorServer.listen({ host: '127.0.0.1', port: 0 });
  const config = parsePaymentConfig({
    X402_ENABLED: 'true',
    X402_FACILITATOR_URL: address,
    X402_PAY_TO_EVM: PAY_TO_EVM,
    X402_PAY_TO_SOLANA: PAY_TO_SOLANA,
    ...env,
  });
  const gate = createPaymentGate({ config, store, facilitator: new HTTPFacilitatorClient({ url: address }), serviceName: 'aov-test' });
  await gate.initialize();
  const buyer = privateKeyToAccount(generatePrivateKey());
  chain.mint(BASE_USDC, buyer.address, 1_000_000n);
  const buyerClient = new x402Client().register('eip155:8453', new ExactEvmClientScheme(buyer));
  return {
    config,
    chain,
    local,
    facilitatorServer,
    facilitatorUrl: address,
    store,
    gate,
    buyer,
    buyerClient,
    async close() {
      await facilitatorServer.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The settings of a service paid on Base through the built-in facilitator with no free allowance. The tests
 * inject the facilitator's chain signer, so the RPC URL is a placeholder no request reaches.
 */
export function localEvmPaymentEnv(dataDir: string, port: number, facilitatorKey: string, logLevel = 'silent'): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: logLevel,
    FREE_ALLOWANCE_PER_DAY: '0',
    X402_ENABLED: 'true',
    X402_FACILITATOR_URL: 'local',
    X402_LOCAL_EVM_RPC_URL: 'http://127.0.0.1:9',
    X402_LOCAL_EVM_PRIVATE_KEY: facilitatorKey,
    X402_NETWORKS: 'base',
    X402_PAY_TO_EVM: PAY_TO_EVM,
  };
}

/** Runs `fn` with the official MCP client connected to `<base>/mcp`, and closes it after. */
export async function withMcpClient<T>(base: string, name: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
