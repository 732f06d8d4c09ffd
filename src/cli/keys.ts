/**
 * @module `aov keys generate | list | rotate [--data-dir D]`: manage the
 * service's Ed25519 signing keys in `<data-dir>/keys` (docs/protocol.md#keys).
 * The data directory comes from the server's configuration (DATA_DIR), so
 * `DATA_DIR=D aov keys rotate` rotates the keys the service in D signs with.
 * With KEY_ENCRYPTION_KEY set the keys live in the service's database instead
 * (DATABASE_URL or --database-url), shared by every instance: a rotation there is
 * followed by every instance. Prints public information only; private keys never
 * leave their files or their encrypted rows. `aov keys seal-fee-payer --key-file F`
 * prints the Solana fee payer's key from F sealed under KEY_ENCRYPTION_KEY, for
 * X402_LOCAL_SVM_KEY_FILE (docs/payments.md); `aov keys seal-validator-key --key-file F`
 * does the same for the ERC-8004 validator's key, for ERC8004_VALIDATOR_KEY_FILE (docs/erc8004.md).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CliIO } from './io.js';
import { didYouMean, onePositional, parseCommandArgs, UsageError } from './args.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { createKeyRing } from '../receipts/key-ring.js';
import { createDatabaseKeyRing, rotateDatabaseKeys } from '../receipts/key-store.js';
import { openStore } from '../store/index.js';

const USAGE = `usage: aov keys <generate|list|rotate> [--data-dir DIR]
       aov keys seal-fee-payer --key-file FILE
       aov keys seal-validator-key --key-file FILE

  generate   create the first signing key if there is none; print the active key
  list       print every key ever used (JSON array of public key info)
  rotate     add a new active key and retire the current one (kept for verification)
  seal-fee-payer  print the Solana fee payer's key in FILE (a solana-keygen keypair file or an
             Ed25519 PKCS#8 PEM) sealed under KEY_ENCRYPTION_KEY; write it to the file
             X402_LOCAL_SVM_KEY_FILE names (its address goes to stderr)
  seal-validator-key  print the ERC-8004 validator's key in FILE (64 hex digits) sealed under
             KEY_ENCRYPTION_KEY; write it to the file ERC8004_VALIDATOR_KEY_FILE names

  --data-dir DIR       data directory; keys live in DIR/keys (default DATA_DIR, else ./data)
  --database-url URL   the service's database (default DATABASE_URL). With KEY_ENCRYPTION_KEY
                       set the keys live there and rotate returns once every instance signs
                       with the new key; without it, list shows the keys recorded there
`;

const ACTIONS = ['generate', 'list', 'rotate', 'seal-fee-payer', 'seal-validator-key'];

const OPTIONS = {
  'data-dir': { type: 'string' },
  'key-file': { type: 'string' },
  'database-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(argv: string[], io: CliIO): Promise<number> {
  let action: string;
  let dataDir: string;
  let config: Config;
  let keyFile: string | undefined;
  try {
    const { values, positionals } = parseCommandArgs(argv, OPTIONS);
    if (values.help) {
      io.stdout(USAGE);
      return 0;
    }
    action = onePositional(positionals, 'action');
    if (!ACTIONS.includes(action)) {
      const guess = didYouMean(action, ACTIONS);
      throw new UsageError(`unknown action '${action}'${guess ? ` — did you mean '${guess}'?` : ''}`);
    }
    config = loadConfig(undefined, { 'data-dir': values['data-dir'], 'database-url': values['database-url'] });
    dataDir = config.dataDir;
    keyFile = values['key-file'];
    if (action.startsWith('seal-') && !keyFile) throw new UsageError(`${action} needs --key-file FILE`);
  } catch (e) {
    if (e instanceof ConfigError) {
      io.stderr(`aov keys: invalid configuration: ${e.message}\n`);
      return 2;
    }
    if (!(e instanceof UsageError)) throw e;
    io.stderr(`aov keys: ${e.message}\n${USAGE}`);
    return 2;
  }
  if (action === 'seal-fee-payer') return sealFeePayer(keyFile!, config.keyEncryptionKey, io);
  if (action === 'seal-validator-key') return sealValidatorKeyFile(keyFile!, config.keyEncryptionKey, io);
  if (config.keyEncryptionKey || (usesDatabaseUrl(argv) && action === 'list')) return databaseKeys(action, config, io);
  const keysDir = path.join(dataDir, 'keys');
  const ring = createKeyRing({ dir: keysDir });
  try {
    switch (action) {
      case 'generate': {
        const existing = ring.list().some((k) => k.status === 'active');
        const info = ring.active();
        if (existing) io.stderr(`aov keys: an active key already exists in ${keysDir} (${info.keyVersion}); use 'aov keys rotate' for a new one\n`);
        else io.stderr(`aov keys: created signing key ${info.keyVersion} in ${keysDir}\n`);
        io.stdout(`${JSON.stringify(info, null, 2)}\n`);
        return 0;
      }
      case 'list':
        io.stdout(`${JSON.stringify(ring.list(), null, 2)}\n`);
        return 0;
      default: {
        const info = ring.rotate();
        io.stderr(`aov keys: ${info.keyVersion} is now the active key in ${keysDir}; the previous one is retired and stays published\n`);
        io.stdout(`${JSON.stringify(info, null, 2)}\n`);
        return 0;
      }
    }
  } catch (e) {
    io.stderr(`aov keys: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
}

async function sealFeePayer(file: string, kek: Buffer | null, io: CliIO): Promise<number> {
  return sealed('seal-fee-payer', kek, io, async (key) => {
    // Loaded only here: the Solana libraries are large.
    const { readSvmKeyFile, sealSvmKey, svmAddressOf } = await import('../payments/svm-signer.js');
    const fee = readSvmKeyFile(file);
    io.stderr(`aov keys: sealed the fee payer ${svmAddressOf(fee)}; write the line to the file X402_LOCAL_SVM_KEY_FILE names\n`);
    return sealSvmKey(fee, key);
  });
}

async function sealValidatorKeyFile(file: string, kek: Buffer | null, io: CliIO): Promise<number> {
  return sealed('seal-validator-key', kek, io, async (key) => {
    const { sealValidatorKey } = await import('../erc8004/validator-key.js');
    const line = sealValidatorKey(readFileSync(file, 'utf8'), key);
    io.stderr('aov keys: sealed the validator key; write the line to the file ERC8004_VALIDATOR_KEY_FILE names\n');
    return line;
  });
}

/** Print the line `seal` makes under the KEK; errors name the problem, never the key. */
async function sealed(action: string, kek: Buffer | null, io: CliIO, seal: (kek: Buffer) => Promise<string>): Promise<number> {
  if (!kek) {
    io.stderr(`aov keys: ${action} needs KEY_ENCRYPTION_KEY (the key the service opens the sealed file with)\n`);
    return 2;
  }
  try {
    io.stdout(`${await seal(kek)}\n`);
    return 0;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    io.stderr(`aov keys: ${code ? `cannot read the key file (${code})` : e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
}

function usesDatabaseUrl(argv: string[]): boolean {
  return argv.some((a) => a === '--database-url' || a.startsWith('--database-url='));
}

async function databaseKeys(action: string, config: Config, io: CliIO): Promise<number> {
  let store;
  try {
    store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, schema: config.databaseSchema });
  } catch (e) {
    io.stderr(`aov keys: cannot open the database: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  try {
    const kek = config.keyEncryptionKey;
    if (action === 'list' || !kek) {
      const rows = await store.signingKeys();
      const list = rows.map(({ privateKey: _p, createdAt: _c, ...k }) => ({ ...k, algorithm: 'Ed25519', publicKeyEncoding: 'base64 of the raw 32-byte Ed25519 public key' }));
      io.stdout(`${JSON.stringify(list, null, 2)}\n`);
      return 0;
    }
    if (action === 'rotate') {
      const info = await rotateDatabaseKeys(store, kek);
      io.stderr(`aov keys: ${info.keyVersion} is now the active key in the database; every instance signs with it from ${info.notBefore}\n`);
      io.stdout(`${JSON.stringify(info, null, 2)}\n`);
      return 0;
    }
    // generate: creates the first key when the database has none.
    const existed = (await store.signingKeys()).length > 0;
    const ring = await createDatabaseKeyRing({ store, kek });
    ring.close();
    if (existed) io.stderr("aov keys: keys already exist in the database; use 'aov keys rotate' for a new one\n");
    io.stdout(`${JSON.stringify(ring.active(), null, 2)}\n`);
    return 0;
  } catch (e) {
    io.stderr(`aov keys: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  } finally {
    await store.close();
  }
}
