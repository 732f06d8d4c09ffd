/**
 * @module The official ERC-8004 registries (pinned commit, vendored imports) compile
 * with solc-js 0.8.28 and deploy on the in-process chain; the ABI the service uses
 * (src/erc8004/abi.ts) is the compiled contract's, and a request and its response
 * round-trip through getValidationStatus.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { getAddress, type Abi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { validationRegistryAbi, VALIDATION_REGISTRY_VERSION } from '../src/erc8004/abi.js';
import { HARDHAT_KEY_0, HARDHAT_KEY_2, localBase, startHardhatBase, type HardhatBase } from './evm/chain.js';
import { deployRegistries, type Registries } from './erc8004/registries.js';

let hh: HardhatBase;
let reg: Registries;
const deployer = privateKeyToAccount(HARDHAT_KEY_0);
const validator = privateKeyToAccount(HARDHAT_KEY_2);

beforeAll(async () => {
  hh = await startHardhatBase();
  reg = await deployRegistries(hh, deployer);
});

describe('ERC-8004 registries on the test chain', () => {
  it('the service ABI is the compiled Validation Registry ABI (same entries, same types)', () => {
    const compiled = reg.compiled.ValidationRegistryUpgradeable.abi as Abi;
    const strip = (o: unknown): unknown =>
      Array.isArray(o) ? o.map(strip) : o && typeof o === 'object' ? Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'internalType').map(([k, v]) => [k, strip(v)])) : o;
    for (const entry of validationRegistryAbi) {
      const match = compiled.find((e) => e.type === entry.type && 'name' in e && e.name === entry.name);
      expect(strip(match), entry.name).toEqual(strip(entry));
    }
  });

  it('registers an agent, takes a request and its response, and reads it back', async () => {
    const pc = hh.publicClient;
    expect(await pc.readContract({ address: reg.validation, abi: validationRegistryAbi, functionName: 'getVersion' })).toBe(VALIDATION_REGISTRY_VERSION);
    expect(getAddress(await pc.readContract({ address: reg.validation, abi: validationRegistryAbi, functionName: 'getIdentityRegistry' }))).toBe(getAddress(reg.identity));
    const owner = privateKeyToAccount('0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba');
    await hh.provider.request({ method: 'hardhat_setBalance', params: [owner.address, '0x56BC75E2D63100000'] });
    const agentId = await reg.registerAgent(owner, 'https://agent.example/card.json');
    const requestHash = `0x${'ab'.repeat(32)}` as const;
    await reg.requestValidation(owner, { validator: validator.address, agentId, requestURI: 'https://agent.example/work/1', requestHash });
    const hash = await hh.wallet(validator).writeContract({
      address: reg.validation,
      abi: validationRegistryAbi,
      functionName: 'validationResponse',
      args: [requestHash, 87, 'https://verifier.example/verifications/x', `0x${'cd'.repeat(32)}`, 'tag-1'],
      account: validator,
      chain: localBase,
    });
    expect((await pc.waitForTransactionReceipt({ hash })).status).toBe('success');
    const [v, a, response, responseHash, tag] = await pc.readContract({ address: reg.validation, abi: validationRegistryAbi, functionName: 'getValidationStatus', args: [requestHash] });
    expect([getAddress(v), a, response, responseHash, tag]).toEqual([getAddress(validator.address), agentId, 87, `0x${'cd'.repeat(32)}`, 'tag-1']);
  });
});
