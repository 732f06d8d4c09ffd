/**
 * @module Two validator instances on one PostgreSQL schema, one validator key, one
 * chain: both see every request and work the shared queue at the same time, and
 * each request is answered exactly once on chain, with one nonce per answer.
 * Also the queue's own guarantees on both stores: a request is queued once, a
 * leased row is not handed to another owner, nonces never repeat.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventLogs, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { validationRegistryAbi } from '../src/erc8004/abi.js';
import { createValidatorChain } from '../src/erc8004/chain.js';
import type { ValidationQueueStore } from '../src/erc8004/queue-store.js';
import { createErc8004Validator, type Erc8004Validator } from '../src/erc8004/validator.js';
import { createPostgresStore, createSqliteStore, type PostgresStore, type SqliteStore } from '../src/store/index.js';
import { HARDHAT_KEY_0, startHardhatBase, type HardhatBase } from './evm/chain.js';
import { deployRegistries, type Registries } from './erc8004/registries.js';
import { postgresTestTarget, type PostgresTestTarget } from './postgres-helpers.js';

/** Hardhat's sixth development account: this file's validator. */
const VALIDATOR_KEY: Hex = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const validator = privateKeyToAccount(VALIDATOR_KEY);
const quiet = { info() {}, warn() {}, error() {} };

let pgt: PostgresTestTarget;
let stores: PostgresStore[] = [];
let sqlite: SqliteStore;
let sqliteDir: string;
let hh: HardhatBase;
let reg: Registries;
let rpc: { url: string; close(): Promise<void> };

beforeAll(async () => {
  pgt = await postgresTestTarget('erc8004 on PostgreSQL', 'aov_erc8004');
  sqliteDir = mkdtempSync(path.join(tmpdir(), 'aov-erc8004-q-'));
  sqlite = createSqliteStore({ file: path.join(sqliteDir, 'verifier.db') });
  if (!pgt.available) return;
  stores = [await createPostgresStore({ connectionString: pgt.url, schema: pgt.schema }), await createPostgresStore({ connectionString: pgt.url, schema: pgt.schema })];
  for (const s of stores) await s.migrate();
  hh = await startHardhatBase();
  reg = await deployRegistries(hh, privateKeyToAccount(HARDHAT_KEY_0));
  rpc = await hh.serveJsonRpc();
});

afterAll(async () => {
  for (const s of stores) await s.close();
  await sqlite?.close();
  await pgt?.dropSchema();
  await rpc?.close();
  if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });
});

/** A stored receipt whose full form carries `requestHash` (what a REST verification stores). */
function receiptWith(requestHash: string, agentId: string) {
  const verificationId = randomUUID();
  const receipt = JSON.stringify({ result: 'pass', verification_id: verificationId, task_id: 't', agent_id: agentId, request_hash: requestHash, overall: { ratio: 1 } });
  return { verificationId, agentId, taskId: 't', result: 'pass' as const, overallRatio: 1, verifiedAt: new Date().toISOString(), keyVersion: 'k1', receipt };
}

