/**
 * @module The log's note key: an Ed25519 key of its own, separate from the
 * receipt signing keys (a checkpoint and a receipt are different statements,
 * and the note key never rotates with them). The database records it, one key
 * per log origin (the key's name), so that every instance on the database
 * signs checkpoints as one log:
 *
 * - with KEY_ENCRYPTION_KEY (database mode), the private key is kept there,
 *   encrypted like the receipt signing keys; no instance needs a file. The
 *   first instance to start generates it — or imports an existing
 *   LOG_NOTE_KEY_FILE, so checkpoints signed before keep verifying — and
 *   instances that start at the same moment all read back the one key that
 *   was inserted first.
 * - without it (file mode), the private key stays in LOG_NOTE_KEY_FILE (PKCS#8
 *   PEM, mode 0600, created on first start) and the database records its public
 *   half: an instance whose file holds another key is told so (see the sequencer,
 *   which then refuses to sign) instead of publishing checkpoints under a second key.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { privateKeyFromPem, rawPublicKeyBase64 } from '../receipts/ed25519.js';
import { decryptPrivateKey, encryptPrivateKey } from '../receipts/key-store.js';
import type { LogNoteKeyRecord, LogNoteKeyStore } from '../store/store.js';
import { createNoteSigner, noteVerifierKey, type NoteSigner } from './note.js';

export function defaultNoteKeyFile(dataDir: string): string {
  return path.join(dataDir, 'log', 'note-key.pem');
}

/** Loads the note key, generating it (atomically, mode 0600) when the file does not exist. */
export function loadOrCreateNoteSigner(file: string, keyName: string): NoteSigner {
  return createNoteSigner(keyName, loadOrCreateKeyFile(file));
}

function loadOrCreateKeyFile(file: string): KeyObject {
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(tmp, pem, { mode: 0o600, flag: 'wx' });
    try {
      // A hard link never replaces an existing file: when two processes start together, the first key wins.
      linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      unlinkSync(tmp);
    }
  }
  return readKeyFile(file);
}

function readKeyFile(file: string): KeyObject {
  return privateKeyFromPem(readFileSync(file, 'utf8'), file);
}

export interface NoteKeyOptions {
  store: LogNoteKeyStore;
  /** The key name: the log origin (public host + `/log`). */
  name: string;
  /** LOG_NOTE_KEY_FILE: the key in file mode; in database mode only read, once, to import an existing key. */
  file: string;
  /** KEY_ENCRYPTION_KEY (32 bytes): database mode when set. */
  kek: Buffer | null;
  clock?: () => Date;
  /** Told about a key file that database mode no longer uses because it holds another key. */
  warn?: (msg: string) => void;
}

export interface NoteKey {
  mode: 'database' | 'file';
  signer: NoteSigner;
  /** The verifier key of the key the database records for this log: the log's one note-signing identity. */
  recordedVerifierKey: string;
  /** Null when this instance signs with the recorded key; else why not (it must then not sign checkpoints). */
  mismatch: string | null;
}

/** Authenticated data of an encrypted note key: names it, so a row cannot be swapped for a signing key's or another log's. */
const sealLabel = (name: string) => `log note key ${name}`;

/**
 * Opens the log's note key for `name` (see the module comment). Fails, without ever making a new
 * key, when the database records a key this instance cannot get hold of.
 */
export async function openNoteKey(options: NoteKeyOptions): Promise<NoteKey> {
  const { store, name, file, kek } = options;
  const clock = options.clock ?? (() => new Date());
  const fileKey = (): KeyObject | null => (existsSync(file) ? readKeyFile(file) : null);
  const recordedKey = (r: LogNoteKeyRecord) => noteVerifierKey(name, Buffer.from(r.publicKey, 'base64'));
  let row = await store.logNoteKey(name);

  if (kek) {
    if (!row) {
      // An existing file is imported: the checkpoints it signed keep verifying with the published key.
      const imported = fileKey();
      const key = imported ?? generateKeyPairSync('ed25519').privateKey;
      row = await store.addLogNoteKey({
        name,
        publicKey: rawPublicKeyBase64(key),
        privateKey: encryptPrivateKey(key, sealLabel(name), kek),
        source: imported ? 'file' : 'generated',
        createdAt: clock().toISOString(),
      });
    }
    if (row.privateKey === null) {
      // Recorded by an instance without KEY_ENCRYPTION_KEY: its file is stored, encrypted, once it is the recorded key.
      const key = fileKey();
      if (!key || rawPublicKeyBase64(key) !== row.publicKey) {
        throw new Error(
          `log note key: the database records the note key of ${name} (${recordedKey(row)}) without its private key, and ${file} ${key ? 'holds another key' : 'does not exist'}; start once with LOG_NOTE_KEY_FILE holding that key to store it in the database`,
        );
      }
      await store.sealLogNoteKey(name, row.publicKey, encryptPrivateKey(key, sealLabel(name), kek));
      row = (await store.logNoteKey(name)) ?? row;
      if (row.privateKey === null) throw new Error(`log note key: the note key of ${name} could not be stored in the database`);
    }
    const key = decryptPrivateKey(row.privateKey, sealLabel(name), kek);
    if (rawPublicKeyBase64(key) !== row.publicKey) throw new Error(`log note key: the private key of ${name} does not match its public key`);
    const local = fileKey();
    if (local && rawPublicKeyBase64(local) !== row.publicKey) {
      options.warn?.(`log note key: ${file} holds another key than the log's note key in the database (${recordedKey(row)}); the file is not used`);
    }
    const signer = createNoteSigner(name, key);
    return { mode: 'database', signer, recordedVerifierKey: signer.verifierKey, mismatch: null };
  }

  let key = fileKey();
  if (!key) {
    if (row) {
      // A new key once one is recorded would be a second note-signing identity for the same log.
      throw new Error(
        `log note key: the database records the note key of ${name} (${recordedKey(row)}) but ${file} does not exist; restore the file${row.privateKey ? ', or set the KEY_ENCRYPTION_KEY that holds it in the database' : ''} (a new note key is never created once one is recorded)`,
      );
    }
    key = loadOrCreateKeyFile(file);
  }
  const signer = createNoteSigner(name, key);
  if (!row) {
    row = await store.addLogNoteKey({ name, publicKey: rawPublicKeyBase64(key), privateKey: null, source: 'file', createdAt: clock().toISOString() });
  }
  const recordedVerifierKey = recordedKey(row);
  const mismatch =
    recordedVerifierKey === signer.verifierKey
      ? null
      : `this instance's note key (${signer.verifierKey}, ${file}) is not the log's note key recorded in the database (${recordedVerifierKey}); give every instance the same LOG_NOTE_KEY_FILE, or KEY_ENCRYPTION_KEY`;
  return { mode: 'file', signer, recordedVerifierKey, mismatch };
}
