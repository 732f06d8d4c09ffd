/**
 * @module A small in-memory VerifierService and verification runner for the MCP
 * adapter tests: real Ed25519 signatures (src/receipts), a simple allowance
 * counter with refunds, and a canned verdict, behind the real admission pipeline.
 * It lets the adapter be tested without the core; the end-to-end tests run
 * against the real app.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, invalidRequest, isApiError } from '../src/errors.js';
import { parseVerificationRequest } from '../src/core/request.js';
import type { Json, ParsedRequest, Rule } from '../src/core/types.js';
import { RULE_TYPES } from '../src/core/types.js';
import {
  computeHashes,
  createAttestor,
  createStaticKeyRing,
  privateKeyPemFromSeed,
  rfc3339Seconds,
} from '../src/receipts/index.js';
import { finishReceipt, type IssuedReceipt, type ReceiptDraft, type UnsignedReceipt } from '../src/receipts/issue-receipt.js';
import { createAllowancePolicy, createPipeline, failedOf, type AdmissionPolicy, type Pipeline, type PreparedVerification } from '../src/service/pipeline.js';
import type { AllowanceInfo, ClientContext, SignedResult, VerifierService } from '../src/service/types.js';
import { VERSION } from '../src/version.js';

const FIELDS = ['task_id', 'agent_id', 'expected_schema', 'submitted_output', 'strict_content_check', 'bounds', 'rules', 'enforce_rules', 'detail'];

export interface FakeService extends VerifierService {
  /** A pipeline over this service and its canned runner; the policy defaults to the free allowance. */
  pipeline(policy?: AdmissionPolicy): Pipeline;
  /** Strict-enough parse of a request text for the adapter tests. */
  parseRequestValue(value: unknown): ParsedRequest;
  publicKey: string;
  refunds: number;
  verifications: Array<{ agentId: string | null; result: 'pass' | 'fail' }>;
  /** Make the next verify() throw a plain Error (an internal fault). */
  failNextVerify: boolean;
  /** What the last verify() was given. */
  lastParsed: ParsedRequest | null;
}

