/**
 * @module Issuing a receipt: verify a parsed request, assemble the docs/protocol.md#response
 * response around the verdict (id, hashes, time, version) and sign it under
 * the verify context. The returned text is exactly what is stored and sent, so
 * the bytes a client receives are the bytes that were signed over.
 *
 * Issuing is split in two so that the verdict can be computed away from the keys:
 * `draftReceipt` (verify, build, canonicalize: no key needed, runs in a verification
 * worker) and `finishReceipt` (one Ed25519 signature and the attestation block, where
 * the key ring lives). `createReceiptIssuer` does both in the calling thread.
 */
import { buildResponse, type VerificationResponse } from '../core/response.js';
import type { Verifier } from '../core/verify.js';
import type { ParsedRequest } from '../core/types.js';
import { computeHashes } from './hashes.js';
import { rfc3339Seconds } from './time.js';
import type { SigningKey } from './key-ring.js';
import { attestationBlock, signedResponseText, signingInputOfText, type Attestor, type Presigned, type Presigner, type SignedResponse } from './v1/attestation.js';

export interface ReceiptIssuerOptions {
  verifier: Pick<Verifier, 'evaluate'>;
  attestor: Attestor;
  clock: () => Date;
  /** A fresh verification_id (UUID). */
  newId: () => string;
  verifierVersion: string;
}

/** The facts of a receipt its store record needs (typed, never re-read from the text). */
export interface ReceiptFacts {
  verificationId: string;
  result: 'pass' | 'fail';
  /** RFC 3339 UTC, equal to attestation.timestamp. */
  verifiedAt: string;
  keyVersion: string;
  /** overall.ratio of the verdict, also for compact responses that omit it. */
  overallRatio: number;
  taskId: string;
  agentId: string | null;
}

/** A signed receipt, its exact text, and the facts its store record needs. */
export interface IssuedReceipt extends ReceiptFacts {
  response: SignedResponse<VerificationResponse>;
  /** JSON text of `response`: what is stored and returned. */
  text: string;
}

/** A receipt with everything but its signature: plain data, so it can cross a thread boundary. */
export interface ReceiptDraft extends ReceiptFacts {
  /**
   * The exact text to sign, or absent when drafted with `input: false` for a store that signs: the
   * SQLite writer derives it from `unsignedText` (signingInputOfText), so only one text crosses to it
   * and the HTTP thread makes no canonical form.
   */
  input?: string;
  /** JSON text of the response without its attestation block. */
  unsignedText: string;
  /** The response's request_hash: what a payment for this request is bound to (src/payments/gate.ts). */
  requestHash: string;
}

/** The identity of a receipt, when the caller assigns it (the service does; the CLI lets the issuer). */
export interface ReceiptStamp {
  verificationId: string;
  verifiedAt: Date;
}

export interface DraftOptions {
  verifier: Pick<Verifier, 'evaluate'>;
  presigner: Presigner;
  verifierVersion: string;
  /** false: leave the signing input to whoever signs (see ReceiptDraft.input); default true. */
  input?: boolean;
}

/** Verify and build the response for this stamp and key version, ready to be signed. */
export function draftReceipt(
  parsed: ParsedRequest,
  stamp: { verificationId: string; verifiedAt: string },
  keyVersion: string,
  options: DraftOptions,
): ReceiptDraft {
  return toDraft(presignReceipt(parsed, stamp, keyVersion, options));
}

function presignReceipt(
  parsed: ParsedRequest,
  stamp: { verificationId: string; verifiedAt: string },
  keyVersion: string,
  options: DraftOptions,
): { presigned: Presigned<VerificationResponse>; facts: ReceiptFacts; requestHash: string } {
  const hashes = computeHashes(parsed);
  const verdict = options.verifier.evaluate(parsed, { schemaKey: hashes.schema_hash });
  const meta = {
    verification_id: stamp.verificationId,
    output_hash: hashes.output_hash,
    schema_hash: hashes.schema_hash,
    rules_hash: hashes.rules_hash,
    request_hash: hashes.request_hash,
    verified_at: stamp.verifiedAt,
    verifier_version: options.verifierVersion,
  };
  const unsigned = buildResponse(verdict, meta, parsed.request.detail);
  const presigned = options.presigner.presign(unsigned, { context: 'verify', timestamp: stamp.verifiedAt, keyVersion, input: options.input });
  const facts: ReceiptFacts = {
    verificationId: stamp.verificationId,
    result: verdict.result,
    verifiedAt: stamp.verifiedAt,
    keyVersion,
    overallRatio: verdict.overall.ratio,
    taskId: verdict.task_id,
    agentId: verdict.agent_id,
  };
  return { presigned, facts, requestHash: hashes.request_hash };
}

