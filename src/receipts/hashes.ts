/**
 * @module The four receipt hashes of docs/protocol.md#hashes: SHA-256 (lowercase hex) of the
 * UTF-8 bytes of the JCS form of the output, the schema, the rules/bounds as
 * supplied, and the whole request with every default filled in (the canonical
 * forms themselves are in canonical-request.ts). The output and schema are
 * canonicalized once each and reused for both their own hash and the request's.
 */
import * as nodeCrypto from 'node:crypto';
import type { ParsedRequest } from '../core/types.js';
import { computeHashesWith, type ReceiptHashes } from './canonical-request.js';

export { canonicalRequest, canonicalRulesAndBounds, type ReceiptHashes } from './canonical-request.js';

// crypto.hash (Node ≥ 20.12) skips the Hash object: several times cheaper for the small inputs hashed per receipt.
const oneShot = (nodeCrypto as { hash?: typeof nodeCrypto.hash }).hash;

/** SHA-256 of the UTF-8 bytes of `text`, lowercase hex. */
export function sha256Hex(text: string): string {
  return oneShot ? oneShot('sha256', text, 'hex') : nodeCrypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

/** All four hashes of a parsed request (docs/protocol.md#hashes). */
export function computeHashes(parsed: ParsedRequest): ReceiptHashes {
  return computeHashesWith(parsed, sha256Hex);
}
