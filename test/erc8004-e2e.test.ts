/**
 * @module Validator mode end to end on the in-process chain with the official
 * registries: an agent registered in the Identity Registry verifies through REST,
 * its owner calls validationRequest with the receipt's request_hash, and within
 * 5 s the Validation Registry holds our answer: the response from the overall
 * ratio, the receipt's public URL, the SHA-256 of the bytes served there, and the
 * fixed tag; `aov log verify` proves the fetched receipt in the log.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAddress, parseEventLogs, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { main } from '../src/cli/index.js';
import { validationRegistryAbi } from '../src/erc8004/abi.js';
import { ERC8004_TAG, responseScore } from '../src/erc8004/answer.js';
import { HARDHAT_KEY_0, startHardhatBase, type HardhatBase } from './evm/chain.js';
import { deployRegistries, type Registries } from './erc8004/registries.js';
import { postJson, projectRoot, startApp, tempDir, type Running } from './http-helpers.js';

/** Hardhat's fourth development account: the validator. */
const VALIDATOR_KEY: Hex = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6';
const validator = privateKeyToAccount(VALIDATOR_KEY);
const INVOICE = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice.request.json'), 'utf8')) as Record<string, unknown>;
const INVOICE_PASS = JSON.parse(readFileSync(path.join(projectRoot, 'test', 'fixtures', 'invoice-pass.request.json'), 'utf8')) as Record<string, unknown>;

let hh: HardhatBase;
let reg: Registries;
let rpc: { url: string; close(): Promise<void> };
let running: Running;
let tmp: ReturnType<typeof tempDir>;
let work: string;
const owner = privateKeyToAccount(generatePrivateKey());

beforeAll(async () => {
  hh = await startHardhatBase();
  reg = await deployRegistries(hh, privateKeyToAccount(HARDHAT_KEY_0));
  await hh.provider.request({ method: 'hardhat_setBalance', params: [owner.address, '0x56BC75E2D63100000'] });
  rpc = await hh.serveJsonRpc();
  tmp = tempDir('aov-erc8004-');
  work = mkdtempSync(path.join(tmpdir(), 'aov-erc8004-work-'));
  const keyFile = path.join(work, 'validator.key');
  writeFileSync(keyFile, `${VALIDATOR_KEY}\n`, { mode: 0o600 });
  running = await startApp(tmp.dir, {
    ERC8004_ENABLED: 'true',
    ERC8004_VALIDATION_REGISTRY: reg.validation,
    ERC8004_RPC_URL: rpc.url,
    ERC8004_VALIDATOR_KEY_FILE: keyFile,
    ERC8004_POLL_MS: '100',
  });
});

afterAll(async () => {
  await running?.close();
  await rpc?.close();
  tmp?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), readFile: (p) => readFileSync(p, 'utf8') });
  return { code, out, err };
}

/** Poll the registry until it holds a response for `requestHash` (non-zero responseHash) or `ms` pass. */
async function waitForResponse(requestHash: Hex, ms: number): Promise<{ response: number; responseHash: Hex; tag: string; validator: string } | null> {
  const t0 = Date.now();
  for (;;) {
    const [v, , response, responseHash, tag] = await hh.publicClient.readContract({ address: reg.validation, abi: validationRegistryAbi, functionName: 'getValidationStatus', args: [requestHash] });
    if (!/^0x0{64}$/.test(responseHash)) return { response, responseHash, tag, validator: v };
    if (Date.now() - t0 > ms) return null;
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function responseEvents(requestHash: Hex) {
  const logs = await hh.publicClient.getLogs({ address: reg.validation, fromBlock: 0n, toBlock: 'latest' });
  return parseEventLogs({ abi: validationRegistryAbi, logs, eventName: 'ValidationResponse' }).filter((l) => l.args.requestHash.toLowerCase() === requestHash.toLowerCase());
}

describe('ERC-8004 validator mode on a local chain', () => {
  it('registered agent → REST verification → validationRequest → our response within 5 s, matching the receipt served at responseURI', async () => {
    const agentId = await reg.registerAgent(owner, 'https://agent.example/.well-known/agent-card.json');
    for (const [name, request] of [['fail', INVOICE], ['pass', INVOICE_PASS]] as const) {
      const res = await postJson(running.base, '/verify/schema', JSON.stringify({ ...request, task_id: `erc8004-${name}`, agent_id: 'erc8004-seller' }));
      expect(res.status).toBe(200);
      const body = (await res.json()) as { verification_id: string; request_hash: string; result: 'pass' | 'fail'; overall: { ratio: number } };
      expect(body.result).toBe(name);
      const requestHash = `0x${body.request_hash}` as Hex;

      const t0 = performance.now();
      // requestURI points nowhere reachable: the validator must never fetch it.
      await reg.requestValidation(owner, { validator: validator.address, agentId, requestURI: 'https://work.invalid/never-fetched', requestHash });
      const got = await waitForResponse(requestHash, 5000);
      const elapsed = performance.now() - t0;
      expect(got, 'no response within 5 s').not.toBeNull();
      console.log(`erc8004 e2e (${name}): response on chain ${elapsed.toFixed(0)} ms after validationRequest was mined`);
      expect(elapsed).toBeLessThan(5000);

      const events = await responseEvents(requestHash);
      expect(events).toHaveLength(1);
      const ev = events[0]!.args;
      expect(getAddress(got!.validator)).toBe(getAddress(validator.address));
      expect(ev.agentId).toBe(agentId);
      expect(ev.tag).toBe(ERC8004_TAG);
      expect(got!.tag).toBe(ERC8004_TAG);
      expect(ev.responseURI).toBe(`${running.base}/verifications/${body.verification_id}`);
      expect(got!.response).toBe(responseScore(body.result, body.overall.ratio));
      expect(got!.response === 100).toBe(name === 'pass');

      const served = Buffer.from(await (await fetch(ev.responseURI)).arrayBuffer());
      expect(`0x${createHash('sha256').update(served).digest('hex')}`).toBe(got!.responseHash);
      expect(ev.responseHash).toBe(got!.responseHash);

      const file = path.join(work, `${name}.json`);
      writeFileSync(file, served);
      const verified = await cli(['log', 'verify', file, '--log', running.base]);
      expect(verified.err).toBe('');
      expect(verified.code).toBe(0);
    }

    const page = (await (await fetch(`${running.base}/erc8004/agents/erc8004-seller/validations`)).json()) as { validations: Array<{ transaction: string; block: number; response: number }> };
    expect(page.validations).toHaveLength(2);
    for (const v of page.validations) {
      expect(v.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(v.block).toBeGreaterThan(0);
    }
    const status = (await (await fetch(`${running.base}/erc8004/status`)).json()) as { counts: Record<string, number>; last_error: string | null };
    expect(status.counts.confirmed).toBe(2);
    expect(status.last_error).toBeNull();
  });
});
