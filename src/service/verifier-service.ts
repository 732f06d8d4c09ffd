/**
 * @module The application service behind the admission pipeline: the free
 * allowance (per client, per UTC day), durable storage of receipts, reputation and
 * the signed trust score. Transport-free: it takes client keys and agent ids and
 * hands back signed text and coded errors.
 */
import { ApiError, invalidRequest } from '../errors.js';
import { identifierProblem } from '../core/request.js';
import type { KeyObject } from 'node:crypto';
import { checkDraftKey, finishReceipt, storedReceipt, type UnsignedReceipt } from '../receipts/issue-receipt.js';
import { keyObjectOf } from '../receipts/key-ring.js';
import { rfc3339Seconds } from '../receipts/time.js';
import type { CheckpointRef } from '../log/index.js';
import type { TransparencyLogStore } from '../store/log-store.js';
import type { AllowanceStore, ReceiptStore, ReputationPage } from '../store/store.js';
import { receiptRecord } from './pipeline.js';
import type { AllowanceInfo, ClientContext, SignedResult, VerifierService } from './types.js';

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

/** The store ports the service uses: the allowance, the receipts, and the logged history a score is computed from. */
export type VerifierServiceStore = AllowanceStore & ReceiptStore & Pick<TransparencyLogStore, 'logAgentResults'>;

export interface VerifierServiceDeps {
  store: VerifierServiceStore;
  attestor: AttestorLike;
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
  checkpoint?: () => Promise<CheckpointRef>;
}

/**
 * The private key of the key this draft was made for, handed to the store that signs and stores it; undefined
 * for a signer that is not a key ring's (it signs where it is: see keyObjectOf).
 */
function signingKeyOf(unsigned: UnsignedReceipt): KeyObject | undefined {
  checkDraftKey(unsigned.draft, unsigned.signer);
  return keyObjectOf(unsigned.signer);
}

function agentIdError(agentId: string): ApiError | null {
  const problem = identifierProblem('agent_id', agentId);
  return problem ? invalidRequest([problem]) : null;
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

  function unscorable(agentId: string): ApiError | null {
    const invalid = agentIdError(agentId);
    if (invalid) return invalid;
    if (!deps.isTestAgent(agentId)) return null;
    return new ApiError('invalid_request', {
      message: "Agent ids starting with 'test-' are examples: they are recorded but never scored.",
      fields: [{ field: 'agent_id', problem: "starts with 'test-' (example agents are never scored)", fix: 'ask for the score of a real agent id' }],
    });
  }

  return {
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

    async takeAllowance(client: ClientContext, units: number) {
      const now = deps.clock();
      const state = await store.takeAllowance(client.clientKey, dayOf(now).day, deps.freeAllowance, units);
      return info(state, now);
    },

    async refundAllowanceUnits(client: ClientContext, units: number) {
      await store.refundAllowanceUnits(client.clientKey, dayOf(deps.clock()).day, units);
    },

    // Durable before anyone sees it: a receipt that reached a client is never lost. The store signs the
    // receipt as it stores it (the embedded store on its writer thread); Ed25519 is deterministic, so the
    // bytes are the same wherever the signature is made.
    async saveReceipt(unsigned: UnsignedReceipt) {
      const key = signingKeyOf(unsigned);
      if (key === undefined) {
        const receipt = finishReceipt(unsigned.draft, unsigned.signer);
        await store.saveReceipt(receiptRecord(receipt));
        return receipt;
      }
      return storedReceipt(unsigned.draft, await store.signAndSaveReceipt(unsigned.draft, key));
    },

    async consumeAllowanceAndSave(client: ClientContext, unsigned: UnsignedReceipt) {
      const now = deps.clock();
      const day = dayOf(now).day;
      const key = signingKeyOf(unsigned);
      if (key === undefined) {
        const receipt = finishReceipt(unsigned.draft, unsigned.signer);
        const state = await store.consumeAllowanceAndSaveReceipt(client.clientKey, day, deps.freeAllowance, receiptRecord(receipt));
        return { allowance: info(state, now), receipt: state.allowed ? receipt : null };
      }
      const state = await store.consumeAllowanceAndSignAndSaveReceipt(client.clientKey, day, deps.freeAllowance, unsigned.draft, key);
      return { allowance: info(state, now), receipt: state.receipt !== null ? storedReceipt(unsigned.draft, state.receipt) : null };
    },

    saveReceipts(records) {
      // One transaction: a batch is stored whole or not at all, before any of it is sent.
      return store.saveReceipts(records);
    },

    unscorable,

    async score(agentId: string): Promise<SignedResult> {
      const refused = unscorable(agentId);
      if (refused) throw refused;
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
      const invalid = agentIdError(agentId);
      if (invalid) throw invalid;
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
