/**
 * @module An in-memory EVM "chain" holding EIP-3009 token balances and used
 * authorization nonces, exposed as the FacilitatorEvmSigner the official
 * `exact` EVM facilitator scheme drives. Signatures are checked for real
 * (EIP-712 recovery through viem), so payments made with the official client
 * are verified and settled exactly as on a chain — without a node. It backs the
 * fast payment tests; it is not part of the product and not a ledger of real money.
 */
import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeEventTopics,
  encodeFunctionResult,
  getAddress,
  isAddressEqual,
  keccak256,
  serializeSignature,
  toHex,
  verifyTypedData,
  type Hex,
  type Log,
} from 'viem';
import { authorizationTypes, eip3009ABI } from '@x402/evm';
import type { FacilitatorEvmSigner } from '@x402/evm';

type Address = `0x${string}`;

export interface MemoryTokenOptions {
  address: string;
  /** EIP-712 domain name, e.g. "USD Coin" for Base USDC. */
  name: string;
  /** EIP-712 domain version, e.g. "2". */
  version: string;
  decimals?: number;
}

export interface MemoryEvmChainOptions {
  chainId: number;
  tokens: MemoryTokenOptions[];
  /** Address reported as the settling account (gas payer). */
  facilitatorAddress: string;
  /** Injected clock in ms, for validity-window checks. */
  now?: () => number;
}

export interface MemoryEvmChain {
  readonly chainId: number;
  /** The signer handed to the official facilitator scheme. */
  readonly signer: FacilitatorEvmSigner;
  mint(token: string, to: string, amount: bigint): void;
  balanceOf(token: string, owner: string): bigint;
  /** Number of transferWithAuthorization transactions that changed state. */
  settledTransfers(): number;
  /** Make the next `count` writes fail as a reverted transaction (for failure-path tests). */
  failNextWrites(count: number): void;
  /**
   * Automine off (true) or on (false, the default). Off, a transfer is accepted and gets its hash
   * but only takes effect at `mine()`; until then its receipt is not found (like a node whose block
   * has not come yet), so a facilitator's wait for it times out.
   */
  setAutomine(on: boolean): void;
  /** Mine every held transaction, in order (a held transfer that became invalid reverts). */
  mine(): Promise<void>;
}

const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';
const TRANSFER_EVENT = [
  {
    type: 'event',
    name: 'Transfer',
    anonymous: false,
    inputs: [
      { name: 'from', type: 'address', indexed: true },
      { name: 'to', type: 'address', indexed: true },
      { name: 'value', type: 'uint256', indexed: false },
    ],
  },
] as const;

class Revert extends Error {}

interface TokenState {
  address: Address;
  name: string;
  version: string;
  decimals: number;
  balances: Map<string, bigint>;
  usedNonces: Set<string>;
}

interface TransferArgs {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  signature: Hex;
}

