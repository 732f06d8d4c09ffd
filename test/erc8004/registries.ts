/**
 * @module The official ERC-8004 registries on the in-process test chain: the
 * contracts of erc-8004/erc-8004-contracts (pinned commit, see src/erc8004/abi.ts)
 * and the OpenZeppelin 5.4.0 files they import, vendored under
 * test/erc8004/contracts, compiled with solc-js 0.8.28 (cached by source hash) and
 * deployed as the official tests do: an ERC1967 proxy initialised with
 * HardhatMinimalUUPS (owner = deployer), then upgraded to the real implementation.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeFunctionData, parseEventLogs, type Abi, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { localBase, type HardhatBase } from '../evm/chain.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const contractsDir = path.join(here, 'contracts');
const require = createRequire(import.meta.url);

const ROOTS = ['IdentityRegistryUpgradeable.sol', 'ValidationRegistryUpgradeable.sol', 'HardhatMinimalUUPS.sol', 'ERC1967Proxy.sol'] as const;

export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
}
export type Compiled = Record<'IdentityRegistryUpgradeable' | 'ValidationRegistryUpgradeable' | 'HardhatMinimalUUPS' | 'ERC1967Proxy', CompiledContract>;

function solFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return solFiles(p);
    return name.endsWith('.sol') ? [p] : [];
  });
}

/** Compile the vendored contracts (cached in the OS temp directory by the hash of every source). */
export function compileRegistries(): Compiled {
  const files = solFiles(contractsDir).sort();
  const h = createHash('sha256');
  for (const f of files) h.update(path.relative(contractsDir, f)).update('\0').update(readFileSync(f)).update('\0');
  const cacheDir = path.join(tmpdir(), 'aov-solc-cache');
  const cacheFile = path.join(cacheDir, `erc8004-${h.digest('hex').slice(0, 16)}.json`);
  if (existsSync(cacheFile)) return JSON.parse(readFileSync(cacheFile, 'utf8')) as Compiled;
  const solc = require('solc') as { compile(input: string, callbacks?: { import(p: string): { contents: string } | { error: string } }): string; version(): string };
  if (!solc.version().startsWith('0.8.28')) throw new Error(`expected solc 0.8.28, got ${solc.version()}`);
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(ROOTS.map((r) => [r, { content: readFileSync(path.join(contractsDir, r), 'utf8') }])),
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const findImport = (p: string) => {
    const file = path.join(contractsDir, p);
    if (!file.startsWith(contractsDir + path.sep) || !existsSync(file)) return { error: `not vendored: ${p}` };
    return { contents: readFileSync(file, 'utf8') };
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const pick = (file: string, name: string): CompiledContract => {
    const c = output.contracts[file]![name]!;
    return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  };
  const compiled: Compiled = {
    IdentityRegistryUpgradeable: pick('IdentityRegistryUpgradeable.sol', 'IdentityRegistryUpgradeable'),
    ValidationRegistryUpgradeable: pick('ValidationRegistryUpgradeable.sol', 'ValidationRegistryUpgradeable'),
    HardhatMinimalUUPS: pick('HardhatMinimalUUPS.sol', 'HardhatMinimalUUPS'),
    ERC1967Proxy: pick('ERC1967Proxy.sol', 'ERC1967Proxy'),
  };
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(cacheFile, JSON.stringify(compiled));
  return compiled;
}

export interface Registries {
  compiled: Compiled;
  identity: Hex;
  validation: Hex;
  /** Register an agent owned by `owner` in the Identity Registry; returns its agent id. */
  registerAgent(owner: PrivateKeyAccount, agentURI: string): Promise<bigint>;
  /** As the agent's owner: ask `validator` to validate the work named by `requestHash`. */
  requestValidation(owner: PrivateKeyAccount, args: { validator: Hex; agentId: bigint; requestURI: string; requestHash: Hex }): Promise<{ blockNumber: bigint; transactionHash: Hex }>;
}

/** Deploy the Identity and Validation registries behind their proxies, as `deployer` (their owner). */
export async function deployRegistries(chain: HardhatBase, deployer: PrivateKeyAccount): Promise<Registries> {
  const compiled = compileRegistries();
  const wallet = chain.wallet(deployer);
  const pc = chain.publicClient;
  const deploy = async (c: CompiledContract, args: unknown[] = []): Promise<Hex> => {
    const hash = await wallet.deployContract({ abi: c.abi, bytecode: c.bytecode, args, account: deployer, chain: localBase });
    const r = await pc.waitForTransactionReceipt({ hash });
    if (r.status !== 'success' || !r.contractAddress) throw new Error('deployment failed');
    return r.contractAddress;
  };
  const write = async (address: Hex, abi: Abi, functionName: string, args: unknown[]) => {
    const hash = await wallet.writeContract({ address, abi, functionName, args, account: deployer, chain: localBase });
    const r = await pc.waitForTransactionReceipt({ hash });
    if (r.status !== 'success') throw new Error(`${functionName} reverted`);
    return r;
  };
  const minimal = compiled.HardhatMinimalUUPS;
  const behindProxy = async (impl: CompiledContract, identityArg: Hex | null): Promise<Hex> => {
    const minimalImpl = await deploy(minimal);
    const zero: Hex = '0x0000000000000000000000000000000000000000';
    const init = encodeFunctionData({ abi: minimal.abi, functionName: 'initialize', args: [identityArg ?? zero] });
    const proxy = await deploy(compiled.ERC1967Proxy, [minimalImpl, init]);
    const realImpl = await deploy(impl);
    const reinit =
      identityArg === null
        ? encodeFunctionData({ abi: impl.abi, functionName: 'initialize', args: [] })
        : encodeFunctionData({ abi: impl.abi, functionName: 'initialize', args: [identityArg] });
    await write(proxy, minimal.abi, 'upgradeToAndCall', [realImpl, reinit]);
    return proxy;
  };
  const identity = await behindProxy(compiled.IdentityRegistryUpgradeable, null);
  const validation = await behindProxy(compiled.ValidationRegistryUpgradeable, identity);

  return {
    compiled,
    identity,
    validation,
    async registerAgent(owner, agentURI) {
      const w = chain.wallet(owner);
      const hash = await w.writeContract({ address: identity, abi: compiled.IdentityRegistryUpgradeable.abi, functionName: 'register', args: [agentURI], account: owner, chain: localBase });
      const r = await pc.waitForTransactionReceipt({ hash });
      const [ev] = parseEventLogs({ abi: compiled.IdentityRegistryUpgradeable.abi, logs: r.logs, eventName: 'Registered' }) as unknown as Array<{ args: { agentId: bigint } }>;
      if (!ev) throw new Error('no Registered event');
      return ev.args.agentId;
    },
    async requestValidation(owner, { validator, agentId, requestURI, requestHash }) {
      const w = chain.wallet(owner);
      const hash = await w.writeContract({
        address: validation,
        abi: compiled.ValidationRegistryUpgradeable.abi,
        functionName: 'validationRequest',
        args: [validator, agentId, requestURI, requestHash],
        account: owner,
        chain: localBase,
      });
      const r = await pc.waitForTransactionReceipt({ hash });
      if (r.status !== 'success') throw new Error('validationRequest reverted');
      return { blockNumber: r.blockNumber, transactionHash: hash };
    },
  };
}

/** test/erc8004/BadRegistry.sol, compiled (not cached: it is tiny). */
export function compileBadRegistry(): CompiledContract {
  const solc = require('solc') as { compile(input: string): string };
  const input = {
    language: 'Solidity',
    sources: { 'BadRegistry.sol': { content: readFileSync(path.join(here, 'BadRegistry.sol'), 'utf8') } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const c = output.contracts['BadRegistry.sol']!.BadRegistry!;
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}
