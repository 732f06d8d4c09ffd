/**
 * @module What validator mode does not answer, and what it survives. A request
 * whose hash names no receipt, and one whose receipt waited for a payment that
 * was then voided, get no answer, with the reason on GET /erc8004/status. A
 * registry that logs garbage and refuses every answer, and an RPC endpoint that
 * is not there, are reported there too, and verification goes on meanwhile.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEventLogs, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { validationRegistryAbi } from '../src/erc8004/abi.js';
import type { Erc8004Status } from '../src/erc8004/validator.js';
import { HARDHAT_KEY_0, localBase, startHardhatBase, type HardhatBase } from './evm/chain.js';
import { compileBadRegistry, deployRegistries, type Registries } from './erc8004/registries.js';
import { freePort, postJson, projectRoot, startApp, tempDir, until, type Running } from './http-helpers.js';

/** Hardhat's seventh development account: this file's validator. */
const VALIDATOR_KEY: Hex = '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e';
const validator = privateKeyToAccount(VALIDATOR_KEY);
const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as Record<string, unknown>;

let hh: HardhatBase;
let reg: Registries;
let bad: Hex;
let rpc: { url: string; close(): Promise<void> };
let work: string;
let keyFile: string;
const dirs: Array<ReturnType<typeof tempDir>> = [];
const apps: Running[] = [];
const owner = privateKeyToAccount(generatePrivateKey());
let agentId: bigint;

