/**
 * @module The signing key ring (docs/protocol.md#keys). Ed25519 private keys live as
 * PKCS#8 PEM files (mode 0600) in a keys directory (mode 0700), each with a
 * small metadata file; the first use generates a key, rotation adds a new
 * active key and retires the previous one. Retired keys are kept and listed
 * forever so every receipt ever issued stays verifiable.
 *
 * A private key is only ever held as a KeyObject inside this module: callers
 * get a `sign()` handle, never the key, so it cannot end up in a response or
 * a log by accident.
 */
import { generateKeyPairSync, randomBytes, sign as edSign, type KeyObject } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { privateKeyFromPem, PUBLIC_KEY_ENCODING, rawPublicKeyBase64 } from './ed25519.js';
import { rfc3339Seconds } from './time.js';

export type KeyStatus = 'active' | 'retired';

export interface KeyMeta {
  keyVersion: string;
  status: KeyStatus;
  /** RFC 3339 UTC, whole seconds. */
  notBefore: string;
  /** RFC 3339 UTC, whole seconds; null while the key is active (open-ended). */
  notAfter: string | null;
}

/** What the agent card publishes for a key (docs/protocol.md#keys). */
export interface PublicKeyInfo {
  keyVersion: string;
  algorithm: 'Ed25519';
  publicKey: string;
  publicKeyEncoding: typeof PUBLIC_KEY_ENCODING;
  status: KeyStatus;
  notBefore: string;
  notAfter: string | null;
}

/** A handle on one private key: it can sign, it cannot be exported. */
export interface SigningKey {
  readonly keyVersion: string;
  sign(data: Uint8Array): Buffer;
}

export interface KeyRing {
  /**
   * The key to sign with (generated on first use by a file ring unless told not to).
   * `at` (RFC 3339) is the signature's timestamp: a ring whose keys have scheduled
   * windows picks the key valid at that instant.
   */
  signer(at?: string): SigningKey;
  /** Public info of the active key. */
  active(): PublicKeyInfo;
  /** Every key ever used, oldest first (empty before the first key is generated). */
  list(): PublicKeyInfo[];
  /** Public info of one key, or undefined. */
  find(keyVersion: string): PublicKeyInfo | undefined;
  /** Adds a new active key and retires the current one (notAfter = now); on an empty ring, generates the first. */
  rotate(): PublicKeyInfo;
  /** Re-reads the key store now (a file ring also does so by itself when its directory changes). */
  reload(): void;
}

export interface KeyRingOptions {
  /** The keys directory, e.g. `<dataDir>/keys`. Created with mode 0700 when missing. */
  dir: string;
  clock?: () => Date;
  /**
   * Generate the first key when the directory has none (default true). The service
   * turns this off after its first start: a key that went missing must never be
   * silently replaced by a new one (earlier receipts would no longer match the card).
   */
  generateWhenEmpty?: boolean;
}

/** A file key ring also says which loaded keys no longer have their files. */
export interface FileKeyRing extends KeyRing {
  /** Versions of keys loaded earlier whose files are gone (they still sign from memory), or why the directory cannot be read. */
  missing(): string[];
}

interface LoadedKey {
  meta: KeyMeta;
  /** Sub-second creation order, to pick the newest active key deterministically. */
  createdAt: string;
  info: PublicKeyInfo;
  signer: SigningKey;
}

const KEY_VERSION = /^k-\d{8}-[0-9a-f]{8,32}$/;

function publicInfo(meta: KeyMeta, key: KeyObject): PublicKeyInfo {
  return {
    keyVersion: meta.keyVersion,
    algorithm: 'Ed25519',
    publicKey: rawPublicKeyBase64(key),
    publicKeyEncoding: PUBLIC_KEY_ENCODING,
    status: meta.status,
    notBefore: meta.notBefore,
    notAfter: meta.notAfter,
  };
}

// The private key behind each handle, for keyObjectOf only: not a property, so it is never enumerated,
// logged or serialized with the handle.
const privateKeys = new WeakMap<SigningKey, KeyObject>();

/** A sign() handle on a key (both key rings make theirs here). */
export function makeSigner(keyVersion: string, key: KeyObject): SigningKey {
  const handle: SigningKey = {
    keyVersion,
    sign: (data) => edSign(null, data, key),
  };
  // Keep the handle inert under JSON.stringify / util.inspect.
  Object.defineProperty(handle, 'toJSON', { value: () => ({ keyVersion }), enumerable: false });
  Object.freeze(handle);
  privateKeys.set(handle, key);
  return handle;
}

/**
 * The private key of a handle made by a key ring, so that another thread of this process can sign
 * with exactly the key the handle stands for (a KeyObject crosses `postMessage`); undefined for any
 * other SigningKey, which then signs where it is.
 */