export function createFakeService(options: { limit: number; baseUrl: string }): FakeService {
  const keyRing = createStaticKeyRing(privateKeyPemFromSeed(new Uint8Array(32).fill(7)), {
    keyVersion: 'test-key-1',
    notBefore: '2020-01-01T00:00:00Z',
  });
  const attestor = createAttestor({ keyRing, serviceName: 'agent-output-verifier', baseUrl: options.baseUrl });
  const used = new Map<string, number>();
  const info = (allowed: boolean, n: number): AllowanceInfo => ({
    allowed,
    limit: options.limit,
    used: n,
    remaining: Math.max(0, options.limit - n),
    resetsAt: '2099-01-01T00:00:00Z',
    retryAfter: 60,
  });

  const service: FakeService = {
    publicKey: keyRing.active().publicKey,
    refunds: 0,
    verifications: [],
    failNextVerify: false,
    lastParsed: null,

    pipeline(policy?: AdmissionPolicy): Pipeline {
      const parsedOf = new WeakMap<PreparedVerification, { parsed: ParsedRequest; stamp: { verificationId: string; verifiedAt: Date } }>();
      const issueFor = (prepared: PreparedVerification): UnsignedReceipt => {
        const entry = parsedOf.get(prepared);
        if (!entry) throw new Error('not prepared here');
        return issue(entry.parsed, entry.stamp);
      };
      return createPipeline({
        service,
        policy: policy ?? createAllowancePolicy(service),
        clock: () => new Date(),
        newId: randomUUID,
        runner: {
          async prepare(source, stamp) {
            // The core's strict parser, as the real runner uses it (duplicate keys, __proto__ as an ordinary key).
            let parsed: ParsedRequest;
            try {
              parsed = parseVerificationRequest(source);
            } catch (e) {
              if (isApiError(e)) return failedOf(e);
              throw e;
            }
            const prepared: PreparedVerification = {
              operation: 'verify',
              source,
              bodyBytes: typeof source === 'string' ? Buffer.byteLength(source) : source.byteLength,
              taskId: parsed.request.task_id,
              agentId: parsed.request.agent_id,
              requestHash: computeHashes(parsed).request_hash,
            };
            parsedOf.set(prepared, { parsed, stamp });
            return prepared;
          },
          async run(prepared) {
            return sign(issueFor(prepared));
          },
          unsigned: (prepared) => issueFor(prepared),
          async close() {},
        },
      });
    },

    parseRequestValue(value: unknown): ParsedRequest {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw invalidRequest([{ field: '(body)', problem: 'must be an object', fix: 'send a JSON object' }]);
      }
      const v = value as Record<string, Json>;
      const problems = Object.keys(v)
        .filter((k) => !FIELDS.includes(k))
        .map((k) => ({ field: k, problem: 'unknown field', fix: 'remove it' }));
      if (typeof v.task_id !== 'string') problems.push({ field: 'task_id', problem: 'is required', fix: 'send a task_id string' });
      const rules = Array.isArray(v.rules) ? v.rules : [];
      rules.forEach((r, i) => {
        const type = (r as { type?: unknown }).type;
        if (!RULE_TYPES.includes(type as never)) {
          problems.push({ field: `rules[${i}].type`, problem: 'unknown rule type', fix: `use one of ${RULE_TYPES.join(', ')}` });
        }
      });
      if (problems.length > 0) throw invalidRequest(problems);
      const fullRules: Rule[] | null =
        rules.length === 0
          ? null
          : rules.map((r) => ({
              equals_field: null, equals: null, other_field: null, value: null, in_field: null, values: null,
              tolerance: 1e-9, if_present: false, ...(r as object),
            }) as Rule);
      return {
        request: {
          task_id: v.task_id as string,
          agent_id: (v.agent_id as string | undefined) ?? null,
          expected_schema: v.expected_schema,
          submitted_output: v.submitted_output,
          strict_content_check: v.strict_content_check === true,
          bounds: null,
          rules: fullRules,
          enforce_rules: v.enforce_rules === true,
          detail: v.detail === 'compact' ? 'compact' : 'full',
        },
        suppliedBounds: v.bounds ?? null,
        suppliedRules: v.rules ?? null,
        integrity: { duplicateKeys: [], unsafeIntegers: [] },
      };
    },

    async consumeAllowance(client: ClientContext) {
      const n = used.get(client.clientKey) ?? 0;
      if (n >= options.limit) return info(false, n);
      used.set(client.clientKey, n + 1);
      return info(true, n + 1);
    },
    async peekAllowance(client: ClientContext) {
      const n = used.get(client.clientKey) ?? 0;
      return info(n < options.limit, n);
    },
    async refundAllowance(client: ClientContext) {
      service.refunds += 1;
      used.set(client.clientKey, Math.max(0, (used.get(client.clientKey) ?? 0) - 1));
    },

    async takeAllowance(client: ClientContext, units: number) {
      const n = used.get(client.clientKey) ?? 0;
      if (n + units > options.limit) return info(false, n);
      used.set(client.clientKey, n + units);
      return info(true, n + units);
    },
    async refundAllowanceUnits(client: ClientContext, units: number) {
      service.refunds += units;
      used.set(client.clientKey, Math.max(0, (used.get(client.clientKey) ?? 0) - units));
    },

    async saveReceipt(unsigned: UnsignedReceipt) {
      return sign(unsigned);
    },
    async consumeAllowanceAndSave(client: ClientContext, unsigned: UnsignedReceipt) {
      const allowance = await service.consumeAllowance(client);
      return { allowance, receipt: allowance.allowed ? sign(unsigned) : null };
    },
    async saveReceipts() {},
    unscorable(agentId: string) {
      if (agentId.length > 0 && agentId.length <= 200) return null;
      return new ApiError('invalid_request', { fields: [{ field: 'agent_id', problem: 'must be 1-200 characters', fix: 'send a real id' }] });
    },



    async score(agentId: string): Promise<SignedResult> {
      if (agentId.length === 0 || agentId.length > 200) {
        throw new ApiError('invalid_request', { fields: [{ field: 'agent_id', problem: 'must be 1-200 characters', fix: 'send a real id' }] });
      }
      const mine = service.verifications.filter((v) => v.agentId === agentId);
      const timestamp = rfc3339Seconds(new Date());
      const response = attestor.attach(
        { agent_id: agentId, score: mine.length * 10, inputs: { verifications: mine.length }, scored_at: timestamp },
        { context: 'score', timestamp },
      );
      return { response, text: JSON.stringify(response) };
    },

    async reputation() {
      throw new Error('not used');
    },
    async getReceipt() {
      return null;
    },
  };
  function issue(parsed: ParsedRequest, stamp: { verificationId: string; verifiedAt: Date }): UnsignedReceipt {
    if (service.failNextVerify) {
      service.failNextVerify = false;
      throw new Error('disk on fire at /var/secret/path');
    }
    service.lastParsed = parsed;
    const verifiedAt = rfc3339Seconds(stamp.verifiedAt);
    const result = 'pass' as const;
    const hashes = computeHashes(parsed);
    const signer = attestor.signer(verifiedAt);
    const presigned = attestor.presign(
      {
        summary: { result, blocking_checks: [], warnings: 0 },
        next_actions: [{ action: 'attach_receipt', for: 'seller' }],
        result,
        verification_id: stamp.verificationId,
        task_id: parsed.request.task_id,
        agent_id: parsed.request.agent_id,
        output_hash: hashes.output_hash,
        schema_hash: hashes.schema_hash,
        rules_hash: hashes.rules_hash,
        verified_at: verifiedAt,
        verifier_version: VERSION,
        enforce_rules: parsed.request.enforce_rules,
        strict_content_check: parsed.request.strict_content_check,
      },
      { context: 'verify', timestamp: verifiedAt, keyVersion: signer.keyVersion },
    );
    service.verifications.push({ agentId: parsed.request.agent_id, result });
    const draft: ReceiptDraft = {
      verificationId: stamp.verificationId,
      result,
      verifiedAt,
      keyVersion: signer.keyVersion,
      overallRatio: 1,
      taskId: parsed.request.task_id,
      agentId: parsed.request.agent_id,
      input: presigned.input,
      unsignedText: presigned.text,
      requestHash: hashes.request_hash,
    };
    return { draft, signer };
  }
  const sign = (unsigned: UnsignedReceipt): IssuedReceipt => finishReceipt(unsigned.draft, unsigned.signer);
  return service;
}
