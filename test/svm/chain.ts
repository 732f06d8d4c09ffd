/**
 * @module A real Solana VM for the payment tests, offline: LiteSVM (the Solana
 * runtime with SPL Token, Associated Token Account, Memo and Compute Budget
 * built in) behind a small JSON-RPC server on 127.0.0.1, answering the calls the
 * official `@x402/svm` client and the built-in facilitator make. A USDC-like mint
 * (6 decimals) sits at the mainnet USDC address; buyers and the seller get
 * associated token accounts; balances are read from the VM.
 *
 * Like a cluster, sending is fire-and-forget (`skipPreflight`): a transaction
 * whose blockhash is no longer valid is dropped (it never gets a status), one that
 * fails while executing lands with its error. Tests can hold sent transactions
 * back (unconfirmed), release or drop them, and expire the blockhash.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LiteSVM, FailedTransactionMetadata } from 'litesvm';
import {
  address,
  getAddressEncoder,
  getBase58Decoder,
  getBase64Encoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
  type Address,
  type Transaction,
} from '@solana/kit';
import { SOLANA_USDC } from '../../src/payments/config.js';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const MINT_SIZE = 82;
const TOKEN_ACCOUNT_SIZE = 165;
/** TransactionErrorFieldless.BlockhashNotFound and AlreadyProcessed in LiteSVM's error enum. */
const BLOCKHASH_NOT_FOUND = 7;
const ALREADY_PROCESSED = 6;

type SignatureStatus = { slot: number; err: unknown };
/** A call whose answer never comes back: the connection is cut. */
const LOST = Symbol('lost');

export interface SvmChain {
  /** The JSON-RPC endpoint (http://127.0.0.1:port). */
  readonly url: string;
  readonly svm: LiteSVM;
  /** RPC methods called that this server does not implement (should stay empty). */
  readonly unknownMethods: string[];
  /** How many times each RPC method was called. */
  readonly calls: Map<string, number>;
  /** Give an owner an associated token account holding `amount` units of the USDC-like mint (created or set). */
  fund(owner: string, amount: bigint): Promise<void>;
  /** The owner's USDC-like balance, read from the VM (0 without an account). */
  balance(owner: string): Promise<bigint>;
  /** SOL (lamports) of an account. */
  lamports(owner: string): bigint;
  airdrop(owner: string, lamports: bigint): void;
  /** From now on, sent transactions are held back: accepted (a signature is returned) but not executed. */
  hold(): void;
  /** Execute the held transactions in order and stop holding. */
  release(): void;
  /** Forget the held transactions (as a cluster drops what it could not include) and stop holding. */
  dropHeld(): number;
  /** Make the current blockhash invalid (a new one is the latest). */
  expireBlockhash(): void;
  /** Expire the blockhash right after the next simulation (between a facilitator's verify and its settle). */
  expireBlockhashAfterNextSimulation(): void;
  /** The next sent transaction is executed, but its answer is lost (the connection is cut). */
  loseNextSendAnswer(): void;
  /** Signatures of transactions that landed (succeeded or failed on chain). */
  landed(): Map<string, SignatureStatus>;
  close(): Promise<void>;
}

async function ata(owner: string): Promise<Address> {
  const enc = getAddressEncoder();
  const [pda] = await getProgramDerivedAddress({
    programAddress: address(ATA_PROGRAM),
    seeds: [enc.encode(address(owner)), enc.encode(address(TOKEN_PROGRAM)), enc.encode(address(SOLANA_USDC))],
  });
  return pda;
}

function mintData(supply: bigint): Uint8Array {
  const data = Buffer.alloc(MINT_SIZE);
  // No mint authority (option tag 0): nothing can mint behind the test's back.
  data.writeBigUInt64LE(supply, 36);
  data[44] = 6;
  data[45] = 1;
  return data;
}

function tokenAccountData(owner: string, amount: bigint): Uint8Array {
  const enc = getAddressEncoder();
  const data = Buffer.alloc(TOKEN_ACCOUNT_SIZE);
  data.set(enc.encode(address(SOLANA_USDC)), 0);
  data.set(enc.encode(address(owner)), 32);
  data.writeBigUInt64LE(amount, 64);
  data[108] = 1; // AccountState::Initialized
  return data;
}

function errorOf(f: FailedTransactionMetadata): unknown {
  const e = f.err();
  if (typeof e === 'number') return { TransactionError: e };
  return { TransactionError: String((e as { toString?: () => string })?.toString?.() ?? 'failed') };
}

