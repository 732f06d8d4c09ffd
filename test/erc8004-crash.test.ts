/**
 * @module kill -9 of the real server between a ValidationRequest and its answer
 * being mined: mining is held back, so the answer the server signed is at most in
 * the node's pool when it dies (first case), or not even there (second case: the
 * node dropped it, as after a send that never arrived). After a restart on the
 * same data directory the stored bytes are sent again (a row caught mid-step first
 * waits for its 30 s lease to run out), and once blocks are mined the registry
 * holds exactly one response from us.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, parseEventLogs, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { validationRegistryAbi } from '../src/erc8004/abi.js';
import { HARDHAT_KEY_0, localBase, startHardhatBase, type HardhatBase } from './evm/chain.js';
import { deployRegistries, type Registries } from './erc8004/registries.js';
import { postJson, projectRoot, spawnServer, tempDir, until, type Child } from './http-helpers.js';

/** Hardhat's fifth development account: this file's validator. */
const VALIDATOR_KEY: Hex = '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a';
const validator = privateKeyToAccount(VALIDATOR_KEY);
const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as Record<string, unknown>;

let hh: HardhatBase;
let reg: Registries;
let rpc: { url: string; close(): Promise<void> };
let tmp: ReturnType<typeof tempDir>;
let work: string;
let env: Record<string, string>;
const children: Child[] = [];
const owner = privateKeyToAccount(generatePrivateKey());
let agentId: bigint;

beforeAll(async () => {
  hh = await startHardhatBase();
  reg = await deployRegistries(hh, privateKeyToAccount(HARDHAT_KEY_0));
  await hh.provider.request({ method: 'hardhat_setBalance', params: [owner.address, '0x56BC75E2D63100000'] });
  agentId = await reg.registerAgent(owner, 'https://agent.example/card.json');
  rpc = await hh.serveJsonRpc();
  tmp = tempDir('aov-erc8004-crash-');
  work = mkdtempSync(path.join(tmpdir(), 'aov-erc8004-crash-work-'));
  const keyFile = path.join(work, 'validator.key');
  writeFileSync(keyFile, VALIDATOR_KEY, { mode: 0o600 });
  env = { ERC8004_ENABLED: '1', ERC8004_VALIDATION_REGISTRY: reg.validation, ERC8004_RPC_URL: rpc.url, ERC8004_VALIDATOR_KEY_FILE: keyFile, ERC8004_POLL_MS: '100', VERIFY_WORKERS: '0' };
});

afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
  await hh?.provider.request({ method: 'evm_setAutomine', params: [true] });
  await rpc?.close();
  tmp?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function start(): Promise<Child> {
  const c = await spawnServer(tmp.dir, env);
  children.push(c);
  return c;
}

async function status(base: string): Promise<{ counts: Record<string, number> }> {
  return (await (await fetch(`${base}/erc8004/status`)).json()) as { counts: Record<string, number> };
}

/** Send validationRequest and mine it alone (automine is off). */
async function requestMined(requestHash: Hex): Promise<void> {
  const hash = await hh.wallet(owner).sendTransaction({
    account: owner,
    chain: localBase,
    to: reg.validation,
    data: encodeFunctionData({ abi: validationRegistryAbi, functionName: 'validationRequest', args: [validator.address, agentId, 'https://work.invalid/x', requestHash] }),
    gas: 500_000n,
  });
  await hh.provider.request({ method: 'evm_mine', params: [] });
  expect((await hh.publicClient.getTransactionReceipt({ hash })).status).toBe('success');
}

async function responses(requestHash: Hex): Promise<number> {
  const logs = await hh.publicClient.getLogs({ address: reg.validation, fromBlock: 0n, toBlock: 'latest' });
  return parseEventLogs({ abi: validationRegistryAbi, logs, eventName: 'ValidationResponse' }).filter((l) => l.args.requestHash.toLowerCase() === requestHash).length;
}

async function pooled(): Promise<Hex[]> {
  const block = (await hh.provider.request({ method: 'eth_getBlockByNumber', params: ['pending', false] })) as { transactions: Hex[] };
  return block.transactions;
}

describe('ERC-8004 answers survive kill -9', () => {
  for (const dropped of [false, true]) {
    it(dropped ? 'killed after signing, the sent transaction lost: restart sends the stored bytes, one response' : 'killed with the answer in the pool: restart, one response', async () => {
      const first = await start();
      const before = (await status(first.base)).counts.confirmed ?? 0;
      const res = await postJson(first.base, '/verify/schema', JSON.stringify({ ...INVOICE, task_id: `crash-${dropped}`, agent_id: 'crash-seller' }));
      const requestHash = `0x${((await res.json()) as { request_hash: string }).request_hash}` as Hex;
      await hh.provider.request({ method: 'evm_setAutomine', params: [false] });
      try {
        await requestMined(requestHash);
        // The server has signed and sent its answer; nothing is mined while automine is off.
        await until('answer signed and in the pool', 30_000, async () => (await status(first.base)).counts.signed === 1 && (await pooled()).length === 1);
        first.proc.kill('SIGKILL');
        expect((await first.exited).signal).toBe('SIGKILL');
        if (dropped) {
          const [tx] = await pooled();
          await hh.provider.request({ method: 'hardhat_dropTransaction', params: [tx] });
          expect(await pooled()).toHaveLength(0);
        }
        await hh.provider.request({ method: 'evm_mine', params: [] });
        expect(await responses(requestHash)).toBe(dropped ? 0 : 1);

        const second = await start();
        const t0 = Date.now();
        if (dropped) await until('stored bytes sent again', 40_000, async () => (await pooled()).length === 1);
        for (let i = 0; i < 3; i++) await hh.provider.request({ method: 'evm_mine', params: [] });
        const s = await until('confirmed after restart', 40_000, async () => {
          const st = await status(second.base);
          return st.counts.confirmed === before + 1 ? st : null;
        });
        expect(s.counts.signed ?? 0).toBe(0);
        console.log(`erc8004 kill -9 (${dropped ? 'sent transaction lost' : 'answer in the pool'}): confirmed ${Date.now() - t0} ms after the restarted server listened`);
        // A few more polls and blocks: nothing else is sent for it.
        await new Promise((r) => setTimeout(r, 500));
        for (let i = 0; i < 2; i++) await hh.provider.request({ method: 'evm_mine', params: [] });
        expect(await responses(requestHash)).toBe(1);
        second.proc.kill('SIGTERM');
        await second.exited;
      } finally {
        await hh.provider.request({ method: 'evm_setAutomine', params: [true] });
      }
    }, 200_000);
  }
});