beforeAll(async () => {
  hh = await startHardhatBase();
  const deployer = privateKeyToAccount(HARDHAT_KEY_0);
  reg = await deployRegistries(hh, deployer);
  const badCode = compileBadRegistry();
  const hash = await hh.wallet(deployer).deployContract({ abi: badCode.abi, bytecode: badCode.bytecode, account: deployer, chain: localBase });
  bad = (await hh.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
  await hh.provider.request({ method: 'hardhat_setBalance', params: [owner.address, '0x56BC75E2D63100000'] });
  agentId = await reg.registerAgent(owner, 'https://agent.example/card.json');
  rpc = await hh.serveJsonRpc();
  work = mkdtempSync(path.join(tmpdir(), 'aov-erc8004-refusals-'));
  keyFile = path.join(work, 'validator.key');
  writeFileSync(keyFile, VALIDATOR_KEY, { mode: 0o600 });
});

afterAll(async () => {
  for (const a of apps) await a.close();
  for (const d of dirs) d.cleanup();
  await rpc?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function app(registry: Hex, rpcUrl: string): Promise<Running> {
  const dir = tempDir('aov-erc8004-refusals-app-');
  dirs.push(dir);
  const running = await startApp(dir.dir, { ERC8004_ENABLED: '1', ERC8004_VALIDATION_REGISTRY: registry, ERC8004_RPC_URL: rpcUrl, ERC8004_VALIDATOR_KEY_FILE: keyFile, ERC8004_POLL_MS: '100' });
  apps.push(running);
  return running;
}

async function status(base: string): Promise<Erc8004Status> {
  return (await (await fetch(`${base}/erc8004/status`)).json()) as Erc8004Status;
}

/** A verification still answers 200, promptly. */
async function verifies(base: string): Promise<number> {
  const t0 = performance.now();
  const res = await postJson(base, '/verify/schema', JSON.stringify({ ...INVOICE, task_id: `still-${randomUUID()}` }));
  expect(res.status).toBe(200);
  return performance.now() - t0;
}

async function responses(registry: Hex): Promise<number> {
  const logs = await hh.publicClient.getLogs({ address: registry, fromBlock: 0n, toBlock: 'latest' });
  return parseEventLogs({ abi: validationRegistryAbi, logs, eventName: 'ValidationResponse' }).length;
}

describe('ERC-8004: no answer, with the reason', () => {
  it('an unknown request hash and a receipt voided by a failed payment get no answer', async () => {
    const running = await app(reg.validation, rpc.url);
    const unknown = `0x${createHash('sha256').update('no such request').digest('hex')}` as Hex;
    await reg.requestValidation(owner, { validator: validator.address, agentId, requestURI: '', requestHash: unknown });
    await until('unknown hash skipped', 5000, async () => (await status(running.base)).unanswered.find((u) => u.request_hash === unknown && u.state === 'skipped'));
    expect((await status(running.base)).unanswered.find((u) => u.request_hash === unknown)?.reason).toBe('no receipt carries this request_hash');

    // A paid receipt waits, invisible, while its settlement is unknown; then the settlement fails and it is voided.
    const voidedHash = createHash('sha256').update('voided request').digest('hex');
    const key = { network: 'eip155:8453', payer: owner.address, nonce: `0x${voidedHash}` };
    const verificationId = randomUUID();
    const record = {
      verificationId,
      agentId: 'paid-seller',
      taskId: 'paid',
      result: 'pass' as const,
      overallRatio: 1,
      verifiedAt: new Date().toISOString(),
      keyVersion: 'k',
      receipt: JSON.stringify({ result: 'pass', verification_id: verificationId, request_hash: voidedHash }),
    };
    const store = running.handle.store;
    await store.savePendingSettlement({ key, route: 'verify', record, payment: '{}', transaction: null, createdAt: new Date().toISOString(), state: 'pending' });
    await reg.requestValidation(owner, { validator: validator.address, agentId, requestURI: '', requestHash: `0x${voidedHash}` });
    await until('waiting for the payment', 5000, async () => (await status(running.base)).unanswered.find((u) => u.request_hash === `0x${voidedHash}` && u.state === 'waiting'));
    await store.deletePendingSettlement(key);
    const skipped = await until('voided receipt skipped', 5000, async () =>
      (await status(running.base)).unanswered.find((u) => u.request_hash === `0x${voidedHash}` && u.state === 'skipped'),
    );
    expect(skipped.reason).toBe('its receipt was voided: the payment did not settle');
    await verifies(running.base);
    expect(await responses(reg.validation)).toBe(0);
    expect((await status(running.base)).counts).toEqual({ skipped: 2 });
  });

  it('a registry that logs garbage and refuses every answer is reported, never blocks verification', async () => {
    const running = await app(bad, rpc.url);
    const res = await postJson(running.base, '/verify/schema', JSON.stringify({ ...INVOICE, task_id: 'bad-registry' }));
    const requestHash = `0x${((await res.json()) as { request_hash: string }).request_hash}` as Hex;
    const w = hh.wallet(owner);
    for (const [functionName, args] of [
      ['garbage', [validator.address, requestHash]],
      ['request', [validator.address, 1n, requestHash]],
    ] as const) {
      const hash = await w.writeContract({ address: bad, abi: compileBadRegistry().abi, functionName, args: args as unknown as readonly unknown[], account: owner, chain: localBase });
      await hh.publicClient.waitForTransactionReceipt({ hash });
    }
    const st = await until('garbage ignored and the refusal recorded', 10_000, async () => {
      const s = await status(running.base);
      const row = (await running.handle.store.erc8004!.erc8004List({ limit: 10 }))[0];
      return s.ignored_logs.length === 1 && row?.reason?.startsWith('the registry refused the answer') ? { s, row } : null;
    });
    expect(st.s.ignored_logs[0]!.reason).toBe('log does not decode as ValidationRequest');
    expect(st.row.state).toBe('queued');
    expect(st.row.nonce).toBeNull();
    for (let i = 0; i < 5; i++) expect(await verifies(running.base)).toBeLessThan(5000);
    expect(await hh.publicClient.getTransactionCount({ address: validator.address })).toBe(0);
  });

  it('an RPC endpoint that is not there is reported; verification goes on', async () => {
    const running = await app(reg.validation, `http://127.0.0.1:${await freePort()}`);
    const s = await until('last_error reported', 10_000, async () => {
      const x = await status(running.base);
      return x.last_error ? x : null;
    });
    expect(s.last_error).toBeTruthy();
    for (let i = 0; i < 3; i++) expect(await verifies(running.base)).toBeLessThan(5000);
  });
});
