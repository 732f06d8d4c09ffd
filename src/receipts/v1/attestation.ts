/**
 * @module Receipt signatures, wire version 1 (docs/protocol.md#signature). A signed response
 * ends with a `verify` block (how to check it) and an `attestation` block (the
 * Ed25519 signature over the JCS form of a fixed envelope holding the whole
 * response without `attestation`). The envelope layout and the context
 * strings are wire format: a change needs a new version, not an edit.
 */
import type { KeyRing, SigningKey } from '../key-ring.js';
import { canonicalize, canonicalizeWithText } from '../jcs.js';
import { parseRfc3339 } from '../time.js';

export const ATTESTATION_CONTEXTS = {
  verify: 'json-schema-verifier/verify-schema-attestation/v1',
  score: 'json-schema-verifier/trust-score-attestation/v1',
} as const;

export type AttestationContext = keyof typeof ATTESTATION_CONTEXTS;

export const SIGNATURE_ALGORITHM = 'Ed25519';
export const CANONICALIZATION = 'RFC 8785 (JCS)';
export const HASH_ALGORITHM = 'SHA-256';

export interface VerifyBlock {
  public_key_url: string;
  key_version: string;
  canonicalization: typeof CANONICALIZATION;
  hash_algorithm: typeof HASH_ALGORITHM;
  service: string;
  mcp: string;
}

export interface AttestationBlock {
  algorithm: typeof SIGNATURE_ALGORITHM;
  key_version: string;
  timestamp: string;
  signature: string;
}

/** A response with its signature blocks; distributes over unions (a full or a compact receipt). */
export type SignedResponse<T extends Record<string, unknown> = Record<string, unknown>> = T extends unknown
  ? Omit<T, 'verify' | 'attestation'> & {
      verify: VerifyBlock;
      attestation: AttestationBlock;
    }
  : never;

/**
 * The exact text that is signed: JCS of
 * `{context, algorithm, key_version, attested_at, response}`, where `response`
 * is the whole response without `attestation`.
 */
export function signingInput(
  unsignedResponse: Record<string, unknown>,
  context: AttestationContext,
  keyVersion: string,
  timestamp: string,
): string {
  return envelope(canonicalize(unsignedResponse), context, keyVersion, timestamp);
}

/**
 * The signed envelope around the response's canonical form, spliced in rather
 * than re-canonicalized: its keys are already in UTF-16 order
 * (algorithm < attested_at < context < key_version < response).
 */
function envelope(responseCanonical: string, context: AttestationContext, keyVersion: string, timestamp: string): string {
  return (
    `{"algorithm":"${SIGNATURE_ALGORITHM}"` +
    `,"attested_at":${canonicalize(timestamp)}` +
    `,"context":${canonicalize(ATTESTATION_CONTEXTS[context])}` +
    `,"key_version":${canonicalize(keyVersion)}` +
    `,"response":${responseCanonical}}`
  );
}

export interface PresignerOptions {
  /** Public name of the service, e.g. `agent-output-verifier`. */
  serviceName: string;
  /** Public base URL without a trailing slash, e.g. `https://verifier.example.com`. */
  baseUrl: string;
}

export interface AttestorOptions extends PresignerOptions {
  keyRing: KeyRing;
}

export interface AttachOptions {
  context: AttestationContext;
  /** RFC 3339 UTC; for `verify` responses it must equal `verified_at`. */
  timestamp: string;
}

export interface PresignOptions extends AttachOptions {
  keyVersion: string;
  /**
   * false: only the JSON text, no signing input (default true). For a signature made on another
   * thread: the canonical walk is then done there, from the text, and the text is all that crosses.
   */
  input?: boolean;
}

/** Everything of a signature but the signature: what to sign, and the response to put it in. */
export interface Presigned<T extends Record<string, unknown> = Record<string, unknown>> {
  /** The response with its `verify` block, without `attestation`. */
  unsigned: Omit<T, 'verify' | 'attestation'> & { verify: VerifyBlock };
  /**
   * The exact text to sign (docs/protocol.md#signature); absent when presigned with `input: false`
   * (whoever signs derives it from `text` with signingInputOfText, to the same bytes).
   */
  input?: string;
  /** JSON text of `unsigned`, equal to JSON.stringify(unsigned). */
  text: string;
  keyVersion: string;
  timestamp: string;
}

/**
 * The keyless half of signing: the `verify` block and the signing input for a key version.
 * It needs no private key, so it runs wherever the verdict is computed (a verification
 * worker) and only the signature itself is made where the keys are.
 */
export interface Presigner {
  presign<T extends Record<string, unknown>>(response: T, options: PresignOptions): Presigned<T>;
}

export interface Attestor extends Presigner {
  /** The key that signs at `at` (RFC 3339): a presigned response is signed by the key it was presigned for. */
  signer(at?: string): SigningKey;
  attach<T extends Record<string, unknown>>(response: T, options: AttachOptions): SignedResponse<T>;
}

