/**
 * @module The service's signing keys, in one of two modes, both failing closed:
 *
 * - files (default): private keys are PKCS#8 files in `<dataDir>/keys`. Only the very
 *   first start (no key files and no key recorded in the database) creates a key.
 *   Afterwards a missing key is never replaced: a start without the recorded keys is
 *   refused, and keys whose files vanish while running keep signing from memory
 *   while /health reports `degraded` (refusing would take the service down although
 *   the key in memory is still valid and published; a new key would orphan every
 *   earlier receipt). Every key is also recorded in the database, so the agent card
 *   lists every key that ever signed even if files are lost.
 * - database (KEY_ENCRYPTION_KEY set): the key ring lives in the database, private
 *   keys encrypted under that key (see receipts/key-store.ts); instances share
 *   nothing but the database.
 */
import path from 'node:path';
import { createKeyRing, type KeyRing, type PublicKeyInfo } from '../receipts/key-ring.js';
import { createDatabaseKeyRing, publicKeyInfo } from '../receipts/key-store.js';
import type { KeyStore, SigningKeyRecord } from '../store/store.js';

export interface SigningKeysOptions {
  store: KeyStore;
  dataDir: string;
  /** The key-encryption key: database mode when set. */
  keyEncryptionKey: Buffer | null;
  clock: () => Date;
  warn(obj: object, msg: string): void;
}

export interface SigningKeys {
  mode: 'files' | 'database';
  keyRing: KeyRing;
  /** What the agent card lists: every key in the ring or recorded in the database. */
  cardKeys(): PublicKeyInfo[];
  /** Why no key can sign (null when one can), and what needs the operator although signing works. */
  readiness(): { problem: string | null; warnings: string[] };
  close(): void;
}

function toRecord(k: PublicKeyInfo): SigningKeyRecord {
  return {
    keyVersion: k.keyVersion,
    publicKey: k.publicKey,
    status: k.status,
    notBefore: k.notBefore,
    notAfter: k.notAfter,
    createdAt: new Date(Date.parse(k.notBefore)).toISOString(),
    privateKey: null,
  };
}

export async function openSigningKeys(options: SigningKeysOptions): Promise<SigningKeys> {
  const { store, clock } = options;
  if (options.keyEncryptionKey) {
    const ring = await createDatabaseKeyRing({
      store,
      kek: options.keyEncryptionKey,
      clock,
      onRefreshError: (err) => options.warn({ err }, 'signing keys: cannot re-read the key ring from the database'),
    });
    // Fail at start rather than on the first request when this instance cannot use the active key.
    const problem = ring.problem();
    if (problem) {
      ring.close();
      throw new Error(`signing keys: ${problem}`);
    }
    return {
      mode: 'database',
      keyRing: ring,
      cardKeys: () => ring.list(),
      readiness: () => ({ problem: ring.problem(), warnings: [] }),
      close: () => ring.close(),
    };
  }

  const dir = path.join(options.dataDir, 'keys');
  let recorded = await store.signingKeys();
  const ring = createKeyRing({ dir, clock, generateWhenEmpty: recorded.length === 0 });
  try {
    // First start: the key is generated now, not on the first request.
    ring.signer();
  } catch (e) {
    const versions = recorded.map((k) => k.keyVersion).join(', ');
    throw new Error(
      recorded.length > 0
        ? `signing keys: the database lists keys (${versions}) but ${dir} holds none that can sign; restore the key files (a new key is never created after the first start)`
        : `signing keys: ${e instanceof Error ? e.message : String(e)}`,
    );
  }

  // Keep the database's list in step with the ring (a rotation by `aov keys rotate` shows up in the directory).
  let lastRecorded = '';
  const fingerprint = (keys: PublicKeyInfo[]) => keys.map((k) => `${k.keyVersion}:${k.status}:${k.notAfter ?? ''}`).join(',');
  let syncing: Promise<void> | null = null;
  const sync = (): Promise<void> => {
    syncing ??= (async () => {
      try {
        const keys = ring.list();
        const fp = fingerprint(keys);
        if (fp !== lastRecorded) {
          await store.recordSigningKeys(keys.map(toRecord));
          lastRecorded = fp;
        }
        recorded = await store.signingKeys();
      } catch (err) {
        options.warn({ err }, 'signing keys: cannot record the key list in the database');
      } finally {
        syncing = null;
      }
    })();
    return syncing;
  };
  await sync();
  const timer = setInterval(() => void sync(), 1000);
  timer.unref();

  return {
    mode: 'files',
    keyRing: ring,
    cardKeys() {
      const byVersion = new Map<string, PublicKeyInfo>();
      for (const r of recorded) byVersion.set(r.keyVersion, publicKeyInfo(r));
      // The ring's own view is the freshest (a retirement may not be recorded yet).
      for (const k of ring.list()) byVersion.set(k.keyVersion, k);
      return [...byVersion.values()].sort((a, b) => (a.notBefore < b.notBefore ? -1 : a.notBefore > b.notBefore ? 1 : a.keyVersion < b.keyVersion ? -1 : 1));
    },
    readiness() {
      let problem: string | null = null;
      try {
        ring.signer();
      } catch (e) {
        problem = e instanceof Error ? e.message : String(e);
      }
      const missing = ring.missing();
      const warnings = missing.length > 0 ? [`signing key files missing in ${dir} (${missing.join(', ')}); the key loaded in memory keeps signing: restore the directory`] : [];
      return { problem, warnings };
    },
    close: () => clearInterval(timer),
  };
}
