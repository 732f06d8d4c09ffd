/**
 * @module A real EVM for the payment tests, offline: Hardhat's in-process network
 * with chain id 8453, the USDC-like EIP-3009 token compiled with solc-js and its
 * runtime code placed at the Base USDC address, viem clients over the Hardhat
 * provider, and a FacilitatorEvmSigner that settles on that chain.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createPublicClient,
  createWalletClient,
  custom,
  defineChain,
  type Abi,
  type Chain,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { toFacilitatorEvmSigner, type FacilitatorEvmSigner } from '@x402/evm';
import { BASE_USDC } from '../../src/payments/config.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** Hardhat's well-known first development account (funded with test ETH on every Hardhat network). */
export const HARDHAT_KEY_0: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
/** The second one, used as the facilitator (it pays the settlement gas). */
export const HARDHAT_KEY_1: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
/** The third one, for a facilitator configured from the environment (its own nonce sequence). */
export const HARDHAT_KEY_2: Hex = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a';

export const localBase: Chain = defineChain({
  id: 8453,
  name: 'Local Base (Hardhat)',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1:0'] } },
});

export interface CompiledToken {
  abi: Abi;
  bytecode: Hex;
}

/** Compile test/evm/UsdcLike.sol with solc-js 0.8.28 in-process (cached by source hash). */
export function compileUsdcLike(): CompiledToken {
  const source = readFileSync(path.join(here, 'UsdcLike.sol'), 'utf8');
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const cacheDir = path.join(tmpdir(), 'aov-solc-cache');
  const cacheFile = path.join(cacheDir, `UsdcLike-${hash}.json`);
  if (existsSync(cacheFile)) return JSON.parse(readFileSync(cacheFile, 'utf8')) as CompiledToken;
  const solc = require('solc') as { compile(input: string): string; version(): string };
  if (!solc.version().startsWith('0.8.28')) throw new Error(`expected solc 0.8.28, got ${solc.version()}`);
  const input = {
    language: 'Solidity',
    sources: { 'UsdcLike.sol': { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const c = output.contracts['UsdcLike.sol'].UsdcLike;
  const compiled: CompiledToken = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(cacheFile, JSON.stringify(compiled));
  return compiled;
}

interface Eip1193 {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

export interface HardhatBase {
  provider: Eip1193;
  publicClient: PublicClient;
  token: CompiledToken;
  /** Owner of the token (can mint). */
  owner: PrivateKeyAccount;
  /** The facilitator's account and its signer. */
  facilitatorAccount: PrivateKeyAccount;
  facilitatorSigner: FacilitatorEvmSigner;
  wallet(account: PrivateKeyAccount): WalletClient;
  /**
   * A facilitator signer of another account on this chain, waiting at most `confirmationTimeoutMs` for a
   * receipt (polling every 100 ms), so a test that holds mining back sees `settlement_pending`.
   */
  signerFor(privateKey: Hex, confirmationTimeoutMs: number): FacilitatorEvmSigner;
  mint(to: Hex, amount: bigint): Promise<void>;
  balanceOf(owner: string): Promise<bigint>;
  authorizationState(authorizer: string, nonce: Hex): Promise<boolean>;
  /** Serve the chain over JSON-RPC on 127.0.0.1 (what X402_LOCAL_EVM_RPC_URL points at). */
  serveJsonRpc(): Promise<{ url: string; close(): Promise<void> }>;
}

/** Boot Hardhat in-process (chain id 8453) and install the token at the Base USDC address. */
export async function startHardhatBase(): Promise<HardhatBase> {
  process.env.HARDHAT_CONFIG = path.join(here, 'hardhat.config.cjs');
  const hre = require('hardhat') as { network: { provider: Eip1193; config: { chainId?: number } } };
  const provider = hre.network.provider;
  const chainId = Number(await provider.request({ method: 'eth_chainId' }));
  if (chainId !== 8453) throw new Error(`Hardhat chain id is ${chainId}, expected 8453`);

  const transport = custom(provider);
  const publicClient = createPublicClient({ chain: localBase, transport }) as PublicClient;
  const wallet = (account: PrivateKeyAccount): WalletClient => createWalletClient({ account, chain: localBase, transport });
  const owner = privateKeyToAccount(HARDHAT_KEY_0);
  const facilitatorAccount = privateKeyToAccount(HARDHAT_KEY_1);
  const token = compileUsdcLike();

  // Deploy once to get the runtime code, then place it at the Base USDC address (empty storage there).
  const ownerWallet = wallet(owner);
  const deployHash = await ownerWallet.deployContract({ abi: token.abi, bytecode: token.bytecode, account: owner, chain: localBase });
  const deployed = await publicClient.waitForTransactionReceipt({ hash: deployHash });
  const runtime = await publicClient.getCode({ address: deployed.contractAddress! });
  await provider.request({ method: 'hardhat_setCode', params: [BASE_USDC, runtime] });
  const init = await ownerWallet.writeContract({ address: BASE_USDC, abi: token.abi, functionName: 'initialize', args: [owner.address], account: owner, chain: localBase });
  await publicClient.waitForTransactionReceipt({ hash: init });

  const facilitatorWallet = wallet(facilitatorAccount);
  const facilitatorSigner = toFacilitatorEvmSigner(
    {
      address: facilitatorAccount.address,
      readContract: (args) => publicClient.readContract(args as Parameters<typeof publicClient.readContract>[0]),
      verifyTypedData: (args) => publicClient.verifyTypedData(args as Parameters<typeof publicClient.verifyTypedData>[0]),
      writeContract: (args) =>
        facilitatorWallet.writeContract({ ...(args as object), account: facilitatorAccount, chain: localBase } as unknown as Parameters<typeof facilitatorWallet.writeContract>[0]),
      sendTransaction: (args) => facilitatorWallet.sendTransaction({ ...args, account: facilitatorAccount, chain: localBase }),
      waitForTransactionReceipt: (args) => publicClient.waitForTransactionReceipt(args),
      getCode: (args) => publicClient.getCode(args),
    },
    { confirmationTimeoutMs: 20_000 },
  );

  return {
    provider,
    publicClient,
    token,
    owner,
    facilitatorAccount,
    facilitatorSigner,
    wallet,
    signerFor(privateKey, confirmationTimeoutMs) {
      const account = privateKeyToAccount(privateKey);
      const w = wallet(account);
      return toFacilitatorEvmSigner(
        {
          address: account.address,
          readContract: (args) => publicClient.readContract(args as Parameters<typeof publicClient.readContract>[0]),
          verifyTypedData: (args) => publicClient.verifyTypedData(args as Parameters<typeof publicClient.verifyTypedData>[0]),
          writeContract: (args) => w.writeContract({ ...(args as object), account, chain: localBase } as unknown as Parameters<typeof w.writeContract>[0]),
          sendTransaction: (args) => w.sendTransaction({ ...args, account, chain: localBase }),
          waitForTransactionReceipt: (args) => publicClient.waitForTransactionReceipt({ ...args, pollingInterval: 100 }),
          getCode: (args) => publicClient.getCode(args),
        },
        { confirmationTimeoutMs },
      );
    },
    async mint(to, amount) {
      const hash = await ownerWallet.writeContract({ address: BASE_USDC, abi: token.abi, functionName: 'mint', args: [to, amount], account: owner, chain: localBase });
      await publicClient.waitForTransactionReceipt({ hash });
    },
    async balanceOf(who) {
      return (await publicClient.readContract({ address: BASE_USDC, abi: token.abi, functionName: 'balanceOf', args: [who] })) as bigint;
    },
    async serveJsonRpc() {
      const { JsonRpcServer } = require('hardhat/internal/hardhat-network/jsonrpc/server') as {
        JsonRpcServer: new (c: { hostname: string; port: number; provider: Eip1193 }) => { listen(): Promise<{ address: string; port: number }>; close(): Promise<void> };
      };
      const server = new JsonRpcServer({ hostname: '127.0.0.1', port: 0, provider });
      const { port } = await server.listen();
      return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
    },
    async authorizationState(authorizer, nonce) {
      return (await publicClient.readContract({ address: BASE_USDC, abi: token.abi, functionName: 'authorizationState', args: [authorizer, nonce] })) as boolean;
    },
  };
}
