/** @module The ERC-8004 validator's key file: plain or sealed under the KEK, opened by the configuration; errors never show the key. */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import path from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createKeyFiles, sealWithKeysCli } from '../../test/key-files.js';
import { run as keysCli } from '../cli/keys.js';
import { loadConfig } from '../config.js';
import { encryptPrivateKey } from '../receipts/key-store.js';
import { openValidatorKey, sealValidatorKey } from './validator-key.js';

const keyFiles = createKeyFiles('aov-validator-key-');
const { dir, file } = keyFiles;
const hexKey = (): `0x${string}` => `0x${randomBytes(32).toString('hex')}`;

function validatorConfig(keyFile: string, kek?: Buffer) {
  return loadConfig({
    DATA_DIR: dir,
    ERC8004_ENABLED: '1',
    ERC8004_VALIDATION_REGISTRY: `0x${'11'.repeat(20)}`,
    ERC8004_RPC_URL: 'http://127.0.0.1:1',
    ERC8004_VALIDATOR_KEY_FILE: keyFile,
    ...(kek ? { KEY_ENCRYPTION_KEY: kek.toString('hex') } : {}),
  });
}

describe('ERC-8004 validator key', () => {
  afterEach(() => vi.unstubAllEnvs());
  afterAll(() => keyFiles.cleanup());

  it('opens a plain key and a sealed one to the same key; a sealed key needs the right KEK', () => {
    const key = hexKey();
    const kek = randomBytes(32);
    const sealed = sealValidatorKey(key, kek);
    expect(sealed).toMatch(/^aes-256-gcm:v1:/);
    expect(sealed).not.toContain(key.slice(2));
    expect(openValidatorKey(sealed, kek)).toBe(key);
    expect(openValidatorKey(key.slice(2).toUpperCase(), null)).toBe(key);
    expect(() => openValidatorKey(sealed, null)).toThrow(/KEY_ENCRYPTION_KEY is not set/);
    expect(() => openValidatorKey(sealed, randomBytes(32))).toThrow(/cannot be opened/);
    // A key sealed under the same KEK for another use (same envelope, another label) cannot stand in.
    const other = encryptPrivateKey(generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey, 'x402-svm-fee-payer', kek);
    expect(() => openValidatorKey(other, kek)).toThrow(/cannot be opened/);
    expect(() => sealValidatorKey('not a key', kek)).toThrow(/64 hex digits/);
  });

  it('the configuration reads a sealed key file with KEY_ENCRYPTION_KEY, and names the setting, never the key, when it cannot', () => {
    const key = hexKey();
    const kek = randomBytes(32);
    const sealedFile = file(sealValidatorKey(key, kek));
    const config = validatorConfig(sealedFile, kek);
    expect(config.erc8004.validatorKey).toBe(key);
    // The key is not enumerable: a logged config does not carry it.
    expect(JSON.stringify(config)).not.toContain(key.slice(2));
    for (const bad of [() => validatorConfig(sealedFile), () => validatorConfig(sealedFile, randomBytes(32)), () => validatorConfig(file(`${key.slice(2, 40)}zz`))]) {
      let message = '';
      try {
        bad();
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toMatch(/^ERC8004_VALIDATOR_KEY_FILE/);
      expect(message).not.toContain(key.slice(2, 40));
    }
  });

  it('aov keys seal-validator-key prints a sealed line the service opens to the same signer', async () => {
    const key = hexKey();
    const { code, kek, io } = await sealWithKeysCli('seal-validator-key', file(key), dir);
    const { out, err } = io;
    expect(await keysCli(['seal-validator-key', '--key-file', path.join(dir, 'missing'), '--data-dir', dir], io)).toBe(2);
    expect(code).toBe(0);
    expect(out.join('')).not.toContain(key.slice(2));
    expect(err.join('')).not.toContain(key.slice(2));
    const opened = validatorConfig(file(out.join('')), kek).erc8004.validatorKey;
    expect(privateKeyToAccount(opened).address).toBe(privateKeyToAccount(key).address);
    expect(await keysCli(['seal-validator-key', '--data-dir', dir], io)).toBe(2);
  });
});
