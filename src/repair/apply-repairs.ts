/**
 * @module applyRepairs: turn the `repair` members of a failing verdict's hints
 * (RFC 6902 patches against `submitted_output`, docs/protocol.md#repairs) into a
 * patched request, ready to verify again. Pure and browser-safe (no Node API),
 * so the root entry, the CLI and `agent-output-verifier/client` share it.
 *
 * Only `determined` repairs apply by default: each is the one fix that makes its
 * check pass. `candidate` repairs list alternatives none of which is preferred;
 * with `candidates: true` the first option of each applies. The result is never
 * trusted on its own: callers verify the patched request again.
 */
import { applyPatch, JsonPatchError, type JsonPatchOperation } from '../core/json-patch.js';
import { jsonKey } from '../core/json-equal.js';
import type { Json, Repair } from '../core/types.js';
import { canonicalize } from '../receipts/jcs.js';
import { portableReceiptCrypto } from '../receipts/verify-receipt-portable.js';

export type { JsonPatchOperation } from '../core/json-patch.js';
export type { Repair, RepairOption } from '../core/types.js';

/** What applyRepairs reads of a hint. */
export interface RepairableHint {
  check: string;
  path: string;
  repair?: Repair;
}

/** What applyRepairs reads of a verdict: the full-form response or receipt (the compact form has no hints). */
export interface RepairableVerdict {
  result: 'pass' | 'fail';
  output_hash?: string;
  hints?: readonly RepairableHint[];
  hints_omitted?: number;
}

/**
 * Options of {@link applyRepairs}.
 *
 * @example
 * ```ts
 * import { applyRepairs, type ApplyRepairsOptions } from 'agent-output-verifier';
 *
 * // Also take the first option of candidate repairs; stay under a service's 256 KiB body limit.
 * const options: ApplyRepairsOptions = { candidates: true, maxBodyBytes: 256 * 1024 };
 * const { request: next } = applyRepairs(request, verdict, options);
 * ```
 */
export interface ApplyRepairsOptions {
  /** Also apply the first option of each candidate repair (default false: determined repairs only). */
  candidates?: boolean;
  /**
   * The largest request body, in UTF-8 bytes of its JSON text, a patched request may have
   * (default 1 MiB, the service's default BODY_LIMIT_BYTES). Pass the limit of the service you call.
   */
  maxBodyBytes?: number;
}

/** One repair and what became of it. */
export interface RepairRecord {
  check: string;
  path: string;
  certainty: 'determined' | 'candidate';
  note: string;
  /** The operations applied (or that would have been). */
  patch: JsonPatchOperation[];
  /** Why it was skipped; absent for an applied repair. */
  reason?: 'candidate' | 'duplicate' | 'does_not_apply';
  /** With `does_not_apply`: the patch error. */
  detail?: string;
}

/**
 * What {@link applyRepairs} returns: the patched request and, per repair, whether it applied.
 *
 * @example
 * ```ts
 * import { applyRepairs, type RepairResult } from 'agent-output-verifier';
 *
 * const result: RepairResult<typeof request> = applyRepairs(request, verdict);
 * for (const r of result.skipped) console.log(`${r.check} at ${r.path}: ${r.reason}`);
 * ```
 */
export interface RepairResult<R> {
  /** The request with the patched `submitted_output` (the input itself when nothing applied). */
  request: R;
  applied: RepairRecord[];
  skipped: RepairRecord[];
  /** Hints the verdict's list cap left out: their repairs (if any) are unknown here; verify again to see them. */
  hintsOmitted: number;
  /** UTF-8 bytes of the patched request's JSON text. */
  bodyBytes: number;
}

export type RepairErrorCode = 'body_limit' | 'verdict_mismatch' | 'invalid_request';

/**
 * Thrown by {@link applyRepairs} for a repair that must not go ahead; `code` says which
 * rule it broke (`verdict_mismatch`: the verdict is for another output; `body_limit`: the
 * patched request would be over `maxBodyBytes`; `invalid_request`: no submitted_output).
 *
 * @example
 * ```ts
 * import { applyRepairs, RepairError } from 'agent-output-verifier';
 *
 * try {
 *   applyRepairs(request, verdict, { maxBodyBytes: 64 * 1024 });
 * } catch (e) {
 *   if (e instanceof RepairError && e.code === 'body_limit') console.error(e.message);
 * }
 * ```
 */