/** Create an in-memory chain with the given EIP-3009 tokens. */
export function createMemoryEvmChain(options: MemoryEvmChainOptions): MemoryEvmChain {
  const now = options.now ?? (() => Date.now());
  const tokens = new Map<string, TokenState>();
  for (const t of options.tokens) {
    const address = getAddress(t.address);
    tokens.set(address.toLowerCase(), {
      address,
      name: t.name,
      version: t.version,
      decimals: t.decimals ?? 6,
      balances: new Map(),
      usedNonces: new Set(),
    });
  }
  const receipts = new Map<string, { status: 'success' | 'reverted'; logs: Log[] }>();
  let txCounter = 0;
  let settled = 0;
  let failWrites = 0;
  let automine = true;
  const held: Array<{ hash: Hex; token: TokenState; args: TransferArgs }> = [];
  const facilitator = getAddress(options.facilitatorAddress);

  const tokenAt = (address: string): TokenState => {
    const t = tokens.get(address.toLowerCase());
    if (!t) throw new Revert(`no contract at ${address}`);
    return t;
  };
  const balance = (t: TokenState, owner: string): bigint => t.balances.get(owner.toLowerCase()) ?? 0n;
  const nonceKey = (from: string, nonce: string): string => `${from.toLowerCase()}:${nonce.toLowerCase()}`;

  function transferArgs(args: readonly unknown[]): TransferArgs {
    const [from, to, value, validAfter, validBefore, nonce, ...sig] = args as [Address, Address, bigint, bigint, bigint, Hex, ...unknown[]];
    let signature: Hex;
    if (sig.length === 3) {
      const [v, r, s] = sig as [number | bigint, Hex, Hex];
      signature = serializeSignature({ r, s, v: BigInt(v) });
    } else {
      signature = sig[0] as Hex;
    }
    return { from, to, value: BigInt(value), validAfter: BigInt(validAfter), validBefore: BigInt(validBefore), nonce, signature };
  }

  /** The FiatToken checks, in its order; throws Revert with FiatToken-like messages. */
  async function checkTransfer(t: TokenState, a: TransferArgs): Promise<void> {
    const seconds = BigInt(Math.floor(now() / 1000));
    if (seconds <= a.validAfter) throw new Revert('FiatTokenV2: authorization is not yet valid');
    if (seconds >= a.validBefore) throw new Revert('FiatTokenV2: authorization is expired');
    if (t.usedNonces.has(nonceKey(a.from, a.nonce))) throw new Revert('FiatTokenV2: authorization is used or canceled');
    const ok = await verifyTypedData({
      address: a.from,
      domain: { name: t.name, version: t.version, chainId: options.chainId, verifyingContract: t.address },
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message: { from: a.from, to: a.to, value: a.value, validAfter: a.validAfter, validBefore: a.validBefore, nonce: a.nonce },
      signature: a.signature,
    }).catch(() => false);
    if (!ok) throw new Revert('FiatTokenV2: invalid signature');
    if (balance(t, a.from) < a.value) throw new Revert('ERC20: transfer amount exceeds balance');
  }

  /** Execute a transfer in a block: re-checked, then applied, with its receipt. */
  async function apply(hash: Hex, t: TokenState, a: TransferArgs): Promise<void> {
    try {
      await checkTransfer(t, a);
    } catch {
      receipts.set(hash, { status: 'reverted', logs: [] });
      return;
    }
    // Re-check the nonce after the await: two writes with the same authorization must not both apply.
    const key = nonceKey(a.from, a.nonce);
    if (t.usedNonces.has(key) || balance(t, a.from) < a.value) {
      receipts.set(hash, { status: 'reverted', logs: [] });
      return;
    }
    t.usedNonces.add(key);
    t.balances.set(a.from.toLowerCase(), balance(t, a.from) - a.value);
    t.balances.set(a.to.toLowerCase(), balance(t, a.to) + a.value);
    settled++;
    const log = {
      address: t.address,
      topics: encodeEventTopics({ abi: TRANSFER_EVENT, eventName: 'Transfer', args: { from: getAddress(a.from), to: getAddress(a.to) } }),
      data: encodeAbiParameters([{ type: 'uint256' }], [a.value]),
      blockHash: null,
      blockNumber: null,
      logIndex: null,
      transactionHash: hash,
      transactionIndex: null,
      removed: false,
    } as unknown as Log;
    receipts.set(hash, { status: 'success', logs: [log] });
  }

  async function read(address: string, functionName: string, args: readonly unknown[]): Promise<unknown> {
    const t = tokenAt(address);
    switch (functionName) {
      case 'balanceOf':
        return balance(t, String(args[0]));
      case 'name':
        return t.name;
      case 'version':
        return t.version;
      case 'decimals':
        return t.decimals;
      case 'authorizationState':
        return t.usedNonces.has(nonceKey(String(args[0]), String(args[1])));
      case 'transferWithAuthorization':
        // eth_call simulation: run every check, change nothing.
        await checkTransfer(t, transferArgs(args));
        return undefined;
      default:
        throw new Revert(`unsupported call ${functionName}`);
    }
  }

  async function tryAggregate(calls: ReadonlyArray<{ target: Address; callData: Hex }>): Promise<Array<{ success: boolean; returnData: Hex }>> {
    const out: Array<{ success: boolean; returnData: Hex }> = [];
    for (const call of calls) {
      try {
        const { functionName, args } = decodeFunctionData({ abi: eip3009ABI, data: call.callData });
        const result = await read(call.target, functionName, args ?? []);
        const returnData =
          functionName === 'transferWithAuthorization'
            ? ('0x' as Hex)
            : encodeFunctionResult({ abi: eip3009ABI, functionName, result } as Parameters<typeof encodeFunctionResult>[0]);
        out.push({ success: true, returnData });
      } catch {
        out.push({ success: false, returnData: '0x' });
      }
    }
    return out;
  }

  const signer: FacilitatorEvmSigner = {
    getAddresses: () => [facilitator],
    async readContract({ address, functionName, args }) {
      if (isAddressEqual(address, MULTICALL3) && functionName === 'tryAggregate') {
        const [, calls] = (args ?? []) as [boolean, ReadonlyArray<{ target: Address; callData: Hex }>];
        return tryAggregate(calls);
      }
      return read(address, functionName, args ?? []);
    },
    async verifyTypedData(args) {
      return verifyTypedData(args as Parameters<typeof verifyTypedData>[0]).catch(() => false);
    },
    async writeContract({ address, functionName, args }) {
      const hash = keccak256(toHex(`memory-tx-${++txCounter}-${now()}`));
      if (functionName !== 'transferWithAuthorization') throw new Revert(`unsupported transaction ${functionName}`);
      const t = tokenAt(address);
      const a = transferArgs(args);
      if (failWrites > 0) {
        failWrites--;
        receipts.set(hash, { status: 'reverted', logs: [] });
        return hash;
      }
      // Like a node's gas estimation: a transaction that would revert is not sent.
      await checkTransfer(t, a);
      if (!automine) {
        held.push({ hash, token: t, args: a });
        return hash;
      }
      // Re-check after the await: of two writes with the same authorization only one is sent.
      if (t.usedNonces.has(nonceKey(a.from, a.nonce))) throw new Revert('FiatTokenV2: authorization is used or canceled');
      if (balance(t, a.from) < a.value) throw new Revert('ERC20: transfer amount exceeds balance');
      await apply(hash, t, a);
      return hash;
    },
    async sendTransaction() {
      throw new Revert('the in-memory chain only runs token transfers');
    },
    async waitForTransactionReceipt({ hash }) {
      const r = receipts.get(hash);
      if (!r) throw new Error(`unknown transaction ${hash}`);
      return r;
    },
    async getCode({ address }) {
      return tokens.has(address.toLowerCase()) ? ('0x6080' as Hex) : ('0x' as Hex);
    },
  };

  return {
    chainId: options.chainId,
    signer,
    mint(token, to, amount) {
      const t = tokenAt(token);
      t.balances.set(to.toLowerCase(), balance(t, to) + amount);
    },
    balanceOf(token, owner) {
      return balance(tokenAt(token), owner);
    },
    settledTransfers: () => settled,
    failNextWrites(count) {
      failWrites = count;
    },
    setAutomine(on) {
      automine = on;
    },
    async mine() {
      for (const tx of held.splice(0)) await apply(tx.hash, tx.token, tx.args);
    },
  };
}
