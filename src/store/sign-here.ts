/**
 * @module Sign and save on the calling thread, for the stores without a writer thread of their own
 * (PostgreSQL, and the embedded store writing on the main thread): the receipts code signs the
 * receipt (signVerifyText), then the store stores its signed text like any other receipt. Ed25519
 * is deterministic, so the bytes are the ones the embedded store's writer thread makes.
 */
import type { KeyObject } from 'node:crypto';
import { signVerifyText } from '../receipts/v1/sign-text.js';
import type { ReceiptRecord, ReceiptStore, UnsignedReceiptRecord } from './store.js';

/** The record of a receipt signed here: its `receipt` is the signed text, built once and stored and answered as is. */
function signRecord(record: UnsignedReceiptRecord, key: KeyObject): ReceiptRecord {
  const { text } = signVerifyText(record.unsignedText, record.keyVersion, record.verifiedAt, key, record.input);
  return {
    verificationId: record.verificationId,
    agentId: record.agentId,
    taskId: record.taskId,
    result: record.result,
    overallRatio: record.overallRatio,
    verifiedAt: record.verifiedAt,
    keyVersion: record.keyVersion,
    receipt: text,
  };
}

/**
 * signAndSaveReceipt and consumeAllowanceAndSignAndSaveReceipt of the store `of()` returns: each receipt is
 * signed here, then stored by that store's saveReceipt (alone) or consumeAllowanceAndSaveReceipt (with its unit).
 */
export function signingHere(
  of: () => Pick<ReceiptStore, 'saveReceipt' | 'consumeAllowanceAndSaveReceipt'>,
): Pick<ReceiptStore, 'signAndSaveReceipt' | 'consumeAllowanceAndSignAndSaveReceipt'> {
  return {
    async signAndSaveReceipt(record, key) {
      const signed = signRecord(record, key);
      await of().saveReceipt(signed);
      return signed.receipt;
    },
    async consumeAllowanceAndSignAndSaveReceipt(clientKey, day, limit, record, key) {
      const signed = signRecord(record, key);
      const state = await of().consumeAllowanceAndSaveReceipt(clientKey, day, limit, signed);
      return { ...state, receipt: state.allowed ? signed.receipt : null };
    },
  };
}