function toDraft({ presigned, facts, requestHash }: { presigned: Presigned<VerificationResponse>; facts: ReceiptFacts; requestHash: string }): ReceiptDraft {
  // Written out rather than spread: one literal shape, no copy of the facts object per request.
  return {
    verificationId: facts.verificationId,
    result: facts.result,
    verifiedAt: facts.verifiedAt,
    keyVersion: facts.keyVersion,
    overallRatio: facts.overallRatio,
    taskId: facts.taskId,
    agentId: facts.agentId,
    input: presigned.input,
    unsignedText: presigned.text,
    requestHash,
  };
}

/** The exact text a draft's signature is over: its own, or derived from its unsigned text (the same bytes). */
function draftInput(draft: ReceiptDraft): string {
  return draft.input ?? signingInputOfText(draft.unsignedText, 'verify', draft.keyVersion, draft.verifiedAt);
}

/**
 * Sign a draft with the key it was drafted for. The response object is parsed from the
 * text only when someone reads it (the MCP adapter does; REST sends the text).
 */
export function finishReceipt(draft: ReceiptDraft, signer: SigningKey): IssuedReceipt {
  checkDraftKey(draft, signer);
  const signature = signer.sign(Buffer.from(draftInput(draft), 'utf8')).toString('base64');
  return storedReceipt(draft, signedResponseText(draft.unsignedText, draft.keyVersion, draft.verifiedAt, signature));
}

/** A draft is signed only by the key it was drafted for (its signing input names that key). */
export function checkDraftKey(draft: ReceiptDraft, signer: SigningKey): void {
  if (signer.keyVersion !== draft.keyVersion) throw new Error(`draft for key ${draft.keyVersion} offered to key ${signer.keyVersion}`);
}

/**
 * The receipt of a draft signed where it was stored (a store's signAndSaveReceipt): `text` is the signed
 * text exactly as the store stored it, so the bytes sent are the stored ones and no second copy is built.
 */
export function storedReceipt(facts: ReceiptFacts, text: string): IssuedReceipt {
  return new SignedReceipt(facts, text);
}

/** A draft and the key it was drafted for: everything a receipt needs but its signature. */
export interface UnsignedReceipt {
  draft: ReceiptDraft;
  signer: SigningKey;
}

/**
 * An issued receipt whose response is parsed from its text on first read. A class, because an
 * object literal with a getter (and a rest/spread copy of the draft) costs several times more per
 * request; the cache is a private field, so the own properties are exactly the facts and the text.
 */
class SignedReceipt implements IssuedReceipt {
  readonly verificationId: string;
  readonly result: 'pass' | 'fail';
  readonly verifiedAt: string;
  readonly keyVersion: string;
  readonly overallRatio: number;
  readonly taskId: string;
  readonly agentId: string | null;
  readonly text: string;
  #response: SignedResponse<VerificationResponse> | undefined = undefined;
  constructor(facts: ReceiptFacts, text: string) {
    this.verificationId = facts.verificationId;
    this.result = facts.result;
    this.verifiedAt = facts.verifiedAt;
    this.keyVersion = facts.keyVersion;
    this.overallRatio = facts.overallRatio;
    this.taskId = facts.taskId;
    this.agentId = facts.agentId;
    this.text = text;
  }
  get response(): SignedResponse<VerificationResponse> {
    this.#response ??= JSON.parse(this.text) as SignedResponse<VerificationResponse>;
    return this.#response;
  }
}

export interface ReceiptIssuer {
  /** Throws ApiError('invalid_request') when the schema cannot be compiled. */
  issue(parsed: ParsedRequest, stamp?: ReceiptStamp): IssuedReceipt;
}

export function createReceiptIssuer(options: ReceiptIssuerOptions): ReceiptIssuer {
  const { verifier, attestor, clock, newId, verifierVersion } = options;
  return {
    issue(parsed, stamp) {
      const verifiedAt = rfc3339Seconds(stamp?.verifiedAt ?? clock());
      const verificationId = stamp?.verificationId ?? newId();
      const signer = attestor.signer(verifiedAt);
      const { presigned, facts } = presignReceipt(parsed, { verificationId, verifiedAt }, signer.keyVersion, { verifier, presigner: attestor, verifierVersion });
      const signature = signer.sign(Buffer.from(presigned.input as string, 'utf8')).toString('base64');
      const signed: Record<string, unknown> = presigned.unsigned;
      signed.attestation = attestationBlock(presigned, signature);
      const response = signed as SignedResponse<VerificationResponse>;
      return { ...facts, response, text: JSON.stringify(response) };
    },
  };
}
