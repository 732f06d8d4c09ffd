/**
 * @module Issuing a receipt: verify a parsed request, assemble the docs/protocol.md#response
 * response around the verdict (id, hashes, time, version) and sign it under
 * the verify context. The returned text is exactly what is stored and sent, so
 * the bytes a client receives are the bytes that were signed over.
 */
import { buildResponse, type VerificationResponse } from '../core/response.js';
import type { Verifier } from '../core/verify.js';
import type { ParsedRequest } from '../core/types.js';
import { computeHashes } from './hashes.js';
import { rfc3339Seconds } from './time.js';
import type { Attestor, SignedResponse } from './v1/attestation.js';

export interface ReceiptIssuerOptions {
  verifier: Pick<Verifier, 'verify'>;
  attestor: Attestor;
  clock: () => Date;
  /** A fresh verification_id (UUID). */
  newId: () => string;
  verifierVersion: string;
}

/** A signed receipt, its exact text, and the facts its store record needs (typed, never re-read from the text). */
export interface IssuedReceipt {
  response: SignedResponse<VerificationResponse>;
  /** JSON text of `response`: what is stored and returned. */
  text: string;
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

/** The identity of a receipt, when the caller assigns it (the service does; the CLI lets the issuer). */
export interface ReceiptStamp {
  verificationId: string;
  verifiedAt: Date;
}

export interface ReceiptIssuer {
  /** Throws ApiError('invalid_request') when the schema cannot be compiled. */
  issue(parsed: ParsedRequest, stamp?: ReceiptStamp): IssuedReceipt;
}

export function createReceiptIssuer(options: ReceiptIssuerOptions): ReceiptIssuer {
  const { verifier, attestor, clock, newId, verifierVersion } = options;
  return {
    issue(parsed, stamp) {
      const hashes = computeHashes(parsed);
      const verdict = verifier.verify(parsed, { schemaKey: hashes.schema_hash });
      const verifiedAt = rfc3339Seconds(stamp?.verifiedAt ?? clock());
      const verificationId = stamp?.verificationId ?? newId();
      const meta = {
        verification_id: verificationId,
        output_hash: hashes.output_hash,
        schema_hash: hashes.schema_hash,
        rules_hash: hashes.rules_hash,
        request_hash: hashes.request_hash,
        verified_at: verifiedAt,
        verifier_version: verifierVersion,
      };
      const unsigned = buildResponse(verdict, meta, parsed.request.detail);
      const response = attestor.attach(unsigned, { context: 'verify', timestamp: verifiedAt });
      return {
        response,
        text: JSON.stringify(response),
        verificationId,
        result: verdict.result,
        verifiedAt,
        keyVersion: response.attestation.key_version,
        overallRatio: verdict.overall.ratio,
        taskId: verdict.task_id,
        agentId: verdict.agent_id,
      };
    },
  };
}
