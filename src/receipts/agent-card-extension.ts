/**
 * @module The attestation extension of the A2A agent card (docs/protocol.md#keys): every
 * key the service has ever signed with, with status and validity window, and
 * the request_hash test vectors, so a third party can verify receipts offline
 * and check its own canonicalization.
 */
import type { KeyRing, PublicKeyInfo } from './key-ring.js';
import { requestHashVectors, type RequestHashVector } from './v1/request-hash-vectors.js';

export const ATTESTATION_EXTENSION_PREFIX = 'urn:json-schema-verifier:extension:attestation:';
export const ATTESTATION_EXTENSION_URI = `${ATTESTATION_EXTENSION_PREFIX}v1`;

export interface AttestationExtension {
  uri: string;
  description: string;
  required: false;
  params: {
    publicKeys: PublicKeyInfo[];
    requestHashTestVectors: RequestHashVector[];
  };
}

export function attestationExtension(keyRing: KeyRing): AttestationExtension {
  return {
    uri: ATTESTATION_EXTENSION_URI,
    description:
      'Responses of /verify/* and /score/* carry an Ed25519 attestation over the RFC 8785 (JCS) form of ' +
      '{context, algorithm, key_version, attested_at, response-without-attestation}. publicKeys lists every key ' +
      'ever used (retired keys stay valid for receipts timestamped inside their window); hashes are SHA-256 hex of ' +
      'JCS forms, and requestHashTestVectors lets a verifier check its request canonicalization.',
    required: false,
    params: {
      publicKeys: keyRing.list(),
      requestHashTestVectors: requestHashVectors(),
    },
  };
}