export function keyObjectOf(signer: SigningKey): KeyObject | undefined {
  return privateKeys.get(signer);
}

function newest(keys: LoadedKey[]): LoadedKey | undefined {
  let best: LoadedKey | undefined;
  for (const k of keys) {
    if (k.meta.status !== 'active') continue;
    if (!best || k.createdAt > best.createdAt || (k.createdAt === best.createdAt && k.meta.keyVersion > best.meta.keyVersion)) {
      best = k;
    }
  }
  return best;
}

function byAge(a: LoadedKey, b: LoadedKey): number {
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.meta.keyVersion < b.meta.keyVersion ? -1 : 1;
}

/** A key ring backed by PEM + metadata files in `options.dir`. */
export function createKeyRing(options: KeyRingOptions): FileKeyRing {
  const dir = path.resolve(options.dir);
  const clock = options.clock ?? (() => new Date());
  /** Parsed private keys by keyVersion: each PEM is parsed once per process. */
  const parsed = new Map<string, KeyObject>();
  let keys: LoadedKey[] | undefined;

  const metaPath = (v: string): string => path.join(dir, `${v}.json`);
  const pemPath = (v: string): string => path.join(dir, `${v}.pem`);

  function ensureDir(): void {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    try {
      chmodSync(dir, 0o700);
    } catch {
      // Not our directory to change; the files themselves are still 0600.
    }
  }

  function writeMeta(meta: KeyMeta, createdAt: string): void {
    const tmp = `${metaPath(meta.keyVersion)}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ ...meta, algorithm: 'Ed25519', createdAt }, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, metaPath(meta.keyVersion));
  }

  function load(): LoadedKey[] {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new Error(`cannot read the keys directory ${dir}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    const out: LoadedKey[] = [];
    for (const name of names) {
      const m = /^(.+)\.json$/.exec(name);
      if (!m || !KEY_VERSION.test(m[1])) continue;
      const keyVersion = m[1];
      let raw: Record<string, unknown>;
      try {
        raw = JSON.parse(readFileSync(metaPath(keyVersion), 'utf8')) as Record<string, unknown>;
      } catch {
        throw new Error(`key metadata ${metaPath(keyVersion)} is not readable JSON`);
      }
      const meta: KeyMeta = {
        keyVersion,
        status: raw.status === 'retired' ? 'retired' : 'active',
        notBefore: String(raw.notBefore),
        notAfter: typeof raw.notAfter === 'string' ? raw.notAfter : null,
      };
      let key = parsed.get(keyVersion);
      if (!key) {
        let pem: string;
        try {
          pem = readFileSync(pemPath(keyVersion), 'utf8');
        } catch {
          throw new Error(`private key file ${pemPath(keyVersion)} is missing or unreadable`);
        }
        key = privateKeyFromPem(pem, pemPath(keyVersion));
        parsed.set(keyVersion, key);
      }
      out.push({
        meta,
        createdAt: typeof raw.createdAt === 'string' ? raw.createdAt : meta.notBefore,
        info: publicInfo(meta, key),
        signer: makeSigner(keyVersion, key),
      });
    }
    return out.sort(byAge);
  }

  function generate(now: Date): LoadedKey {
    ensureDir();
    const day = now.toISOString().slice(0, 10).replace(/-/g, '');
    for (let attempt = 0; attempt < 10; attempt++) {
      const keyVersion = `k-${day}-${randomBytes(6).toString('hex')}`;
      const { privateKey } = generateKeyPairSync('ed25519');
      const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
      try {
        // 'wx': a key version is never reused, even if two processes race.
        writeFileSync(pemPath(keyVersion), pem, { mode: 0o600, flag: 'wx' });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw new Error(`cannot write a private key file in ${dir}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
      }
      const meta: KeyMeta = { keyVersion, status: 'active', notBefore: rfc3339Seconds(now), notAfter: null };
      const createdAt = now.toISOString();
      writeMeta(meta, createdAt);
      parsed.set(keyVersion, privateKey);
      return { meta, createdAt, info: publicInfo(meta, privateKey), signer: makeSigner(keyVersion, privateKey) };
    }
    throw new Error('could not allocate a new key version');
  }

  /** mtime of the keys directory when it was last read: adding or retiring a key renames a file into it. */
  let seenMtime: number | undefined;
  const dirMtime = (): number | undefined => statSync(dir, { throwIfNoEntry: false })?.mtimeMs;

  /**
   * Every key on disk, without generating one (listing must not create keys).
   * Re-read when the directory changed, so that a rotation made by another
   * process (`aov keys rotate`, another instance sharing the directory) is
   * picked up before the next signature instead of signing with a retired key.
   */
  function loaded(): LoadedKey[] {
    const mtime = dirMtime();
    if (!keys || mtime !== seenMtime) {
      try {
        keys = merge(load());
        unreadable = null;
      } catch (e) {
        // Keys already in memory keep signing; the problem is reported instead of failing every request.
        if (!keys) throw e;
        unreadable = e instanceof Error ? e.message : String(e);
      }
      seenMtime = mtime;
    }
    return keys;
  }
  let unreadable: string | null = null;

  /** Keys are never dropped: one loaded earlier whose files vanished stays (from memory) and is reported missing. */
  let missingVersions: string[] = [];
  function merge(fresh: LoadedKey[]): LoadedKey[] {
    if (!keys) return fresh;
    const seen = new Set(fresh.map((k) => k.meta.keyVersion));
    const gone = keys.filter((k) => !seen.has(k.meta.keyVersion));
    missingVersions = gone.map((k) => k.meta.keyVersion);
    return gone.length === 0 ? fresh : [...fresh, ...gone].sort(byAge);
  }

  function current(): LoadedKey {
    let k = newest(loaded());
    if (!k) {
      if (options.generateWhenEmpty === false) {
        throw new Error(`no signing key in ${dir}, and this service does not create one after its first start (restore the key files)`);
      }
      k = generate(clock());
      // Re-read rather than append: the new files changed the directory, so loaded() would list the key already.
      keys = merge(load());
      seenMtime = dirMtime();
    }
    return k;
  }

  /**
   * Whole second (of the clock) of the last directory check made for a signature. A key
   * retired by a rotation elsewhere has notAfter = the rotation's whole second, so a key
   * view checked at or after the start of second S may sign anything timestamped S: a
   * rotation it missed happened later, hence in second S or after, and the old key is
   * still inside its window. Checking once per second instead of once per signature
   * takes a stat system call off every request without ever signing past notAfter.
   */
  let checkedSecond = Number.NEGATIVE_INFINITY;
  function forSigning(at?: string): LoadedKey {
    const now = Math.floor(clock().getTime() / 1000);
    const parsedAt = at === undefined ? now : Math.floor(Date.parse(at) / 1000);
    const atSecond = Number.isFinite(parsedAt) ? parsedAt : Number.POSITIVE_INFINITY;
    if (keys && now <= checkedSecond && atSecond <= checkedSecond) {
      const k = newest(keys);
      if (k) return k;
    }
    const k = current();
    checkedSecond = now;
    return k;
  }

  return {
    signer: (at) => forSigning(at).signer,
    active: () => ({ ...current().info }),
    list: () => loaded().map((k) => ({ ...k.info })),
    find: (keyVersion) => {
      const k = loaded().find((x) => x.meta.keyVersion === keyVersion);
      return k ? { ...k.info } : undefined;
    },
    rotate: () => {
      const now = clock();
      const previous = loaded().filter((k) => k.meta.status === 'active');
      // The new key is written before the old ones are retired: at no moment is there no active key.
      const fresh = generate(now);
      for (const old of previous) {
        const meta: KeyMeta = { ...old.meta, status: 'retired', notAfter: rfc3339Seconds(now) };
        writeMeta(meta, old.createdAt);
      }
      keys = merge(load());
      seenMtime = dirMtime();
      return { ...fresh.info };
    },
    reload: () => {
      keys = merge(load());
      seenMtime = dirMtime();
    },
    missing: () => {
      loaded();
      return unreadable ? [...missingVersions, unreadable] : [...missingVersions];
    },
  };
}

export interface StaticKeyMeta {
  keyVersion: string;
  notBefore: string;
  notAfter?: string | null;
  status?: KeyStatus;
}

/** A fixed single-key ring from a PEM in memory (tests, golden receipts, embedding). Cannot rotate. */
export function createStaticKeyRing(privateKeyPem: string, meta: StaticKeyMeta): KeyRing {
  const key = privateKeyFromPem(privateKeyPem, 'static key');
  const full: KeyMeta = {
    keyVersion: meta.keyVersion,
    status: meta.status ?? 'active',
    notBefore: meta.notBefore,
    notAfter: meta.notAfter ?? null,
  };
  const info = publicInfo(full, key);
  const signer = makeSigner(full.keyVersion, key);
  return {
    signer: () => signer,
    active: () => ({ ...info }),
    list: () => [{ ...info }],
    find: (keyVersion) => (keyVersion === info.keyVersion ? { ...info } : undefined),
    rotate: () => {
      throw new Error('a static key ring cannot rotate');
    },
    reload: () => undefined,
  };
}
