/**
 * @module ERC-8004 validator mode: watches the Validation Registry for
 * ValidationRequest events addressed to the validator, queues each one in the
 * store, and answers it from the receipt whose request_hash it names. It never
 * fetches a requestURI: the only remote is the configured RPC endpoint.
 *
 * A request becomes a row (new → queued → nonced → signed → confirmed, or
 * skipped / failed with a reason). Each step is stored before the next one acts
 * on the chain: a nonce is taken before signing, signed bytes are stored before
 * they are sent, and a row keeps its nonce; so after a crash, or with several
 * instances sharing a PostgreSQL store, the worst case is the same bytes sent
 * again, which the chain accepts once. Everything runs off the request path: an
 * unreachable or reverting registry delays answers, never verifications.
 */
import { randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import { answerFor } from './answer.js';
import { MAX_LOG_RANGE, type ValidatorChain } from './chain.js';
import type { ValidationAnswer, ValidationPatch, ValidationQueueStore, ValidationRow, ValidationState } from './queue-store.js';

export interface Erc8004ValidatorOptions {
  queue: ValidationQueueStore;
  chain: ValidatorChain;
  registry: Hex;
  publicBaseUrl: string;
  /** How often the chain is polled and due rows are worked on (ms). */
  pollMs: number;
  /** Blocks a request must be under before it is read. */
  confirmations: number;
  /** First block when no scan is recorded; null: the chain head. */
  startBlock: number | null;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  clock?: () => number;
  /** How long a claimed row stays this instance's (ms; default 30 s). */
  leaseMs?: number;
  /** Reverted estimates or transactions before a row is given up (default 8). */
  maxReverts?: number;
  /** How long a receipt held by an unsettled payment is waited for (ms; default 1 h). */
  waitPendingMs?: number;
}

export interface Erc8004Status {
  registry: string;
  validator: string;
  chain_id: number | null;
  /** Next block to scan. */
  next_block: number | null;
  last_scan_at: string | null;
  /** Last error of the watcher (RPC unreachable, …), null once a scan succeeds. */
  last_error: string | null;
  counts: Partial<Record<ValidationState, number>>;
  /** Requests not answered, and why (newest first). */
  unanswered: Array<{ request_hash: string; agent_id: string; state: ValidationState; reason: string | null; request_block: number; request_tx: string }>;
  /** Logs that were not read as requests (newest first, this process only). */
  ignored_logs: Array<{ block: number | null; transaction: string | null; reason: string }>;
}

export interface Erc8004Validator {
  start(): void;
  /** Stop polling and wait for the pass in progress. */
  stop(): Promise<void>;
  /** One watch pass and one work pass, now (tests and start-up). */
  tick(): Promise<void>;
  status(): Promise<Erc8004Status>;
}

const MAX_ROWS_PER_PASS = 50;
const MAX_IGNORED = 50;

/** Reverted (the registry refused), as opposed to a transport error worth retrying as long as it takes. */
function isRevert(e: unknown): boolean {
  const text = `${e instanceof Error ? e.message : String(e)} ${(e as { details?: string }).details ?? ''}`;
  return /revert|execution reverted|ContractFunctionExecutionError/i.test(text);
}

/** A short, key-free description of an error for the status route. */
function describe(e: unknown): string {
  const m = e instanceof Error ? (e as { shortMessage?: string }).shortMessage ?? e.message : String(e);
  return m.split('\n')[0]!.slice(0, 300);
}

export function createErc8004Validator(options: Erc8004ValidatorOptions): Erc8004Validator {
  const { queue, chain, registry } = options;
  const now = options.clock ?? (() => Date.now());
  const owner = randomUUID();
  const leaseMs = options.leaseMs ?? 30_000;
  const maxReverts = options.maxReverts ?? 8;
  const waitPendingMs = options.waitPendingMs ?? 3_600_000;
  const reg = registry.toLowerCase();
  const cursorKey = `${reg}:${chain.address.toLowerCase()}`;
  const ignored: Erc8004Status['ignored_logs'] = [];
  let lastError: string | null = null;
  let lastScanAt: string | null = null;
  let knownChainId: number | null = null;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;

  const backoff = (attempts: number) => Math.min(60_000, options.pollMs * 2 ** Math.min(attempts, 10));

  async function watch(): Promise<void> {
    const head = (await chain.blockNumber()) - options.confirmations;
    if (head < 0) return;
    let from = await queue.erc8004Cursor(cursorKey);
    if (from === null) {
      from = options.startBlock ?? head;
      await queue.erc8004SetCursor(cursorKey, from);
    }
    while (from <= head && !stopped) {
      const to = Math.min(head, from + MAX_LOG_RANGE - 1);
      const logs = await chain.requestLogs(from, to);
      for (const log of logs) {
        if (!log.ok) {
          ignored.unshift({ block: log.blockNumber, transaction: log.transactionHash, reason: log.reason });
          ignored.length = Math.min(ignored.length, MAX_IGNORED);
          options.log.warn({ block: log.blockNumber, transaction: log.transactionHash }, `erc8004: ignored a log: ${log.reason}`);
          continue;
        }
        const fresh = await queue.erc8004Enqueue(
          { registry: reg, requestHash: log.requestHash, agentId: log.agentId.toString(), requestBlock: log.blockNumber, requestTx: log.transactionHash },
          now(),
        );
        if (fresh) options.log.info({ requestHash: log.requestHash, block: log.blockNumber }, 'erc8004: validation request queued');
      }
      await queue.erc8004SetCursor(cursorKey, to + 1);
      from = to + 1;
    }
    lastScanAt = new Date(now()).toISOString();
  }

  /** Change the claimed row; false when another instance has taken it over. */
  const update = (row: ValidationRow, patch: ValidationPatch) => queue.erc8004Update(row.registry, row.requestHash, owner, patch, now());

  async function skip(row: ValidationRow, reason: string): Promise<void> {
    await update(row, { state: 'skipped', reason });
    options.log.warn({ requestHash: row.requestHash, agentId: row.agentId }, `erc8004: request not answered: ${reason}`);
  }

  /** new / waiting: find the one receipt the request names. */
  async function resolve(row: ValidationRow): Promise<ValidationRow | null> {
    const hash = row.requestHash.slice(2);
    const matches = await queue.erc8004ReceiptsFor(hash, 2);
    if (matches.length > 1) {
      await skip(row, 'several receipts carry this request_hash');
      return null;
    }
    if (matches.length === 0) {
      if (await queue.erc8004PendingFor(hash)) {
        if (now() - Date.parse(row.createdAt) > waitPendingMs) await skip(row, 'its receipt waits for a payment that did not settle in time');
        else await update(row, { state: 'waiting', reason: 'its receipt waits for its payment to settle', nextAttemptMs: now() + options.pollMs });
        return null;
      }
      await skip(row, row.state === 'waiting' ? 'its receipt was voided: the payment did not settle' : 'no receipt carries this request_hash');
      return null;
    }
    const answer = answerFor(matches[0]!, options.publicBaseUrl);
    if (!(await update(row, { state: 'queued', reason: null, answer }))) return null;
    return { ...row, state: 'queued', reason: null, answer };
  }

  /** Already answered on chain with our answer (a crash after the send, or a restored database): nothing to send. */
  async function answeredOnChain(row: ValidationRow, answer: ValidationAnswer): Promise<boolean> {
    const status = await chain.registryStatus(row.requestHash as Hex);
    return status !== null && status.validator.toLowerCase() === chain.address.toLowerCase() && status.responseHash.toLowerCase() === answer.responseHash.toLowerCase();
  }

  async function reverted(row: ValidationRow, e: unknown, clearNonce: boolean): Promise<void> {
    const attempts = row.attempts + 1;
    const reason = `the registry refused the answer: ${describe(e)}`;
    if (attempts >= maxReverts) {
      await update(row, { state: 'failed', reason, attempts, clearNonce });
      options.log.error({ requestHash: row.requestHash }, `erc8004: gave up answering: ${reason}`);
    } else {
      await update(row, { state: clearNonce ? 'queued' : row.state, reason, attempts, clearNonce, nextAttemptMs: now() + backoff(attempts) });
    }
  }

  /** Move one claimed row as far as it goes now. */
  async function work(claimed: ValidationRow): Promise<void> {
    let row: ValidationRow | null = claimed;
    if (row.state === 'new' || row.state === 'waiting') row = await resolve(row);
    if (!row || !row.answer) return;
    const answer = row.answer;
    const me = chain.address.toLowerCase();
    if (row.state === 'nonced' && row.sender !== me) {
      // Given a nonce of another key (the validator key was changed) and never signed: answer with this key.
      if (await update(row, { state: 'queued', clearNonce: true })) await work({ ...row, state: 'queued', sender: null, nonce: null });
      return;
    }

    if (row.state === 'queued') {
      if (await answeredOnChain(row, answer)) {
        await update(row, { state: 'confirmed', reason: null });
        return;
      }
      let gas: bigint;
      try {
        gas = await chain.estimate(row.requestHash as Hex, answer);
      } catch (e) {
        if (isRevert(e)) return reverted(row, e, false);
        throw e;
      }
      const nonce = await queue.erc8004AssignNonce(row.registry, row.requestHash, owner, chain.address.toLowerCase(), await chain.nonce('pending'), now());
      if (nonce === null) return;
      row = { ...row, state: 'nonced', nonce, sender: chain.address.toLowerCase() };
      const signed = await chain.sign(row.requestHash as Hex, answer, nonce, gas);
      // Stored before sent: whatever happens next, only these bytes can carry this nonce out.
      if (!(await update(row, { state: 'signed', rawTx: signed.raw, txHash: signed.hash }))) return;
      row = { ...row, state: 'signed', rawTx: signed.raw, txHash: signed.hash };
    } else if (row.state === 'nonced') {
      // Taken but never stored as signed bytes, so never sent: sign again with the same nonce.
      let gas: bigint;
      try {
        gas = await chain.estimate(row.requestHash as Hex, answer);
      } catch (e) {
        if (!isRevert(e)) throw e;
        // The nonce must still be used; an answer that reverts uses it and is retried after.
        gas = 200_000n;
      }
      const signed = await chain.sign(row.requestHash as Hex, answer, row.nonce!, gas);
      if (!(await update(row, { state: 'signed', rawTx: signed.raw, txHash: signed.hash }))) return;
      row = { ...row, state: 'signed', rawTx: signed.raw, txHash: signed.hash };
    }

    if (row.state === 'signed') {
      const mined = await chain.receipt(row.txHash as Hex);
      if (!mined) await chain.send(row.rawTx as Hex);
      const outcome = mined ?? (await chain.receipt(row.txHash as Hex));
      if (outcome?.success) {
        await update(row, { state: 'confirmed', reason: null, answerBlock: outcome.blockNumber });
        options.log.info({ requestHash: row.requestHash, transaction: row.txHash, block: outcome.blockNumber, response: answer.response }, 'erc8004: answered');
        return;
      }
      if (outcome && !outcome.success) return reverted(row, new Error('transaction reverted'), true);
      // Not mined yet. If the nonce has been used by another transaction, these bytes can never be mined.
      if (row.sender === me && (await chain.nonce('latest')) > row.nonce!) {
        const again = await chain.receipt(row.txHash as Hex);
        if (again) return work({ ...row, state: 'signed' });
        if (await answeredOnChain(row, answer)) {
          await update(row, { state: 'confirmed', reason: null });
          return;
        }
        await update(row, { state: 'queued', clearNonce: true, reason: 'its nonce was used by another transaction; answered again' });
        return;
      }
      await update(row, { nextAttemptMs: now() + options.pollMs });
    }
  }

  async function workDue(): Promise<void> {
    for (let i = 0; i < MAX_ROWS_PER_PASS && !stopped; i++) {
      const row = await queue.erc8004Claim(reg, owner, now(), leaseMs);
      if (!row) return;
      try {
        await work(row);
      } catch (e) {
        // A transport error: retried with backoff, as long as it takes (the row keeps its state and nonce).
        const attempts = row.attempts + 1;
        await update(row, { reason: describe(e), attempts, nextAttemptMs: now() + backoff(attempts) }).catch(() => undefined);
        options.log.warn({ requestHash: row.requestHash, err: describe(e) }, 'erc8004: answer step failed (retried)');
      } finally {
        // Leased only while worked on: after a crash, only a row caught mid-step waits for its lease to run out.
        await queue.erc8004Release(row.registry, row.requestHash, owner).catch(() => undefined);
      }
    }
  }

  async function tick(): Promise<void> {
    try {
      knownChainId ??= await chain.chainId();
      await watch();
      lastError = null;
    } catch (e) {
      lastError = describe(e);
      options.log.warn({ err: lastError }, 'erc8004: watching the registry failed (retried)');
    }
    try {
      await workDue();
    } catch (e) {
      options.log.warn({ err: describe(e) }, 'erc8004: working the queue failed (retried)');
    }
  }

  const loop = () => {
    if (stopped) return;
    running = tick().finally(() => {
      running = null;
      if (!stopped) {
        timer = setTimeout(loop, options.pollMs);
        timer.unref();
      }
    });
  };

  return {
    start() {
      if (timer || running) return;
      stopped = false;
      loop();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await running;
    },
    async tick() {
      await (running ?? Promise.resolve());
      await tick();
    },
    async status() {
      const [counts, unanswered, nextBlock] = await Promise.all([
        queue.erc8004Counts(),
        queue.erc8004List({ states: ['skipped', 'failed', 'waiting'], limit: 50 }),
        queue.erc8004Cursor(cursorKey),
      ]);
      return {
        registry: reg,
        validator: chain.address,
        chain_id: knownChainId,
        next_block: nextBlock,
        last_scan_at: lastScanAt,
        last_error: lastError,
        counts,
        unanswered: unanswered.map((r) => ({ request_hash: r.requestHash, agent_id: r.agentId, state: r.state, reason: r.reason, request_block: r.requestBlock, request_tx: r.requestTx })),
        ignored_logs: [...ignored],
      };
    },
  };
}