export class RepairError extends Error {
  readonly code: RepairErrorCode;
  constructor(code: RepairErrorCode, message: string) {
    super(message);
    this.name = 'RepairError';
    this.code = code;
  }
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const utf8 = new TextEncoder();

/** UTF-8 bytes of a value's JSON text, as a client would send it. */
export function jsonBodyBytes(value: unknown): number {
  return utf8.encode(JSON.stringify(value)).length;
}

/** `output_hash` as the service computes it: SHA-256 of the RFC 8785 form of `submitted_output`. */
export function outputHash(output: unknown): string {
  return portableReceiptCrypto.sha256Hex(canonicalize(output));
}

function isRepair(value: unknown): value is Repair {
  if (value === null || typeof value !== 'object') return false;
  const r = value as Record<string, unknown>;
  if (r.certainty === 'determined') return Array.isArray(r.patch);
  if (r.certainty === 'candidate') return Array.isArray(r.options) && r.options.length > 0 && r.options.every((o) => o !== null && typeof o === 'object' && Array.isArray((o as { patch?: unknown }).patch));
  return false;
}

/**
 * Applies the repairs of `verdict` to `request.submitted_output` and returns the
 * patched request with what was applied and what was skipped. `request` is not
 * changed. Each hint's patch applies whole or not at all; one that no longer
 * applies (an earlier patch removed its target) is skipped, and the same patch
 * from two hints applies once. Throws RepairError when the verdict is for another
 * output (`verdict_mismatch`) or the patched body would exceed `maxBodyBytes`
 * (`body_limit`), naming the repair that crossed it. Pure and browser-safe; the
 * patched request is not trusted on its own: verify it again.
 *
 * @example
 * ```ts
 * import { applyRepairs, createSchemaEngine, createVerifier, validateRequestValue } from 'agent-output-verifier';
 *
 * const verifier = createVerifier({ engine: createSchemaEngine() });
 * const verdict = verifier.evaluate(validateRequestValue(request));
 * if (verdict.result === 'fail') {
 *   const { request: repaired, applied } = applyRepairs(request, verdict);
 *   if (applied.length > 0) console.log(verifier.evaluate(validateRequestValue(repaired)).result);
 * }
 * ```
 */
export function applyRepairs<R extends { submitted_output: unknown }>(request: R, verdict: RepairableVerdict, options: ApplyRepairsOptions = {}): RepairResult<R> {
  if (request === null || typeof request !== 'object' || !('submitted_output' in request)) {
    throw new RepairError('invalid_request', 'the request has no submitted_output');
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (verdict.output_hash !== undefined && verdict.output_hash !== outputHash(request.submitted_output)) {
    throw new RepairError('verdict_mismatch', "the verdict's output_hash is not the hash of this request's submitted_output: its repairs are for another output");
  }
  const applied: RepairRecord[] = [];
  const skipped: RepairRecord[] = [];
  const seen = new Set<string>();
  let output = request.submitted_output;
  let current = request;
  let bodyBytes = jsonBodyBytes(request);

  const hints = (verdict.hints ?? []).filter((h) => isRepair(h.repair));
  // Determined repairs first: a candidate chosen by opt-in then sees the determined fixes in place.
  const ordered = [...hints.filter((h) => h.repair?.certainty === 'determined'), ...hints.filter((h) => h.repair?.certainty === 'candidate')];
  for (const hint of ordered) {
    const repair = hint.repair as Repair;
    const chosen = repair.certainty === 'determined' ? { patch: repair.patch, note: repair.note } : repair.options[0];
    const record: RepairRecord = { check: hint.check, path: hint.path, certainty: repair.certainty, note: chosen.note ?? '', patch: chosen.patch };
    if (repair.certainty === 'candidate' && !options.candidates) {
      skipped.push({ ...record, reason: 'candidate' });
      continue;
    }
    const key = jsonKey(chosen.patch as unknown as Json);
    if (seen.has(key)) {
      skipped.push({ ...record, reason: 'duplicate' });
      continue;
    }
    let next: unknown;
    try {
      next = applyPatch(output, chosen.patch);
    } catch (e) {
      if (!(e instanceof JsonPatchError)) throw e;
      skipped.push({ ...record, reason: 'does_not_apply', detail: e.message });
      continue;
    }
    const candidate = { ...current, submitted_output: next };
    const bytes = jsonBodyBytes(candidate);
    if (bytes > maxBodyBytes) {
      throw new RepairError(
        'body_limit',
        `the repair of ${hint.check} at '${hint.path}' would make the request body ${bytes} bytes, over the limit of ${maxBodyBytes}; nothing was sent`,
      );
    }
    seen.add(key);
    output = next;
    current = candidate;
    bodyBytes = bytes;
    applied.push(record);
  }
  return { request: current, applied, skipped, hintsOmitted: verdict.hints_omitted ?? 0, bodyBytes };
}
