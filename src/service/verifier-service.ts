/**
 * @module The application service behind REST and MCP: strict parsing, the free
 * allowance (per client, per UTC day), verification + signing + durable storage
 * of the receipt, reputation and the signed trust score. Transport-free: adapters
 * hand it bodies and client keys; it hands back signed text and coded errors.
 */
import { ApiError } from '../errors.js';
import type { ParsedRequest } from '../core/types.js';
import { rfc3339Seconds } from '../receipts/time.js';
import type { LogCheckpointRef, ReceiptRecord, ReputationPage, Store } from '../store/store.js';
import type { AllowanceInfo, ClientContext, SignedResult, VerifierService } from './types.js';

/** What the receipt issuer returns: the signed response and its exact JSON text. */
export interface IssuedReceipt {
  response: Record<string, unknown>;
  text: string;
  /** The overall ratio, also when a compact receipt does not carry it. */
  overallRatio?: number;
}

export interface ReceiptIssuerLike {
  issue(parsed: ParsedRequest): IssuedReceipt | Promise<IssuedReceipt>;
}

export interface AttestorLike {
  /** Adds `verify` + `attestation` to a response signed under `context`. */
  attach(
    response: Record<string, unknown>,
    options: { context: 'verify' | 'score'; timestamp: string },
  ): Record<string, unknown> | Promise<Record<string, unknown>>;
}

export interface TrustScoreLike {
  score: number;
  inputs: object;
}

export interface VerifierServiceDeps {
  store: Store;
  issuer: ReceiptIssuerLike;
  attestor: AttestorLike;
  /** Strict body parser of the core (SPEC §1). Throws ApiError. */
  parse(body: string | Buffer): ParsedRequest;
  /** Validator for an already-parsed value (MCP arguments). Throws ApiError. */
  parseValue(value: unknown): ParsedRequest;
  /** The trust-score function over an agent's non-test history. */
  computeTrustScore(results: Array<{ result: 'pass' | 'fail'; verifiedAt: string }>, now: Date): TrustScoreLike;
  isTestAgent(agentId: string): boolean;
  clock(): Date;
  /** Free verifications per client per UTC day. */
  freeAllowance: number;
  /** Largest page of reputation history. */
  listCap: number;
  /**
   * The transparency log: integrates what is queued and names the checkpoint that results.
   * When present, the trust score is computed from the receipts in that checkpoint, and
   * reputation and score name it, so anyone can recompute them from the log.
   */
  checkpoint?: () => Promise<LogCheckpointRef>;
}

/** The coded refusal when a client's free allowance is spent; one wording for REST and MCP. */
export function allowanceExhaustedError(allowance: AllowanceInfo): ApiError {
  return new ApiError('free_allowance_exhausted', {
    message: `The free daily allowance of ${allowance.limit} verifications for this client is used up; it resets at ${allowance.resetsAt}.`,
    retryAfter: allowance.retryAfter,
  });
}

const MAX_ID_LENGTH = 200;

function checkAgentId(agentId: string): void {
  if (agentId.length < 1 || agentId.length > MAX_ID_LENGTH) {
    throw new ApiError('invalid_request', {
      fields: [{ field: 'agent_id', problem: 'must be 1-200 characters', fix: 'use the agent_id sent with the verifications' }],
    });
  }
}

function recordOf(issued: IssuedReceipt, parsed: ParsedRequest): ReceiptRecord {
  const r = issued.response;
  const attestation = r.attestation as { key_version?: unknown } | undefined;
  const overall = r.overall as { ratio?: unknown } | undefined;
  const verificationId = r.verification_id;
  const result = r.result;
  const verifiedAt = r.verified_at;
  if (typeof verificationId !== 'string' || (result !== 'pass' && result !== 'fail') || typeof verifiedAt !== 'string') {
    throw new Error('issued receipt lacks verification_id, result or verified_at');
  }
  return {
    verificationId,
    agentId: parsed.request.agent_id,
    taskId: parsed.request.task_id,
    result,
    // Compact receipts carry no scores; the issuer may expose the ratio beside the response.
    overallRatio: typeof overall?.ratio === 'number' ? overall.ratio : (issued.overallRatio ?? (result === 'pass' ? 1 : 0)),
    verifiedAt,
    keyVersion: typeof attestation?.key_version === 'string' ? attestation.key_version : '',
    receipt: issued.text,
  };
}