function isFieldless(f: FailedTransactionMetadata, code: number): boolean {
  return f.err() === code;
}

/** Start LiteSVM and its JSON-RPC server on a free loopback port. */
export async function startSvmChain(): Promise<SvmChain> {
  const svm = new LiteSVM();
  const calls = new Map<string, number>();
  const unknownMethods: string[] = [];
  const statuses = new Map<string, SignatureStatus>();
  const held: Transaction[] = [];
  let holding = false;
  let expireAfterSimulation = false;
  let loseSendAnswer = false;
  let supply = 0n;
  const txDecoder = getTransactionDecoder();
  const b58 = getBase58Decoder();
  const b64 = getBase64Encoder();
  const rentMint = svm.minimumBalanceForRentExemption(BigInt(MINT_SIZE));
  const rentToken = svm.minimumBalanceForRentExemption(BigInt(TOKEN_ACCOUNT_SIZE));

  const setMint = () =>
    svm.setAccount({ address: address(SOLANA_USDC), data: mintData(supply), executable: false, lamports: rentMint, programAddress: address(TOKEN_PROGRAM), space: BigInt(MINT_SIZE) } as never);
  setMint();

  const slot = () => Number(svm.getClock().slot);
  const ctx = () => ({ context: { slot: slot(), apiVersion: '2.2.0' } });

  const signatureOf = (tx: Transaction): string => {
    const first = Object.values(tx.signatures)[0];
    return first ? b58.decode(first) : '';
  };

  /** Execute one transaction as the cluster would: landed (with its outcome) or dropped. */
  function execute(tx: Transaction): void {
    const sig = signatureOf(tx);
    const r = svm.sendTransaction(tx as never);
    if (r instanceof FailedTransactionMetadata) {
      // A stale blockhash or a repeat never lands; anything else lands failed (the fee is paid).
      if (isFieldless(r, BLOCKHASH_NOT_FOUND) || isFieldless(r, ALREADY_PROCESSED)) return;
      statuses.set(sig, { slot: slot(), err: errorOf(r) });
    } else {
      statuses.set(sig, { slot: slot(), err: null });
    }
    // Each transaction in its own slot, so later ones see a later clock.
    svm.warpToSlot(BigInt(slot() + 1));
  }

  function decode(wire: unknown): Transaction {
    if (typeof wire !== 'string') throw new Error('transaction must be a base64 string');
    return txDecoder.decode(b64.encode(wire));
  }

  async function accountInfo(addr: string, encoding: string | undefined): Promise<unknown> {
    const acc = svm.getAccount(address(addr));
    if (!acc.exists) return null;
    const data = Buffer.from(acc.data);
    if (encoding === 'jsonParsed' && acc.programAddress === TOKEN_PROGRAM && data.length === TOKEN_ACCOUNT_SIZE) {
      const amount = data.readBigUInt64LE(64).toString();
      return {
        data: { program: 'spl-token', parsed: { type: 'account', info: { mint: SOLANA_USDC, tokenAmount: { amount, decimals: 6 } } }, space: TOKEN_ACCOUNT_SIZE },
        executable: false,
        lamports: Number(acc.lamports),
        owner: acc.programAddress,
        rentEpoch: 0,
        space: data.length,
      };
    }
    return { data: [data.toString('base64'), 'base64'], executable: acc.executable, lamports: Number(acc.lamports), owner: acc.programAddress, rentEpoch: 0, space: data.length };
  }

  async function call(method: string, params: unknown[]): Promise<unknown> {
    switch (method) {
      case 'getLatestBlockhash':
        return { ...ctx(), value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: slot() + 150 } };
      case 'isBlockhashValid':
        return { ...ctx(), value: params[0] === svm.latestBlockhash() };
      case 'getSlot':
      case 'getBlockHeight':
        return slot();
      case 'getAccountInfo':
        return { ...ctx(), value: await accountInfo(String(params[0]), (params[1] as { encoding?: string } | undefined)?.encoding) };
      case 'getMultipleAccounts': {
        const enc = (params[1] as { encoding?: string } | undefined)?.encoding;
        return { ...ctx(), value: await Promise.all((params[0] as string[]).map((a) => accountInfo(a, enc))) };
      }
      case 'getBalance':
        return { ...ctx(), value: Number(svm.getBalance(address(String(params[0]))) ?? 0n) };
      case 'getMinimumBalanceForRentExemption':
        return Number(svm.minimumBalanceForRentExemption(BigInt(params[0] as number)));
      case 'getTokenAccountBalance': {
        const acc = svm.getAccount(address(String(params[0])));
        if (!acc.exists) throw Object.assign(new Error('could not find account'), { code: -32602 });
        const amount = Buffer.from(acc.data).readBigUInt64LE(64);
        return { ...ctx(), value: { amount: amount.toString(), decimals: 6, uiAmount: Number(amount) / 1e6, uiAmountString: String(Number(amount) / 1e6) } };
      }
      case 'simulateTransaction': {
        const tx = decode(params[0]);
        const opts = (params[1] ?? {}) as { sigVerify?: boolean };
        // The fee payer's signature is still empty when a facilitator simulates: verify signatures only when asked.
        svm.withSigverify(opts.sigVerify === true);
        let r: ReturnType<LiteSVM['simulateTransaction']>;
        try {
          r = svm.simulateTransaction(tx as never);
        } finally {
          svm.withSigverify(true);
        }
        if (expireAfterSimulation) {
          expireAfterSimulation = false;
          svm.expireBlockhash();
        }
        if (r instanceof FailedTransactionMetadata) {
          return { ...ctx(), value: { err: errorOf(r), logs: r.meta().logs(), accounts: null, unitsConsumed: Number(r.meta().computeUnitsConsumed()), returnData: null } };
        }
        return { ...ctx(), value: { err: null, logs: r.meta().logs(), accounts: null, unitsConsumed: Number(r.meta().computeUnitsConsumed()), returnData: null } };
      }
      case 'sendTransaction': {
        const tx = decode(params[0]);
        const sig = signatureOf(tx);
        if (!sig || Object.values(tx.signatures).some((s) => s === null)) {
          throw Object.assign(new Error('Transaction signature verification failure'), { code: -32003 });
        }
        if (holding) held.push(tx);
        else execute(tx);
        if (loseSendAnswer) {
          loseSendAnswer = false;
          return LOST;
        }
        return sig;
      }
      case 'getSignatureStatuses': {
        const sigs = params[0] as string[];
        return {
          ...ctx(),
          value: sigs.map((s) => {
            const st = statuses.get(s);
            if (!st) return null;
            return { slot: st.slot, confirmations: null, err: st.err, status: st.err ? { Err: st.err } : { Ok: null }, confirmationStatus: 'finalized' };
          }),
        };
      }
      default:
        unknownMethods.push(method);
        throw Object.assign(new Error(`Method not found: ${method}`), { code: -32601 });
    }
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let msg: { id?: unknown; method?: string; params?: unknown[] };
      try {
        msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof msg;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const method = String(msg.method);
      calls.set(method, (calls.get(method) ?? 0) + 1);
      call(method, msg.params ?? []).then(
        (result) => (result === LOST ? res.destroy() : reply(res, { jsonrpc: '2.0', id: msg.id, result })),
        (e: { code?: number; message?: string }) => reply(res, { jsonrpc: '2.0', id: msg.id, error: { code: e.code ?? -32000, message: e.message ?? String(e) } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    svm,
    unknownMethods,
    calls,
    async fund(owner, amount) {
      const account = await ata(owner);
      const before = svm.getAccount(account);
      const had = before.exists ? Buffer.from(before.data).readBigUInt64LE(64) : 0n;
      svm.setAccount({ address: account, data: tokenAccountData(owner, amount), executable: false, lamports: rentToken, programAddress: address(TOKEN_PROGRAM), space: BigInt(TOKEN_ACCOUNT_SIZE) } as never);
      supply += amount - had;
      setMint();
    },
    async balance(owner) {
      const acc = svm.getAccount(await ata(owner));
      return acc.exists ? Buffer.from(acc.data).readBigUInt64LE(64) : 0n;
    },
    lamports(owner) {
      return BigInt(svm.getBalance(address(owner)) ?? 0n);
    },
    airdrop(owner, lamports) {
      const r = svm.airdrop(address(owner), lamports as never);
      if (r instanceof FailedTransactionMetadata) throw new Error(`airdrop failed: ${r.toString()}`);
    },
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const tx of held.splice(0)) execute(tx);
    },
    dropHeld() {
      holding = false;
      return held.splice(0).length;
    },
    expireBlockhash() {
      svm.expireBlockhash();
    },
    expireBlockhashAfterNextSimulation() {
      expireAfterSimulation = true;
    },
    loseNextSendAnswer() {
      loseSendAnswer = true;
    },
    landed() {
      return new Map(statuses);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function reply(res: ServerResponse, body: unknown): void {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)));
}