describe('the validation queue (both stores)', () => {
  const each = (): Array<[string, () => ValidationQueueStore]> => [
    ['SQLite', () => sqlite.erc8004!],
    ...(pgt.available ? ([['PostgreSQL', () => stores[0]!.erc8004!]] as Array<[string, () => ValidationQueueStore]>) : []),
  ];
  it('queues a request once, leases a row to one owner, never gives a nonce twice', async () => {
    for (const [name, get] of each()) {
      const q = get();
      await q.erc8004Prepare();
      const seen = { registry: '0xreg', requestHash: `0x${'11'.repeat(32)}`, agentId: '7', requestBlock: 5, requestTx: `0x${'22'.repeat(32)}` };
      expect(await q.erc8004Enqueue(seen, 1000), name).toBe(true);
      expect(await q.erc8004Enqueue(seen, 1001), name).toBe(false);
      const a = await q.erc8004Claim('0xreg', 'a', 2000, 30_000);
      expect(a?.requestHash, name).toBe(seen.requestHash);
      expect(await q.erc8004Claim('0xreg', 'b', 2001, 30_000), name).toBeNull();
      expect(await q.erc8004Update(seen.registry, seen.requestHash, 'b', { state: 'skipped' }, 2002), name).toBe(false);
      const answer = { verificationId: 'v', response: 100, responseUri: 'u', responseHash: `0x${'33'.repeat(32)}`, tag: 't' };
      expect(await q.erc8004Update(seen.registry, seen.requestHash, 'a', { state: 'queued', answer }, 2003), name).toBe(true);
      expect(await q.erc8004AssignNonce(seen.registry, seen.requestHash, 'b', '0xsender', 4, 2004), name).toBeNull();
      expect(await q.erc8004AssignNonce(seen.registry, seen.requestHash, 'a', '0xsender', 4, 2004), name).toBe(4);
      // Nonced already: not again.
      expect(await q.erc8004AssignNonce(seen.registry, seen.requestHash, 'a', '0xsender', 4, 2005), name).toBeNull();
      const other = { ...seen, requestHash: `0x${'44'.repeat(32)}` };
      await q.erc8004Enqueue(other, 3000);
      await q.erc8004Release(seen.registry, seen.requestHash, 'a');
      const c = await q.erc8004Claim('0xreg', 'c', 3001, 30_000);
      expect(c?.requestHash, `${name}: the nonced row goes first`).toBe(seen.requestHash);
      await q.erc8004Update(seen.registry, seen.requestHash, 'c', { nextAttemptMs: 10_000 }, 3002);
      await q.erc8004Release(seen.registry, seen.requestHash, 'c');
      const d = await q.erc8004Claim('0xreg', 'c', 3002, 30_000);
      expect(d?.requestHash, `${name}: a row not due waits`).toBe(other.requestHash);
      await q.erc8004Update(other.registry, other.requestHash, 'c', { state: 'queued', answer }, 3003);
      expect(await q.erc8004AssignNonce(other.registry, other.requestHash, 'c', '0xsender', 2, 3004), `${name}: the counter never goes back`).toBe(5);
      expect(await q.erc8004Counts(), name).toEqual({ nonced: 2 });
    }
  });

  it('finds receipts by request hash (full form only) and pending paid receipts', async () => {
    for (const [name, get] of each()) {
      const store = name === 'SQLite' ? sqlite : stores[0]!;
      const q = get();
      const hash = createHash('sha256').update(`find-${name}`).digest('hex');
      expect(await q.erc8004ReceiptsFor(hash, 2), name).toEqual([]);
      const r = receiptWith(hash, 'seller');
      await store.saveReceipt(r);
      await store.saveReceipt({ ...receiptWith('x', 'seller'), receipt: JSON.stringify({ result: 'pass', note: hash }) });
      expect((await q.erc8004ReceiptsFor(hash, 2)).map((m) => m.verificationId), name).toEqual([r.verificationId]);
      await store.saveReceipt(receiptWith(hash, 'seller'));
      expect(await q.erc8004ReceiptsFor(hash, 2), name).toHaveLength(2);
      const pendingHash = createHash('sha256').update(`pending-${name}`).digest('hex');
      expect(await q.erc8004PendingFor(pendingHash), name).toBe(false);
      const key = { network: 'eip155:8453', payer: '0xp', nonce: pendingHash };
      await store.savePendingSettlement({ key, route: 'verify', record: receiptWith(pendingHash, 'seller'), payment: '{}', transaction: null, createdAt: new Date().toISOString(), state: 'pending' });
      expect(await q.erc8004PendingFor(pendingHash), name).toBe(true);
      await store.deletePendingSettlement(key);
      expect(await q.erc8004PendingFor(pendingHash), name).toBe(false);
    }
  });
});

describe('two instances on one PostgreSQL', () => {
  it('answer each request exactly once', async ({ skip }) => {
    if (!pgt.available) skip();
    const owner = privateKeyToAccount(generatePrivateKey());
    await hh.provider.request({ method: 'hardhat_setBalance', params: [owner.address, '0x56BC75E2D63100000'] });
    const agentId = await reg.registerAgent(owner, 'https://agent.example/card.json');
    const validators: Erc8004Validator[] = stores.map((s) =>
      createErc8004Validator({
        queue: s.erc8004!,
        chain: createValidatorChain({ rpcUrl: rpc.url, registry: reg.validation, privateKey: VALIDATOR_KEY }),
        registry: reg.validation,
        publicBaseUrl: 'https://verifier.example',
        pollMs: 50,
        confirmations: 0,
        startBlock: 0,
        log: quiet,
      }),
    );
    const hashes: Hex[] = [];
    for (let i = 0; i < 6; i++) {
      const h = createHash('sha256').update(`two-instances-${i}`).digest('hex');
      await stores[i % 2]!.saveReceipt(receiptWith(h, 'pg-seller'));
      await reg.requestValidation(owner, { validator: validator.address, agentId, requestURI: '', requestHash: `0x${h}` });
      hashes.push(`0x${h}`);
    }
    // Both instances at once, several rounds each.
    const t0 = Date.now();
    for (let round = 0; round < 6 || Date.now() - t0 < 10_000; round++) {
      await Promise.all(validators.map((v) => v.tick()));
      const counts = await stores[0]!.erc8004!.erc8004Counts();
      if (round >= 6 && counts.confirmed === 6) break;
    }
    const logs = await hh.publicClient.getLogs({ address: reg.validation, fromBlock: 0n, toBlock: 'latest' });
    const answered = parseEventLogs({ abi: validationRegistryAbi, logs, eventName: 'ValidationResponse' }).map((l) => l.args.requestHash.toLowerCase());
    expect(answered.sort()).toEqual([...hashes].sort());
    // Rows of another registry in the same queue (the test above) are left alone.
    const rows = (await stores[0]!.erc8004!.erc8004List({ limit: 100 })).filter((r) => r.registry === reg.validation.toLowerCase());
    expect(rows.map((r) => r.state)).toEqual(Array(6).fill('confirmed'));
    const nonces = rows.map((r) => r.nonce);
    expect(new Set(nonces).size).toBe(nonces.length);
    expect(await hh.publicClient.getTransactionCount({ address: validator.address })).toBe(6);
  });
});
