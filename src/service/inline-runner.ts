/**
 * @module The verification runner that works in the calling thread (VERIFY_WORKERS=0).
 * `prepare` does all the work a verification needs — strict parse, validation, schema
 * compilation, evaluation and the response ready to be signed — so that everything
 * that can refuse a request (422, too_complex) happens before anything is reserved;
 * `run`, after admission, only signs. The worker pool's workers use the same
 * `parseVerificationRequest` and `draftReceipt`, so both runners answer alike.
 */
import { parseVerificationRequest } from '../core/request.js';
import { isAllocationFailure } from '../core/schema/exhaustion.js';
import { ApiError, isApiError } from '../errors.js';
import type { Verifier } from '../core/verify.js';
import { draftReceipt, finishReceipt, type IssuedReceipt, type ReceiptDraft, type ReceiptStamp, type UnsignedReceipt } from '../receipts/issue-receipt.js';
import type { SigningKey } from '../receipts/key-ring.js';
import { rfc3339Seconds } from '../receipts/time.js';
import type { Attestor } from '../receipts/v1/attestation.js';
import { failedOf, type PreparedVerification, type VerificationRunner } from './pipeline.js';

export interface InlineRunnerOptions {
  verifier: Pick<Verifier, 'evaluate'>;
  attestor: Pick<Attestor, 'signer' | 'presign'>;
  verifierVersion: string;
  /** Maximum nesting depth of a request (docs/protocol.md#strict-json, default 64). */
  maxDepth: number;
  /** DraftOptions.input of every draft made here (false when the store signs; see ReceiptDraft.input). Default true. */
  signingInput?: boolean;
}

/**
 * The answer when V8 refused an allocation during a verification (a catchable RangeError, before
 * any heap cap): the same `verification_aborted` as a worker stopped at its heap cap, never a 422
 * that would blame the schema. Other errors are returned unchanged. Shared by both runners.
 */
export function abortedByMemory(e: unknown): unknown {
  if (!isAllocationFailure(e)) return e;
  return new ApiError('verification_aborted', {
    message: 'The verification was stopped: it needed more memory than one request may use. Nothing was charged. Make the schema or the output smaller.',
  });
}

/** The pipeline's view of a prepared request. */
export function preparedOf(source: string | Uint8Array, draft: ReceiptDraft): PreparedVerification {
  return {
    operation: 'verify',
    source,
    bodyBytes: typeof source === 'string' ? Buffer.byteLength(source, 'utf8') : source.byteLength,
    taskId: draft.taskId,
    agentId: draft.agentId,
    requestHash: draft.requestHash,
  };
}

/** The stamp as the receipt carries it: verified_at in whole seconds. */
export function stampText(stamp: ReceiptStamp): { verificationId: string; verifiedAt: string } {
  return { verificationId: stamp.verificationId, verifiedAt: rfc3339Seconds(stamp.verifiedAt) };
}

/**
 * The drafts of prepared requests and the keys they were drafted for: run() signs with
 * exactly that key. Shared by both runners.
 */
export function createDraftBook() {
  const drafts = new WeakMap<PreparedVerification, UnsignedReceipt>();
  return {
    keep(prepared: PreparedVerification, draft: ReceiptDraft, signer: SigningKey): PreparedVerification {
      drafts.set(prepared, { draft, signer });
      return prepared;
    },
    /** The draft and its key, handed over once. */
    take(prepared: PreparedVerification): UnsignedReceipt {
      const entry = drafts.get(prepared);
      if (!entry) throw new Error('this request was not prepared by this runner');
      drafts.delete(prepared);
      return entry;
    },
    sign(prepared: PreparedVerification): IssuedReceipt {
      const entry = this.take(prepared);
      return finishReceipt(entry.draft, entry.signer);
    },
  };
}

export function createInlineRunner(options: InlineRunnerOptions): VerificationRunner {
  const book = createDraftBook();
  return {
    async prepare(source, stamp) {
      // The evaluation compiles the schema through the verifier's cache (keyed by schema_hash); a schema
      // that does not compile throws the same 422 there, before anything is reserved.
      const text = stampText(stamp);
      const signer = options.attestor.signer(text.verifiedAt);
      let draft: ReceiptDraft;
      try {
        const parsed = parseVerificationRequest(source, { maxDepth: options.maxDepth });
        draft = draftReceipt(parsed, text, signer.keyVersion, {
          verifier: options.verifier,
          presigner: options.attestor,
          verifierVersion: options.verifierVersion,
          input: options.signingInput,
        });
      } catch (e) {
        const error = abortedByMemory(e);
        if (isApiError(error)) return failedOf(error);
        throw error;
      }
      return book.keep(preparedOf(source, draft), draft, signer);
    },
    async run(prepared) {
      return book.sign(prepared);
    },
    unsigned: (prepared) => book.take(prepared),
    async close() {},
  };
}
