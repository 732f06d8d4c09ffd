/**
 * @module What a buyer is told when a facilitator (or the chain behind it) refuses or fails a
 * payment: a stable reason code and one sentence. The facilitator's own text is for the operator
 * only — from the built-in facilitator it is a library exception naming the contract call with
 * every argument, the settling account, a documentation URL and the library's version; from a
 * hosted one, whatever it chose to say. It goes to the server log and the payment ledger, never
 * into a response. Every refusal and failed settlement the gate answers with, and the built-in
 * facilitator's HTTP routes, pass through here.
 */
import type { SettleResponse, VerifyResponse } from '@x402/core/types';

/** A reason code as the x402 packages spell them (`invalid_exact_evm_insufficient_balance`). */
const REASON_RE = /^[a-z][a-z0-9_]{0,95}$/;
/** A transaction hash (EVM) or signature (Solana, base58), nothing else. */
const TRANSACTION_RE = /^(?:0x[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{32,100})$/;
/** A payer address (EVM hex or Solana base58). */
const PAYER_RE = /^(?:0x[0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$/;
/** Most characters of a facilitator's text kept in the ledger. */
const MAX_DETAIL_CHARS = 4000;

/** The reason to show: the facilitator's code when it is one, else `fallback`. */
export function publicReason(raw: unknown, fallback: string): string {
  return typeof raw === 'string' && REASON_RE.test(raw) ? raw : fallback;
}

/** Sentences by what the reason code says, most specific first. */
const SENTENCES: ReadonlyArray<[RegExp, string]> = [
  [/insufficient_(balance|funds)|exceeds_balance/, "The payer's balance is too low for this payment."],
  [/valid_before|expired/, 'The payment authorization has expired.'],
  [/valid_after/, 'The payment authorization is not valid yet.'],
  [/nonce_already_used|already_used|used_or_canceled/, 'The payment authorization was already used.'],
  [/signature/, 'The payment signature is not valid.'],
  [/(recipient|value|amount|network|token|mint|asset)_[a-z_]*mismatch|authorization_value|scheme/, 'The payment does not match what was asked for (amount, recipient, network or asset).'],
  [/transaction_failed|reverted|simulation_failed|transfer_event/, 'The transfer did not go through on chain.'],
];

/** One sentence for a reason code; `settle` when it ended a settlement, `verify` when it refused a payment. */
export function reasonSentence(reason: string, step: 'verify' | 'settle'): string {
  for (const [re, sentence] of SENTENCES) if (re.test(reason)) return sentence;
  return step === 'verify' ? 'The facilitator did not accept the payment.' : 'The settlement did not go through.';
}

/** The ledger's (and the log's) record of a facilitator's answer: its reason and its own text, bounded. */
export function facilitatorDetail(reason: unknown, text: unknown): string {
  const r = typeof reason === 'string' && reason.length > 0 ? reason : 'unknown';
  const t = typeof text === 'string' && text.length > 0 ? `: ${text}` : '';
  return `${r}${t}`.slice(0, MAX_DETAIL_CHARS);
}

/**
 * A failed settlement as a buyer may see it (PAYMENT-RESPONSE, the 402 body's `settlement`, MCP
 * `_meta`): the reason code and its sentence, the transaction only when it is a hash, the network
 * asked for and the payer only when it is an address — none of the facilitator's own text.
 */
export function publicSettlement(settlement: SettleResponse | null, reason: string, network: string): SettleResponse | null {
  if (settlement === null) return null;
  const transaction = typeof settlement.transaction === 'string' && TRANSACTION_RE.test(settlement.transaction) ? settlement.transaction : '';
  const payer = typeof settlement.payer === 'string' && PAYER_RE.test(settlement.payer) ? settlement.payer : undefined;
  return {
    success: false,
    errorReason: reason,
    errorMessage: reasonSentence(reason, 'settle'),
    transaction,
    network: network as SettleResponse['network'],
    ...(payer ? { payer } : {}),
  };
}

/** A facilitator's verify answer as the built-in facilitator's routes send it: `invalidMessage` is the sentence. */
export function publicVerifyResponse(response: VerifyResponse): VerifyResponse {
  if (response.isValid) return response;
  const reason = publicReason(response.invalidReason, 'payment_verification_failed');
  const { invalidMessage: _dropped, ...rest } = response;
  return { ...rest, invalidReason: reason, invalidMessage: reasonSentence(reason, 'verify') };
}

/** A facilitator's settle answer as the built-in facilitator's routes send it (a success unchanged). */
export function publicSettleResponse(response: SettleResponse): SettleResponse {
  if (response.success) return response;
  const reason = publicReason(response.errorReason, 'settlement_failed');
  const { errorMessage: _dropped, ...rest } = response;
  return { ...rest, errorReason: reason, errorMessage: reasonSentence(reason, 'settle') };
}
