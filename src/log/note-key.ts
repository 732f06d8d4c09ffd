/**
 * @module The log's note key: an Ed25519 key of its own, separate from the
 * receipt signing keys (a checkpoint and a receipt are different statements,
 * and the note key never rotates with them). It lives as a PKCS#8 PEM file
 * (mode 0600) — by default `<data dir>/log/note-key.pem`, created on first
 * start. Several instances behind one database must share the same file, or
 * their checkpoints would carry different signatures.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { privateKeyFromPem } from '../receipts/ed25519.js';
import { createNoteSigner, type NoteSigner } from './note.js';

export function defaultNoteKeyFile(dataDir: string): string {
  return path.join(dataDir, 'log', 'note-key.pem');
}

/** Loads the note key, generating it (atomically, mode 0600) when the file does not exist. */
export function loadOrCreateNoteSigner(file: string, keyName: string): NoteSigner {
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
  const key = privateKeyFromPem(readFileSync(file, 'utf8'), file);
  return createNoteSigner(keyName, key);
}
