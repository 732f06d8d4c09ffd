/**
 * @module The built-in facilitator's Solana side: a fee-payer key (read from a
 * file, never logged) and the official `toFacilitatorSvmSigner` over the
 * operator's JSON-RPC endpoint (X402_LOCAL_SVM_RPC_URL), with two changes the
 * money rules need:
 *
 * - the wait for confirmation is bounded (`confirmationTimeoutMs`), so a
 *   transaction not confirmed in time is reported `settlement_pending` with its
 *   signature instead of holding the buyer's request;
 * - a send whose answer is lost (a connection error, not an RPC error) may still
 *   reach the cluster, so it reports the transaction's own signature (the fee
 *   payer's, known before sending) and leaves the outcome to confirmation.
 *
 * `transactionStatus` settles an unknown outcome by signature: confirmed (or
 * failed) on chain; or expired — its blockhash no longer valid and still no
 * status, so it can never land and the payment is void.
 */
import { createPrivateKey, createPublicKey, sign as ed25519Sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { address, createSolanaRpc, getBase58Decoder, getCompiledTransactionMessageDecoder, type Address, type SignatureBytes } from '@solana/kit';
import { decodeTransactionFromPayload, toFacilitatorSvmSigner, TransactionOnchainFailureError, type FacilitatorSvmSigner } from '@x402/svm';
import { decryptPrivateKey, encryptPrivateKey } from '../receipts/key-store.js';

/** What the chain says about a settlement transaction; `expired`: it can no longer land. */
export type SvmTransactionStatus = 'success' | 'reverted' | 'expired' | 'unknown';

/** A facilitator signer that can also tell what became of a transaction it sent. */
export interface SvmSettlementSigner extends FacilitatorSvmSigner {
  /**
   * The outcome of `signature`, sent for the buyer's transaction `payerTransaction`
   * (base64, its blockhash bounds when it can land).
   */
  transactionStatus(signature: string, payerTransaction: string | null): Promise<SvmTransactionStatus>;
}

export interface SvmFacilitatorSignerOptions {
  rpcUrl: string;
  /** The fee payer's Ed25519 private key. */
  key: KeyObject;
  /** Bound on each confirmation wait (default 30 s). */
  confirmationTimeoutMs?: number;
  /** Pause between signature-status polls while waiting (default 400 ms). */
  pollIntervalMs?: number;
}

/** The label a sealed fee-payer key is encrypted under (authenticated: a receipt signing key's row cannot stand in). */
const SEAL_LABEL = 'x402-svm-fee-payer';
const SEALED_PREFIX = 'aes-256-gcm:v1:';

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function keyFromSeed(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

function rawPublicKey(key: KeyObject): Buffer {
  const der = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - 32);
}

/** The base58 address of an Ed25519 key. */
export function svmAddressOf(key: KeyObject): Address {
  return address(getBase58Decoder().decode(rawPublicKey(key)));
}

/**
 * The fee-payer key sealed under the key-encryption key (KEY_ENCRYPTION_KEY), as the signing keys
 * are in the database: AES-256-GCM of its PKCS#8 form. What `aov keys seal-fee-payer` writes.
 */
export function sealSvmKey(key: KeyObject, kek: Buffer): string {
  return encryptPrivateKey(key, SEAL_LABEL, kek);
}

/**
 * Read a fee-payer key file: a Solana CLI keypair (`solana-keygen new -o`: a JSON array of
 * 64 bytes, the seed then the public key), an Ed25519 private key in PKCS#8 PEM, or either
 * sealed under the key-encryption key (`sealSvmKey`; `kek` then opens it). Errors name the
 * file and the problem, never the key.
 */
export function readSvmKeyFile(file: string, kek: Buffer | null = null): KeyObject {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (e) {
    throw new Error(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (text.startsWith(SEALED_PREFIX)) {
    if (!kek) throw new Error(`${file} is sealed under a key-encryption key, and KEY_ENCRYPTION_KEY is not set`);
    let key: KeyObject;
    try {
      key = decryptPrivateKey(text, SEAL_LABEL, kek);
    } catch {
      throw new Error(`${file} cannot be opened with this KEY_ENCRYPTION_KEY`);
    }
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${file} holds a ${key.asymmetricKeyType ?? 'non-Ed25519'} key; Solana keys are Ed25519`);
    return key;
  }
  if (text.startsWith('[')) {
    let bytes: unknown;
    try {
      bytes = JSON.parse(text);
    } catch {
      bytes = null;
    }
    if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
      throw new Error(`${file} is not a Solana keypair file (a JSON array of 64 bytes)`);
    }
    const raw = Uint8Array.from(bytes as number[]);
    const key = keyFromSeed(raw.subarray(0, 32));
    if (!rawPublicKey(key).equals(Buffer.from(raw.subarray(32)))) throw new Error(`${file}: the public key does not match the private key`);
    return key;
  }
  if (text.startsWith('-----BEGIN PRIVATE KEY-----')) {
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: text, format: 'pem' });
    } catch {
      throw new Error(`${file} is not a readable PKCS#8 private key`);
    }
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${file} holds a ${key.asymmetricKeyType ?? 'non-Ed25519'} key; Solana keys are Ed25519`);
    return key;
  }
  throw new Error(`${file} is neither a Solana keypair file (JSON array of 64 bytes) nor an Ed25519 PKCS#8 PEM key`);
}

/** The transaction's id: its first signature (the fee payer's), base58. */
function signatureOf(wireBase64: string): string | null {
  const tx = decodeTransactionFromPayload({ transaction: wireBase64 });
  const first = Object.values(tx.signatures)[0];
  return first ? getBase58Decoder().decode(first) : null;
}

function blockhashOf(wireBase64: string): string | null {
  try {
    const tx = decodeTransactionFromPayload({ transaction: wireBase64 });
    return getCompiledTransactionMessageDecoder().decode(tx.messageBytes).lifetimeToken;
  } catch {
    return null;
  }
}

/**
 * Whether the node itself refused the transaction (a JSON-RPC error, or an HTTP status below 500): then it
 * was not sent. No answer (a connection error, a timeout) or a gateway's 5xx: it may have been forwarded.
 */
function isRefusal(e: unknown): boolean {
  const c = e as { context?: { __code?: unknown; statusCode?: unknown } } | null;
  if (!c || typeof c !== 'object' || !c.context) return false;
  // Kit's errors carry a code; its HTTP transport errors also the response's status.
  if (typeof c.context.statusCode === 'number') return c.context.statusCode < 500;
  return typeof c.context.__code === 'number';
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The built-in facilitator's Solana signer on `rpcUrl`, paying fees from `key`. */
export function createSvmFacilitatorSigner(options: SvmFacilitatorSignerOptions): SvmSettlementSigner {
  const rpc = createSolanaRpc(options.rpcUrl);
  const feePayer = svmAddressOf(options.key);
  const key = options.key;
  const timeoutMs = options.confirmationTimeoutMs ?? 30_000;
  const pollMs = options.pollIntervalMs ?? 400;
  const keySigner = {
    address: feePayer,
    // Ed25519 in node:crypto; the key never leaves this closure.
    signMessages: async (messages: readonly { content: Uint8Array }[]) =>
      messages.map((m) => Object.freeze({ [feePayer]: ed25519Sign(null, m.content, key) as unknown as SignatureBytes })),
    signTransactions: async () => {
      throw new Error('the fee payer signs messages only');
    },
  };
  // One RPC for every Solana network it is registered for (the map's '*' entry: a kit RPC is a proxy,
  // which the signer's own single-RPC detection does not recognise).
  const base = toFacilitatorSvmSigner(keySigner as unknown as Parameters<typeof toFacilitatorSvmSigner>[0], { '*': rpc } as unknown as Parameters<typeof toFacilitatorSvmSigner>[1]);

  /** `history`: also look past the recent status cache (a reconciliation may come long after the send). */
  async function signatureStatus(signature: string, history: boolean): Promise<'success' | 'reverted' | null> {
    const { value } = await rpc.getSignatureStatuses([signature as never], { searchTransactionHistory: history }).send();
    const entry = value[0];
    if (!entry || (entry.confirmationStatus !== 'confirmed' && entry.confirmationStatus !== 'finalized')) return null;
    return entry.err ? 'reverted' : 'success';
  }

  return {
    ...base,
    async sendTransaction(transaction, network) {
      try {
        return await base.sendTransaction(transaction, network);
      } catch (e) {
        if (isRefusal(e)) throw e;
        // No answer: it may have reached the cluster; its signature is known, confirmation decides.
        const signature = signatureOf(transaction);
        if (!signature) throw e;
        return signature;
      }
    },
    async confirmTransaction(signature) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const status = await signatureStatus(signature, false).catch(() => null);
        if (status === 'success') return;
        if (status === 'reverted') throw new TransactionOnchainFailureError(`transaction ${signature} failed on chain`);
        if (Date.now() + pollMs > deadline) throw new Error(`transaction ${signature} not confirmed within ${timeoutMs} ms`);
        await sleep(pollMs);
      }
    },
    async transactionStatus(signature, payerTransaction) {
      try {
        const blockhash = payerTransaction ? blockhashOf(payerTransaction) : null;
        // The blockhash first: once it is invalid the transaction cannot land any more, so a missing
        // status read after that is final.
        const valid = blockhash ? (await rpc.isBlockhashValid(blockhash as never, { commitment: 'processed' }).send()).value : true;
        const status = await signatureStatus(signature, true);
        if (status) return status;
        return valid ? 'unknown' : 'expired';
      } catch {
        return 'unknown';
      }
    },
  };
}
