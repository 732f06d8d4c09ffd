/**
 * @module Receipt checking for the receipt page and the playground: the package's offline
 * verifier for any runtime (`agent-output-verifier/receipts`: pure-JS @noble Ed25519 and
 * SHA-256), with its step-by-step trace for display.
 * WebCrypto is not used because browsers offer it only in secure contexts, and these pages must
 * also work over plain HTTP on a LAN host. The checks are the ones `aov receipt verify` runs, so
 * the page can never pass a receipt the command line refuses, or the other way round.
 */
import { parseStrictJson, StrictJsonError } from 'agent-output-verifier/json';
import { newReceiptTrace, verifyReceipt, type ReceiptCheck, type ReceiptCheckStep, type ReceiptTrace } from 'agent-output-verifier/receipts';

export interface ReceiptCheckResult {
  valid: boolean;
  /** The first check that failed (absent when valid). */
  failedCheck?: ReceiptCheck;
  message: string;
  keyVersion?: string;
  /** Every check that ran, in order; the last one is the failing one when invalid. */
  steps: ReceiptCheckStep[];
  /** The hashes the receipt states, and those recomputed from the request when one was given. */
  hashes: ReceiptTrace['hashes'];
}

/** Where a parse error is, as 1-based line and column of a UTF-16 offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/** Strict JSON (the service's parser); a readable error with line and column when it is not JSON. */
export function parseJsonText(text: string): { ok: true; value: unknown; duplicateKeys: number } | { ok: false; message: string; line: number; column: number } {
  try {
    const parsed = parseStrictJson(text, { maxDepth: 1000 });
    return { ok: true, value: parsed.value, duplicateKeys: parsed.duplicateKeys.length };
  } catch (e) {
    if (e instanceof StrictJsonError) {
      const { line, column } = lineColumn(text, e.offset);
      return { ok: false, message: e.message, line, column };
    }
    throw e;
  }
}

/**
 * Check a receipt (its JSON text) against the agent card, and — when the
 * request text is given — recompute the hashes from it. Never throws.
 */
export function checkReceipt(receiptText: string, agentCard: unknown, requestText?: string): ReceiptCheckResult {
  // Parsed here first only to say where a syntax error is; the verifier parses the text again itself.
  const parsed = parseJsonText(receiptText);
  if (!parsed.ok) {
    const message = `the receipt is not valid JSON (line ${parsed.line}, column ${parsed.column}: ${parsed.message})`;
    return { valid: false, failedCheck: 'format', message, steps: [{ check: 'format', ok: false, detail: message }], hashes: {} };
  }
  const trace = newReceiptTrace();
  const request = requestText !== undefined && requestText.trim() !== '' ? requestText : undefined;
  // Given an agentCard (whatever it holds), the verifier never throws: a bad card is a failed key_not_found check.
  const outcome = verifyReceipt(receiptText, { agentCard }, { request, trace });
  const { steps, hashes, keyVersion } = trace;
  return outcome.valid
    ? { valid: true, message: 'signature valid', keyVersion: outcome.keyVersion, steps, hashes }
    : { valid: false, failedCheck: outcome.failedCheck, message: outcome.message, keyVersion, steps, hashes };
}
