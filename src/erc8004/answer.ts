/**
 * @module The validator's answer to a request, from the one receipt that carries
 * its request hash: response = the overall ratio × 100 rounded down, 100 only for
 * a pass; responseURI = the receipt's public URL; responseHash = SHA-256 of the
 * receipt's exact bytes (the transparency log's receipt_sha256); tag = a fixed
 * string naming the service's receipts and the registry version it answers.
 */
import { createHash } from 'node:crypto';
import { VALIDATION_REGISTRY_VERSION } from './abi.js';
import type { ReceiptMatch, ValidationAnswer } from './queue-store.js';

/** The tag of every answer: which receipts and which Validation Registry version. */
export const ERC8004_TAG = `agent-output-verifier/receipt-v1/erc8004-validation-${VALIDATION_REGISTRY_VERSION}`;

/** floor(ratio × 100) on the ratio's six decimals (no binary rounding: 0.29 gives 29); a fail never gets 100. */
export function responseScore(result: 'pass' | 'fail', overallRatio: number): number {
  const millionths = Math.min(1_000_000, Math.max(0, Math.round(overallRatio * 1_000_000)));
  const score = Math.floor(millionths / 10_000);
  return result === 'pass' ? score : Math.min(score, 99);
}

export function answerFor(match: ReceiptMatch, publicBaseUrl: string): ValidationAnswer {
  return {
    verificationId: match.verificationId,
    response: responseScore(match.result, match.overallRatio),
    responseUri: `${publicBaseUrl}/verifications/${encodeURIComponent(match.verificationId)}`,
    responseHash: `0x${createHash('sha256').update(match.receipt, 'utf8').digest('hex')}`,
    tag: ERC8004_TAG,
  };
}
