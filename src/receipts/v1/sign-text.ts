/**
 * @module Signing a `verify` response given as its unsigned JSON text (a presigned `text`): the
 * signing input derived from the text, the Ed25519 signature, and the signed text. This is what the
 * SQLite writer thread runs as it stores a receipt (src/store/sqlite-writer-worker.ts), so only the
 * text crosses to it and the canonical walk is done there, by the same canonicalizer (jcs.ts) and
 * envelope (attestation.ts) the HTTP thread's attestor uses.
 */
import { sign, type KeyObject } from 'node:crypto';
import { signedResponseText, signingInputOfText } from './attestation.js';

/**
 * The signature (standard base64) of a `verify` response's unsigned text, and the signed response's text.
 * `input`: its signing input when already made (a draft's; the same bytes), else derived from the text.
 */
export function signVerifyText(
  unsignedText: string,
  keyVersion: string,
  timestamp: string,
  key: KeyObject,
  input = signingInputOfText(unsignedText, 'verify', keyVersion, timestamp),
): { signature: string; text: string } {
  const signature = sign(null, Buffer.from(input, 'utf8'), key).toString('base64');
  return { signature, text: signedResponseText(unsignedText, keyVersion, timestamp, signature) };
}
