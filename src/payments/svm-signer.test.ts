/** @module The Solana fee payer's key files: the formats read, the sealed form, and errors that never show the key. */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createKeyFiles, sealWithKeysCli } from '../../test/key-files.js';
import { run as keysCli } from '../cli/keys.js';
import { parsePaymentConfig } from './config.js';
import { createPayments } from './index.js';
import { readSvmKeyFile, sealSvmKey, svmAddressOf } from './svm-signer.js';

const keyFiles = createKeyFiles('aov-svm-key-');
const { dir, file } = keyFiles;
afterAll(() => keyFiles.cleanup());
afterEach(() => vi.unstubAllEnvs());

function keypair() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
  const pub = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, seed, pub, json: JSON.stringify([...seed, ...pub]) };
}

describe('the fee-payer key file', () => {
  it('reads a solana-keygen keypair file and a PKCS#8 PEM to the same address', () => {
    const k = keypair();
    const fromJson = readSvmKeyFile(file(k.json));
    const fromPem = readSvmKeyFile(file(k.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()));
    expect(svmAddressOf(fromJson)).toBe(svmAddressOf(k.privateKey));
    expect(svmAddressOf(fromPem)).toBe(svmAddressOf(k.privateKey));
  });

  it('opens a key sealed under KEY_ENCRYPTION_KEY with that key only', () => {
    const k = keypair();
    const kek = randomBytes(32);
    const sealed = file(sealSvmKey(k.privateKey, kek));
    expect(svmAddressOf(readSvmKeyFile(sealed, kek))).toBe(svmAddressOf(k.privateKey));
    expect(() => readSvmKeyFile(sealed)).toThrow(/KEY_ENCRYPTION_KEY is not set/);
    expect(() => readSvmKeyFile(sealed, randomBytes(32))).toThrow(/cannot be opened with this KEY_ENCRYPTION_KEY/);
  });

  it('refuses what is not a usable Ed25519 key, naming the file and never the key', () => {
    const k = keypair();
    const wrongPub = JSON.stringify([...k.seed, ...randomBytes(32)]);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const cases: Array<[string, RegExp]> = [
      [wrongPub, /public key does not match/],
      [JSON.stringify([...k.seed]), /not a Solana keypair file/],
      ['[1, 2, "x"]', /not a Solana keypair file/],
      [rsa, /holds a rsa key/],
      ['hello', /neither a Solana keypair file/],
    ];
    for (const [text, message] of cases) {
      const f = file(text);
      let err: Error | null = null;
      try {
        readSvmKeyFile(f);
      } catch (e) {
        err = e as Error;
      }
      expect(err?.message).toMatch(message);
      expect(err?.message).toContain(f);
      expect(err?.message).not.toContain(String(k.seed[0]) + ',' + String(k.seed[1]));
    }
    expect(() => readSvmKeyFile(path.join(dir, 'missing'))).toThrow(/cannot read .*ENOENT/);
  });

  it('the payments start with the sealed file and the service KEK; a bad file stops them naming X402_LOCAL_SVM_KEY_FILE', () => {
    const k = keypair();
    const kek = randomBytes(32);
    const env = {
      X402_ENABLED: 'true',
      X402_FACILITATOR_URL: 'local',
      X402_NETWORKS: 'solana',
      X402_PAY_TO_SOLANA: 'So11111111111111111111111111111111111111112',
      X402_LOCAL_SVM_RPC_URL: 'http://127.0.0.1:9',
      X402_LOCAL_SVM_KEY_FILE: file(sealSvmKey(k.privateKey, kek)),
    };
    const store = {} as Parameters<typeof createPayments>[0]['store'];
    const payments = createPayments({ config: parsePaymentConfig(env), store, keyEncryptionKey: kek });
    expect(payments!.localFacilitator!.facilitator.getSupported().signers).toEqual({ 'solana:*': [svmAddressOf(k.privateKey)] });
    expect(() => createPayments({ config: parsePaymentConfig(env), store })).toThrow(/^X402_LOCAL_SVM_KEY_FILE: .*KEY_ENCRYPTION_KEY is not set/);
  });

  it('aov keys seal-fee-payer prints the sealed key, which the service opens', async () => {
    const k = keypair();
    const { code, kek, io } = await sealWithKeysCli('seal-fee-payer', file(k.json), dir);
    const { out, err } = io;
    expect(code).toBe(0);
    expect(err.join('')).toContain(svmAddressOf(k.privateKey));
    expect(out.join('')).not.toContain(k.json);
    expect(svmAddressOf(readSvmKeyFile(file(out.join('')), kek))).toBe(svmAddressOf(k.privateKey));
    expect(await keysCli(['seal-fee-payer', '--data-dir', dir], io)).toBe(2);
  });
});
