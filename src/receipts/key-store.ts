/**
 * @module Signing keys shared through the database, so that instances share
 * nothing but the database: the key ring's state (versions, public keys, active
 * key, validity windows) is rows of the store, and each private key is kept
 * there too, encrypted with AES-256-GCM under a key-encryption key (KEK) that
 * only the instances hold (from the environment). Every instance reads the same
 * rows, so every agent card lists the same keys.
 *
 * Rotation (`rotateDatabaseKeys`) inserts the new key with a notBefore a few
 * seconds ahead and closes the old key's window at that same instant. Each
 * instance re-reads the rows every second and picks, for each signature, the
 * newest key whose window holds the signature's timestamp; an instance whose
 * view is older than the lead time refuses to sign (503) instead of guessing.
 * So once a rotation's notBefore has passed, which is when `aov keys rotate`
 * returns, every instance signs with the new key, and no receipt is ever signed
 * outside its key's published window (clocks are assumed NTP-synchronised).
 */
import { createCipheriv, createDecipheriv, createPrivateKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { ApiError } from '../errors.js';
import { PUBLIC_KEY_ENCODING, rawPublicKeyBase64 } from './ed25519.js';
import { makeSigner, type KeyRing, type PublicKeyInfo, type SigningKey } from './key-ring.js';
import { parseRfc3339, rfc3339Seconds } from './time.js';
import type { KeyStore, SigningKeyRecord } from '../store/store.js';

/** How far ahead of the rotation the new key's window starts (all instances switch at that instant). */
const ROTATION_LEAD_MS = 5_000;
/** How often an instance re-reads the key rows. */
const KEY_REFRESH_MS = 1_000;
/** An instance whose view of the keys is older than this refuses to sign (must stay below the lead). */
const KEY_VIEW_MAX_AGE_MS = 4_000;

const ENVELOPE = 'aes-256-gcm:v1';

/** Parses a 32-byte KEK written as 64 hex digits or standard base64; throws a message without the value. */
export function parseKeyEncryptionKey(text: string): Buffer {
  const s = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(s)) key = Buffer.from(s, 'hex');
  else if (/^[A-Za-z0-9+/]{43}=$/.test(s)) key = Buffer.from(s, 'base64');
  if (!key || key.length !== 32) throw new Error('must be 32 bytes written as 64 hex digits or base64 (e.g. openssl rand -base64 32)');
  return key;
}

/**
 * AES-256-GCM of the PKCS#8 DER under the KEK; the key version (or another label naming the key, such as the log
 * note key's) is authenticated data, so a row cannot be swapped for another.
 */
export function encryptPrivateKey(key: KeyObject, keyVersion: string, kek: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from(keyVersion, 'utf8'));
  const der = key.export({ format: 'der', type: 'pkcs8' });
  const ct = Buffer.concat([cipher.update(der), cipher.final()]);
  return [ENVELOPE, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
}

export function decryptPrivateKey(envelope: string, keyVersion: string, kek: Buffer): KeyObject {
  const parts = envelope.split(':');
  if (parts.length !== 5 || `${parts[0]}:${parts[1]}` !== ENVELOPE) throw new Error(`the private key of ${keyVersion} is not in the ${ENVELOPE} format`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(parts[2]!, 'base64'));
    decipher.setAAD(Buffer.from(keyVersion, 'utf8'));
    decipher.setAuthTag(Buffer.from(parts[3]!, 'base64'));
    const der = Buffer.concat([decipher.update(Buffer.from(parts[4]!, 'base64')), decipher.final()]);
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } catch {
    // Never the underlying message: nothing about the key may reach a log.
    throw new Error(`the private key of ${keyVersion} cannot be decrypted with this KEY_ENCRYPTION_KEY`);
  }
}

/** A fresh key row (private key encrypted) with its window starting at `notBefore`. */
function newKeyRecord(notBefore: Date, kek: Buffer, createdAt: Date = new Date()): SigningKeyRecord {
  const { privateKey } = generateKeyPairSync('ed25519');
  const day = notBefore.toISOString().slice(0, 10).replace(/-/g, '');
  const keyVersion = `k-${day}-${randomBytes(6).toString('hex')}`;
  return {
    keyVersion,
    publicKey: rawPublicKeyBase64(privateKey),
    status: 'active',
    notBefore: rfc3339Seconds(notBefore),
    notAfter: null,
    createdAt: createdAt.toISOString(),
    privateKey: encryptPrivateKey(privateKey, keyVersion, kek),
  };
}