/** The attestation block of a presigned response signed with `signature` (base64). */
export function attestationBlock(presigned: Pick<Presigned, 'keyVersion' | 'timestamp'>, signature: string): AttestationBlock {
  return { algorithm: SIGNATURE_ALGORITHM, key_version: presigned.keyVersion, timestamp: presigned.timestamp, signature };
}

/**
 * The JSON text of a signed `verify` response from the text of its unsigned part and the signature
 * (standard base64): the attestation block always comes last, so it is appended to the object instead
 * of re-serializing the whole response. Equal to JSON.stringify of the signed object.
 * The SQLite writer thread, which signs receipts as it stores them, runs it too (sign-text.ts), so
 * the text stored there and the text the HTTP thread sends are made by this one function from the
 * same values.
 */
export function signedResponseText(unsignedText: string, keyVersion: string, timestamp: string, signature: string): string {
  return unsignedText.slice(0, -1) + ',"attestation":' + JSON.stringify(attestationBlock({ keyVersion, timestamp }, signature)) + '}';
}

/**
 * The signing input (signingInput) of the response whose JSON text is `unsignedText`, as
 * JSON.stringify wrote it (a presigned `text`): the text parsed back and given to signingInput, so
 * the bytes are those of signingInput of the response (attestation.test.ts compares them on the
 * conformance data and on random values). The SQLite writer thread, which signs the receipts it
 * stores, derives it there (sign-text.ts): only the text crosses to that thread.
 */
export function signingInputOfText(unsignedText: string, context: AttestationContext, keyVersion: string, timestamp: string): string {
  return signingInput(JSON.parse(unsignedText) as Record<string, unknown>, context, keyVersion, timestamp);
}

export function createPresigner(options: PresignerOptions): Presigner {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const publicKeyUrl = `${baseUrl}/.well-known/agent-card.json`;
  const mcpUrl = `${baseUrl}/mcp`;
  // The verify block is the same for every response signed with one key: built and canonicalized once.
  let cached: { keyVersion: string; block: VerifyBlock; canonical: string; json: string } | undefined;
  // Every request of one second carries the same timestamp: it is checked once.
  let checkedTimestamp = '';
  const verifyBlock = (keyVersion: string) => {
    if (cached?.keyVersion !== keyVersion) {
      const block: VerifyBlock = Object.freeze({
        public_key_url: publicKeyUrl,
        key_version: keyVersion,
        canonicalization: CANONICALIZATION,
        hash_algorithm: HASH_ALGORITHM,
        service: options.serviceName,
        mcp: mcpUrl,
      });
      cached = { keyVersion, block, canonical: canonicalize(block), json: JSON.stringify(block) };
    }
    return cached;
  };
  return {
    presign(response, { context, timestamp, keyVersion, input = true }) {
      if (!(context in ATTESTATION_CONTEXTS)) throw new Error(`unknown attestation context '${String(context)}'`);
      if (timestamp !== checkedTimestamp) {
        if (parseRfc3339(timestamp) === undefined) throw new Error('the attestation timestamp must be an RFC 3339 date-time');
        checkedTimestamp = timestamp;
      }
      if (context === 'verify' && 'verified_at' in response && response.verified_at !== timestamp) {
        throw new Error('verified_at must equal the attestation timestamp');
      }
      const { block, canonical, json } = verifyBlock(keyVersion);
      // A spread clone keeps V8's fast object layout (copying key by key or deleting would
      // switch a 30-member response to slow dictionary mode, which costs more than the hashing).
      // Re-signing replaces the blocks, and they always come last.
      let unsigned: Record<string, unknown> = { ...response };
      if ('verify' in unsigned || 'attestation' in unsigned) {
        const { verify: _v, attestation: _a, ...rest } = unsigned;
        unsigned = rest;
      }
      unsigned.verify = block;
      const presigned = unsigned as Presigned<typeof response>['unsigned'];
      if (!input) return { unsigned: presigned, text: JSON.stringify(unsigned), keyVersion, timestamp };
      // The canonical form to sign and the JSON text to send, from one walk of the response.
      const both = canonicalizeWithText(unsigned, 'verify', canonical, json);
      return { unsigned: presigned, input: envelope(both.canonical, context, keyVersion, timestamp), text: both.json, keyVersion, timestamp };
    },
  };
}

export function createAttestor(options: AttestorOptions): Attestor {
  const presigner = createPresigner(options);
  return {
    presign: presigner.presign,
    signer: (at) => options.keyRing.signer(at),
    attach(response, { context, timestamp }) {
      const signer = options.keyRing.signer(timestamp);
      const presigned = presigner.presign(response, { context, timestamp, keyVersion: signer.keyVersion });
      const signature = signer.sign(Buffer.from(presigned.input as string, 'utf8')).toString('base64');
      const signed: Record<string, unknown> = presigned.unsigned;
      signed.attestation = attestationBlock(presigned, signature);
      return signed as SignedResponse<typeof response>;
    },
  };
}