export function createVerifierService(deps: VerifierServiceDeps): VerifierService {
  const { store } = deps;

  // The day key and the reset instant change once a day: formatted once per day, not per request.
  let today = { start: 0, end: 0, day: '', resetsAt: '' };
  function dayOf(now: Date) {
    const ms = now.getTime();
    if (!(ms >= today.start && ms < today.end)) {
      const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
      const end = start + 86_400_000;
      today = { start, end, day: now.toISOString().slice(0, 10), resetsAt: rfc3339Seconds(new Date(end)) };
    }
    return today;
  }

  function info(state: { allowed: boolean; limit: number; used: number; remaining: number }, now: Date): AllowanceInfo {
    const d = dayOf(now);
    return {
      allowed: state.allowed,
      limit: state.limit,
      used: state.used,
      remaining: state.remaining,
      resetsAt: d.resetsAt,
      retryAfter: Math.max(1, Math.ceil((d.end - now.getTime()) / 1000)),
    };
  }

  return {
    parseRequest(body) {
      return deps.parse(body);
    },

    parseRequestValue(value) {
      return deps.parseValue(value);
    },

    async consumeAllowance(client: ClientContext) {
      const now = deps.clock();
      const state = await store.consumeAllowance(client.clientKey, dayOf(now).day, deps.freeAllowance);
      return info(state, now);
    },

    async peekAllowance(client: ClientContext) {
      const now = deps.clock();
      const state = await store.peekAllowance(client.clientKey, dayOf(now).day, deps.freeAllowance);
      return info(state, now);
    },

    async refundAllowance(client: ClientContext) {
      await store.refundAllowance(client.clientKey, dayOf(deps.clock()).day);
    },

    async issue(parsed: ParsedRequest) {
      const issued = await deps.issuer.issue(parsed);
      return { signed: { response: issued.response, text: issued.text }, record: recordOf(issued, parsed) };
    },

    async verify(parsed: ParsedRequest): Promise<SignedResult> {
      const issued = await deps.issuer.issue(parsed);
      // Durable before anyone sees it: a receipt that reached a client is never lost.
      await store.saveReceipt(recordOf(issued, parsed));
      return { response: issued.response, text: issued.text };
    },

    async score(agentId: string): Promise<SignedResult> {
      checkAgentId(agentId);
      if (deps.isTestAgent(agentId)) {
        throw new ApiError('invalid_request', {
          message: "Agent ids starting with 'test-' are examples: they are recorded but never scored.",
          fields: [{ field: 'agent_id', problem: "starts with 'test-' (example agents are never scored)", fix: 'ask for the score of a real agent id' }],
        });
      }
      // Whole seconds, like verified_at, so the score's as_of and the attestation agree.
      const now = new Date(Math.floor(deps.clock().getTime() / 1000) * 1000);
      const checkpoint = deps.checkpoint ? await deps.checkpoint() : null;
      const results = checkpoint ? await store.logAgentResults(agentId, checkpoint.tree_size) : await store.agentResults(agentId);
      const trust = deps.computeTrustScore(results, now);
      const timestamp = rfc3339Seconds(now);
      const unsigned: Record<string, unknown> = {
        agent_id: agentId,
        score: trust.score,
        inputs: trust.inputs,
        ...(checkpoint ? { log_checkpoint: checkpoint } : {}),
        scored_at: timestamp,
      };
      const response = await deps.attestor.attach(unsigned, { context: 'score', timestamp });
      return { response, text: JSON.stringify(response) };
    },

    async reputation(agentId: string, page: { limit: number; cursor?: string | null }): Promise<ReputationPage> {
      checkAgentId(agentId);
      const limit = Math.max(1, Math.min(deps.listCap, Math.floor(page.limit)));
      // Named before reading: the checkpoint covers every receipt stored before this request.
      const checkpoint = deps.checkpoint ? await deps.checkpoint() : null;
      const result = await store.reputation(agentId, { limit, cursor: page.cursor ?? null });
      return checkpoint ? { ...result, log_checkpoint: checkpoint } : result;
    },

    async getReceipt(verificationId: string) {
      return store.getReceipt(verificationId);
    },
  };
}
