/**
 * @module The validator's view of the chain, over the configured JSON-RPC
 * endpoint only: the ValidationRequest logs addressed to the validator (decoded
 * strictly: a log that does not decode is reported, never trusted), what the
 * registry holds for a request, and the transactions of the validator's one
 * account: an answer is signed here with the nonce the queue gave it and sent as
 * those bytes, so sending again is harmless.
 */
import {
  createPublicClient,
  decodeEventLog,
  encodeFunctionData,
  http,
  keccak256,
  pad,
  toEventSelector,
  TransactionReceiptNotFoundError,
  type Hex,
  type Transport,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { validationRegistryAbi } from './abi.js';
import type { ValidationAnswer } from './queue-store.js';

/** A ValidationRequest log addressed to the validator, or why it could not be read. */
export type RequestLog =
  | { ok: true; requestHash: Hex; agentId: bigint; blockNumber: number; transactionHash: Hex }
  | { ok: false; reason: string; blockNumber: number | null; transactionHash: string | null };

export interface RegistryStatus {
  validator: Hex;
  agentId: bigint;
  response: number;
  responseHash: Hex;
  tag: string;
}

export interface ValidatorChain {
  /** The validator's address (checksummed). */
  readonly address: Hex;
  chainId(): Promise<number>;
  blockNumber(): Promise<number>;
  /** ValidationRequest logs of the registry addressed to the validator, blocks from … to inclusive. */
  requestLogs(fromBlock: number, toBlock: number): Promise<RequestLog[]>;
  /** What the registry holds for a request; null when getValidationStatus reverts (it does not know the request). */
  registryStatus(requestHash: Hex): Promise<RegistryStatus | null>;
  /** The account's transaction count: `latest` (mined) or `pending` (with the node's pool). */
  nonce(blockTag: 'latest' | 'pending'): Promise<number>;
  /** Throws when the answer would revert (checked before a nonce is taken for it). */
  estimate(requestHash: Hex, answer: ValidationAnswer): Promise<bigint>;
  /** Sign the answer's transaction with this nonce; nothing is sent. */
  sign(requestHash: Hex, answer: ValidationAnswer, nonce: number, gas: bigint): Promise<{ raw: Hex; hash: Hex }>;
  /** Send signed bytes; a node that already has them is not an error. */
  send(raw: Hex): Promise<void>;
  /** The mined outcome of a transaction, or null while it is not mined. */
  receipt(hash: Hex): Promise<{ success: boolean; blockNumber: number } | null>;
}

export interface ValidatorChainOptions {
  rpcUrl: string;
  registry: Hex;
  /** Read once; the key stays inside the account object. */
  privateKey: Hex;
  /** Per-request timeout (ms). */
  timeoutMs?: number;
  /** Another transport (tests). */
  transport?: Transport;
}

const REQUEST_TOPIC = toEventSelector('ValidationRequest(address,uint256,string,bytes32)');
/** Most blocks one eth_getLogs call asks for (public endpoints refuse wide ranges). */
export const MAX_LOG_RANGE = 1000;

function answerData(requestHash: Hex, a: ValidationAnswer): Hex {
  return encodeFunctionData({
    abi: validationRegistryAbi,
    functionName: 'validationResponse',
    args: [requestHash, a.response, a.responseUri, a.responseHash as Hex, a.tag],
  });
}

/** Errors a node gives for bytes it already has (the same transaction sent again). */
const ALREADY_KNOWN = /already known|known transaction|already imported|nonce too low|transaction already exists/i;

interface RawLog {
  address?: string;
  topics?: string[];
  data?: string;
  blockNumber?: string | null;
  transactionHash?: string | null;
}

export function createValidatorChain(options: ValidatorChainOptions): ValidatorChain {
  const account = privateKeyToAccount(options.privateKey);
  const client = createPublicClient({ transport: options.transport ?? http(options.rpcUrl, { timeout: options.timeoutMs ?? 10_000, retryCount: 0 }) });
  let chainId: number | null = null;
  const getChainId = async () => (chainId ??= await client.getChainId());
  const registry = options.registry;

  return {
    address: account.address,
    chainId: getChainId,
    async blockNumber() {
      return Number(await client.getBlockNumber({ cacheTime: 0 }));
    },
    async requestLogs(fromBlock, toBlock) {
      const logs = (await client.request({
        method: 'eth_getLogs',
        params: [{ address: registry, topics: [REQUEST_TOPIC, pad(account.address.toLowerCase() as Hex)], fromBlock: `0x${fromBlock.toString(16)}`, toBlock: `0x${toBlock.toString(16)}` }],
      } as never)) as unknown;
      if (!Array.isArray(logs)) throw new Error('eth_getLogs did not answer a list');
      return (logs as RawLog[]).map((log): RequestLog => {
        const blockNumber = typeof log.blockNumber === 'string' && /^0x[0-9a-f]+$/i.test(log.blockNumber) ? Number(BigInt(log.blockNumber)) : null;
        const transactionHash = typeof log.transactionHash === 'string' && /^0x[0-9a-f]{64}$/i.test(log.transactionHash) ? log.transactionHash : null;
        if (blockNumber === null || transactionHash === null) return { ok: false, reason: 'log without block or transaction', blockNumber, transactionHash };
        if (typeof log.address !== 'string' || log.address.toLowerCase() !== registry.toLowerCase()) {
          return { ok: false, reason: 'log of another contract', blockNumber, transactionHash };
        }
        try {
          const ev = decodeEventLog({ abi: validationRegistryAbi, eventName: 'ValidationRequest', topics: (log.topics ?? []) as [Hex, ...Hex[]], data: (log.data ?? '0x') as Hex, strict: true });
          if (ev.args.validatorAddress.toLowerCase() !== account.address.toLowerCase()) return { ok: false, reason: 'addressed to another validator', blockNumber, transactionHash };
          return { ok: true, requestHash: ev.args.requestHash.toLowerCase() as Hex, agentId: ev.args.agentId, blockNumber, transactionHash: transactionHash as Hex };
        } catch {
          return { ok: false, reason: 'log does not decode as ValidationRequest', blockNumber, transactionHash };
        }
      });
    },
    async registryStatus(requestHash) {
      try {
        const [validator, agentId, response, responseHash, tag] = await client.readContract({
          address: registry,
          abi: validationRegistryAbi,
          functionName: 'getValidationStatus',
          args: [requestHash],
        });
        return { validator, agentId, response, responseHash, tag };
      } catch (e) {
        // "unknown" (no such request) or any other refusal: nothing of ours to read there. Transport errors go up.
        if (/revert/i.test(`${e instanceof Error ? e.message : ''} ${(e as { details?: string }).details ?? ''}`)) return null;
        throw e;
      }
    },
    async nonce(blockTag) {
      return client.getTransactionCount({ address: account.address, blockTag });
    },
    async estimate(requestHash, answer) {
      return client.estimateGas({ account: account.address, to: registry, data: answerData(requestHash, answer) });
    },
    async sign(requestHash, answer, nonce, gas) {
      const fees = await client.estimateFeesPerGas();
      const raw = await account.signTransaction({
        chainId: await getChainId(),
        type: 'eip1559',
        to: registry,
        data: answerData(requestHash, answer),
        nonce,
        // Headroom over the estimate: the registry's storage may have changed since.
        gas: (gas * 13n) / 10n,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
      return { raw, hash: keccak256(raw) };
    },
    async send(raw) {
      try {
        await client.sendRawTransaction({ serializedTransaction: raw });
      } catch (e) {
        const text = `${e instanceof Error ? e.message : ''} ${(e as { details?: string }).details ?? ''}`;
        if (ALREADY_KNOWN.test(text)) return;
        throw e;
      }
    },
    async receipt(hash) {
      try {
        const r = await client.getTransactionReceipt({ hash });
        return { success: r.status === 'success', blockNumber: Number(r.blockNumber) };
      } catch (e) {
        if (e instanceof TransactionReceiptNotFoundError) return null;
        throw e;
      }
    },
  };
}