/** Rotate for every instance on the database: returns the new key once its window has started (all instances then use it). */
export async function rotateDatabaseKeys(
  store: KeyStore,
  kek: Buffer,
  options: { clock?: () => Date; leadMs?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<PublicKeyInfo> {
  const clock = options.clock ?? (() => new Date());
  const now = clock();
  // Whole seconds, like the receipts' timestamps; at least the lead ahead.
  const start = new Date(Math.ceil((now.getTime() + (options.leadMs ?? ROTATION_LEAD_MS)) / 1000) * 1000);
  const row = newKeyRecord(start, kek, now);
  await store.addSigningKey(row);
  const wait = start.getTime() - clock().getTime();
  if (wait > 0) await (options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(wait);
  return publicKeyInfo(row);
}

/** The public key state of a key row, as the key ring and the agent card list it. */
export function publicKeyInfo(r: SigningKeyRecord): PublicKeyInfo {
  return {
    keyVersion: r.keyVersion,
    algorithm: 'Ed25519',
    publicKey: r.publicKey,
    publicKeyEncoding: PUBLIC_KEY_ENCODING,
    status: r.status,
    notBefore: r.notBefore,
    notAfter: r.notAfter,
  };
}

export interface DatabaseKeyRingOptions {
  store: KeyStore;
  /** The key-encryption key (32 bytes). */
  kek: Buffer;
  clock?: () => Date;
  /** Called when a background re-read fails (the ring keeps its last view until it is too old). */
  onRefreshError?: (err: unknown) => void;
}

export interface DatabaseKeyRing extends KeyRing {
  /** Re-read the rows now. */
  refresh(): Promise<void>;
  /** Null when a key can sign now, else why not. */
  problem(): string | null;
  /** Stop the background re-reads. */
  close(): void;
}

interface Loaded {
  row: SigningKeyRecord;
  info: PublicKeyInfo;
  from: number;
  until: number;
  signer: SigningKey | null;
  error: string | null;
}

/**
 * Opens the database key ring: the first instance on an empty database creates the
 * first key (concurrent first starts agree on one); later starts never create one.
 */
export async function createDatabaseKeyRing(options: DatabaseKeyRingOptions): Promise<DatabaseKeyRing> {
  const { store, kek } = options;
  const clock = options.clock ?? (() => new Date());
  const decrypted = new Map<string, KeyObject>();
  let keys: Loaded[] = [];
  let viewAt = 0;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  function load(rows: SigningKeyRecord[]): Loaded[] {
    return rows.map((row) => {
      let key = decrypted.get(row.keyVersion);
      let error: string | null = null;
      if (!key && row.privateKey) {
        try {
          key = decryptPrivateKey(row.privateKey, row.keyVersion, kek);
          if (rawPublicKeyBase64(key) !== row.publicKey) throw new Error(`the private key of ${row.keyVersion} does not match its public key`);
          decrypted.set(row.keyVersion, key);
        } catch (e) {
          key = undefined;
          error = e instanceof Error ? e.message : String(e);
        }
      } else if (!key) {
        error = `the private key of ${row.keyVersion} is not in the database`;
      }
      return {
        row,
        info: publicKeyInfo(row),
        from: parseRfc3339(row.notBefore) ?? Infinity,
        until: row.notAfter === null ? Infinity : (parseRfc3339(row.notAfter) ?? -Infinity),
        signer: key ? makeSigner(row.keyVersion, key) : null,
        error,
      };
    });
  }

  async function refresh(): Promise<void> {
    const started = clock().getTime();
    const rows = await store.signingKeys();
    keys = load(rows);
    viewAt = started;
  }

  let rows = await store.signingKeys();
  if (rows.length === 0) {
    const now = clock();
    await store.addSigningKey(newKeyRecord(new Date(Math.floor(now.getTime() / 1000) * 1000), kek, now), { onlyIfEmpty: true });
    rows = await store.signingKeys();
  }
  keys = load(rows);
  viewAt = clock().getTime();

  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => {
      refresh().then(schedule, (err: unknown) => {
        options.onRefreshError?.(err);
        schedule();
      });
    }, KEY_REFRESH_MS);
    timer.unref();
  };
  schedule();

  /** The key for a signature at `atMs`: the newest window holding it. */
  function pick(atMs: number): Loaded | undefined {
    let best: Loaded | undefined;
    for (const k of keys) {
      if (k.from <= atMs && atMs <= k.until && (!best || k.from > best.from || (k.from === best.from && k.row.createdAt > best.row.createdAt))) best = k;
    }
    return best;
  }

  function problemAt(atMs: number): string | null {
    if (clock().getTime() - viewAt > KEY_VIEW_MAX_AGE_MS) return 'the signing keys could not be read from the database recently';
    const k = pick(atMs);
    if (!k) return 'no signing key is valid now';
    return k.signer ? null : k.error;
  }

  const ring: DatabaseKeyRing = {
    signer(at?: string) {
      const atMs = (at === undefined ? undefined : parseRfc3339(at)) ?? Math.floor(clock().getTime() / 1000) * 1000;
      const problem = problemAt(atMs);
      if (problem) throw new ApiError('unavailable', { message: `No usable signing key (${problem}); nothing was stored or charged. Try again shortly.`, retryAfter: 2 });
      return pick(atMs)!.signer!;
    },
    active() {
      const k = pick(Math.floor(clock().getTime() / 1000) * 1000) ?? keys[keys.length - 1];
      if (!k) throw new Error('no signing key');
      return { ...k.info };
    },
    list: () => keys.map((k) => ({ ...k.info })),
    find: (v) => {
      const k = keys.find((x) => x.row.keyVersion === v);
      return k ? { ...k.info } : undefined;
    },
    rotate() {
      throw new Error('a database key ring rotates with rotateDatabaseKeys (aov keys rotate --database-url)');
    },
    reload() {
      void refresh().catch((err: unknown) => options.onRefreshError?.(err));
    },
    refresh,
    problem: () => problemAt(Math.floor(clock().getTime() / 1000) * 1000),
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
    },
  };
  return ring;
}
