/**
 * @module Sign and save on the calling thread, for the stores without a writer thread of their own
 * (PostgreSQL, and the embedded store writing on the main thread): the receipts code signs the
 * receipt (signVerifyText), then the store stores its signed text like any other receipt. Ed25519
 * is deterministic, so the bytes are the ones the embedded store's writer thread makes.
 */
import type { KeyObject } from 'node:crypto';
import { signVerifyText } from '../receipts/v1/sign-text.js';
import type { AllowanceState, ReceiptRecord, ReceiptStore, UnsignedReceiptRecord } from './store.js';

/** The record of a receipt signed here, and its signature. */
function signRecord(record: UnsignedReceiptRecord, key: KeyObject): { record: ReceiptRecord; signature: string } {
  const { signature, text } = signVerifyText(record.unsignedText, record.keyVersion, record.verifiedAt, key, record.input);
  return {
    record: {
      verificationId: record.verificationId,
      agentId: record.agentId,
      taskId: record.taskId,
      result: record.result,
      overallRatio: record.overallRatio,
      verifiedAt: record.verifiedAt,
      keyVersion: record.keyVersion,
      receipt: text,
    },
    signature,
  };
}

type Saves = Pick<ReceiptStore, 'saveReceipt' | 'consumeAllowanceAndSaveReceipt'>;

/** ReceiptStore.signAndSaveReceipt of `store`: signed here, then stored by its saveReceipt. */
export async function signHereAndSave(store: Saves, record: UnsignedReceiptRecord, key: KeyObject): Promise<string> {
  const signed = signRecord(record, key);
  await store.saveReceipt(signed.record);
  return signed.signature;
}

/** ReceiptStore.consumeAllowanceAndSignAndSaveReceipt of `store`: signed here, then stored with its unit. */
export async function signHereAndSaveWithUnit(
  store: Saves,
  clientKey: string,
  day: string,
  limit: number,
  record: UnsignedReceiptRecord,
  key: KeyObject,
): Promise<AllowanceState & { signature: string | null }> {
  const signed = signRecord(record, key);
  const state = await store.consumeAllowanceAndSaveReceipt(clientKey, day, limit, signed.record);
  return { ...state, signature: state.allowed ? signed.signature : null };
}
