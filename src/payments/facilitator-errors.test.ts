/** @module Tests of what a buyer is told about a facilitator's refusal or failed settlement (facilitator-errors.ts). */
import { describe, expect, it } from 'vitest';
import { facilitatorDetail, publicReason, publicSettleResponse, publicSettlement, publicVerifyResponse, reasonSentence } from './facilitator-errors.js';

const VIEM_TEXT =
  'An unknown RPC error occurred.\n\nContract Call:\n  address: 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913\n  sender: 0x70997970C51812dc3A010C7d01b50e0d17dc79C8\n\nDocs: https://viem.sh/docs/contract/writeContract\nVersion: viem@2.57.20';

describe('facilitator errors as a buyer sees them', () => {
  it('keeps reason codes and replaces anything else by the fallback', () => {
    expect(publicReason('invalid_exact_evm_insufficient_balance', 'settlement_failed')).toBe('invalid_exact_evm_insufficient_balance');
    for (const raw of [VIEM_TEXT, 'Error: boom', 'Insufficient Balance', '', 'x'.repeat(200), 42, null, undefined]) {
      expect(publicReason(raw, 'settlement_failed')).toBe('settlement_failed');
    }
  });

  it('gives one sentence per kind of reason, and a plain one for codes it does not know', () => {
    expect(reasonSentence('invalid_exact_evm_insufficient_balance', 'settle')).toBe("The payer's balance is too low for this payment.");
    expect(reasonSentence('invalid_exact_evm_payload_authorization_valid_before', 'verify')).toBe('The payment authorization has expired.');
    expect(reasonSentence('invalid_exact_evm_nonce_already_used', 'settle')).toBe('The payment authorization was already used.');
    expect(reasonSentence('invalid_exact_evm_signature', 'verify')).toBe('The payment signature is not valid.');
    expect(reasonSentence('invalid_exact_evm_recipient_mismatch', 'verify')).toMatch(/does not match/);
    expect(reasonSentence('transaction_reverted', 'settle')).toBe('The transfer did not go through on chain.');
    expect(reasonSentence('something_new', 'verify')).toBe('The facilitator did not accept the payment.');
    expect(reasonSentence('something_new', 'settle')).toBe('The settlement did not go through.');
  });

  it('a failed settlement keeps the reason, a sentence, a hash-shaped transaction, the asked network and an address-shaped payer', () => {
    const tx = `0x${'ab'.repeat(32)}`;
    const payer = '0x47cc1233069F85d61361801f1D88a00Af9dbA849';
    const raw = { success: false, errorReason: 'invalid_exact_evm_insufficient_balance', errorMessage: VIEM_TEXT, transaction: tx, network: 'eip155:8453', payer, extensions: { x: VIEM_TEXT } } as const;
    expect(publicSettlement(raw, 'invalid_exact_evm_insufficient_balance', 'eip155:8453')).toEqual({
      success: false,
      errorReason: 'invalid_exact_evm_insufficient_balance',
      errorMessage: "The payer's balance is too low for this payment.",
      transaction: tx,
      network: 'eip155:8453',
      payer,
    });
    const odd = publicSettlement({ ...raw, transaction: VIEM_TEXT, payer: VIEM_TEXT, network: 'evil:1' as never }, 'settlement_failed', 'eip155:8453');
    expect(JSON.stringify(odd)).not.toMatch(/viem|Contract Call|sender/);
    expect(odd).toMatchObject({ transaction: '', network: 'eip155:8453' });
    expect(odd?.payer).toBeUndefined();
    expect(publicSettlement(null, 'settlement_failed', 'eip155:8453')).toBeNull();
  });

  it("the facilitator routes' answers: the sentence instead of the library's text; valid and settled answers unchanged", () => {
    const verdict = publicVerifyResponse({ isValid: false, invalidReason: 'invalid_exact_evm_transaction_simulation_failed', invalidMessage: VIEM_TEXT, payer: '0xabc' });
    expect(verdict).toEqual({ isValid: false, invalidReason: 'invalid_exact_evm_transaction_simulation_failed', invalidMessage: 'The transfer did not go through on chain.', payer: '0xabc' });
    expect(publicVerifyResponse({ isValid: true, payer: '0xabc' })).toEqual({ isValid: true, payer: '0xabc' });
    const settled = publicSettleResponse({ success: false, errorReason: VIEM_TEXT, errorMessage: VIEM_TEXT, transaction: '', network: 'eip155:8453' });
    expect(settled).toEqual({ success: false, errorReason: 'settlement_failed', errorMessage: 'The settlement did not go through.', transaction: '', network: 'eip155:8453' });
    // A pending settlement keeps its reason: the resource server reads it.
    expect(publicSettleResponse({ success: false, errorReason: 'settlement_pending', transaction: '0x1', network: 'eip155:8453' }).errorReason).toBe('settlement_pending');
  });

  it("the ledger keeps the facilitator's reason and its whole text, bounded", () => {
    expect(facilitatorDetail('invalid_exact_evm_insufficient_balance', VIEM_TEXT)).toBe(`invalid_exact_evm_insufficient_balance: ${VIEM_TEXT}`);
    expect(facilitatorDetail(undefined, undefined)).toBe('unknown');
    expect(facilitatorDetail('r', 'x'.repeat(10_000))).toHaveLength(4000);
  });
});
