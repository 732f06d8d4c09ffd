/**
 * @module Issuing a receipt: verify a parsed request, assemble the SPEC §4
 * response around the verdict (id, hashes, time, version) and sign it under
 * the verify context. The returned text is exactly what is stored and sent, so
 * the bytes a client receives are the bytes that were signed over.
 */
import { buildResponse } from '../core/response.js';
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

export interface IssuedReceipt {
  response: SignedResponse;
  /** JSON text of `response`: what is stored and returned. */
  text: string;
  /** overall.ratio of the verdict, also for compact responses that omit it. */
  overallRatio: number;
}

export interface ReceiptIssuer {
  /** Throws ApiError('invalid_request') when the schema cannot be compiled. */
  issue(parsed: ParsedRequest): IssuedReceipt;
}

export function createReceiptIssuer(options: ReceiptIssuerOptions): ReceiptIssuer {
  const { verifier, attestor, clock, newId, verifierVersion } = options;
  return {
    issue(parsed) {
      const hashes = computeHashes(parsed);
      const verdict = verifier.verify(parsed, { schemaKey: hashes.schema_hash });
      const verifiedAt = rfc3339Seconds(clock());
      const meta = {
        verification_id: newId(),
        output_hash: hashes.output_hash,
        schema_hash: hashes.schema_hash,
        rules_hash: hashes.rules_hash,
        request_hash: hashes.request_hash,
        verified_at: verifiedAt,
        verifier_version: verifierVersion,
      };
      const unsigned = buildResponse(verdict, meta, parsed.request.detail);
      const response = attestor.attach(unsigned, { context: 'verify', timestamp: verifiedAt });
      return { response, text: JSON.stringify(response), overallRatio: verdict.overall.ratio };
    },
  };
}
