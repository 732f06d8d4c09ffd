/**
 * @module The log note key in the database (a real SQLite file): generated once and shared, encrypted
 * under the key-encryption key; an existing key file imported, so checkpoints it signed keep verifying;
 * a key recorded from a file sealed into the database later; file mode records the public half and
 * tells an instance with another key; a recorded key is never replaced by a new one. The sequencer of
 * an instance whose key is not the log's, or that finds the newest checkpoint signed by another key,
 * signs nothing and says why.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../store/sqlite.js';
import { loadOrCreateNoteSigner, openNoteKey } from './note-key.js';
import { formatCheckpoint, openCheckpoint } from './note.js';
import { createSequencer } from './sequencer.js';

const NAME = 'verify.example.test/log';
let dirs: string[] = [];
let stores: SqliteStore[] = [];

function setup(): { dir: string; file: string; open(): SqliteStore } {
  const dir = mkdtempSync(path.join(tmpdir(), 'aov-note-key-'));
  dirs.push(dir);
  return {
    dir,
    file: path.join(dir, 'log', 'note-key.pem'),
    open() {
      const s = createSqliteStore({ file: path.join(dir, 'verifier.db') });
      stores.push(s);
      return s;
    },
  };
}

afterEach(async () => {
  for (const s of stores) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  stores = [];
  dirs = [];
});

describe('log note key in the database', () => {
  it('with a key-encryption key: generated once, encrypted, the same for every opener (also at once), and no file is written', async () => {
    const t = setup();
    const kek = randomBytes(32);
    const handles = [t.open(), t.open(), t.open(), t.open()];
    const keys = await Promise.all(handles.map((store, i) => openNoteKey({ store, name: NAME, file: path.join(t.dir, `k${i}.pem`), kek })));
    const vkey = keys[0]!.signer.verifierKey;
    for (const k of keys) {
      expect(k).toMatchObject({ mode: 'database', recordedVerifierKey: vkey, mismatch: null });
      expect(k.signer.verifierKey).toBe(vkey);
    }
    for (let i = 0; i < handles.length; i++) expect(existsSync(path.join(t.dir, `k${i}.pem`))).toBe(false);
    const row = await handles[0]!.logNoteKey(NAME);
    expect(row).toMatchObject({ name: NAME, source: 'generated' });
    expect(row!.privateKey).toMatch(/^aes-256-gcm:v1:/);
    // The sealed text holds no PEM or DER of the key in the clear.
    expect(row!.privateKey).not.toContain('PRIVATE KEY');

    // A checkpoint one instance signs verifies with what another publishes.
    const note = keys[1]!.signer.sign(formatCheckpoint({ origin: NAME, size: 0, root: Buffer.alloc(32) }));
    expect(openCheckpoint(note, keys[3]!.recordedVerifierKey, NAME).size).toBe(0);

    // Another key-encryption key cannot open it, and never replaces it with a new key.
    await expect(openNoteKey({ store: handles[0]!, name: NAME, file: t.file, kek: randomBytes(32) })).rejects.toThrow(/cannot be decrypted with this KEY_ENCRYPTION_KEY/);
    expect(await handles[0]!.logNoteKey(NAME)).toEqual(row);
  });

  it('an existing key file is imported on first start: checkpoints signed before keep verifying; later starts need no file', async () => {
    const t = setup();
    const before = loadOrCreateNoteSigner(t.file, NAME);
    const oldNote = before.sign(formatCheckpoint({ origin: NAME, size: 3, root: Buffer.alloc(32, 7) }));
    const kek = randomBytes(32);
    const store = t.open();
    const k = await openNoteKey({ store, name: NAME, file: t.file, kek });
    expect(k.signer.verifierKey).toBe(before.verifierKey);
    expect(openCheckpoint(oldNote, k.recordedVerifierKey, NAME).size).toBe(3);
    expect(await store.logNoteKey(NAME)).toMatchObject({ source: 'file' });
    rmSync(t.file);
    const again = await openNoteKey({ store, name: NAME, file: t.file, kek });
    expect(again.signer.verifierKey).toBe(before.verifierKey);
  });

  it('file mode records the public half; an instance with another file is told; a recorded key is sealed once a key-encryption key is given', async () => {
    const t = setup();
    const store = t.open();
    const first = await openNoteKey({ store, name: NAME, file: t.file, kek: null });
    expect(first).toMatchObject({ mode: 'file', mismatch: null });
    expect(existsSync(t.file)).toBe(true);
    expect(await store.logNoteKey(NAME)).toMatchObject({ privateKey: null, source: 'file', publicKey: expect.any(String) });

    // A fresh data directory gets no key of its own once one is recorded: the start is refused.
    const otherFile = path.join(t.dir, 'other', 'note-key.pem');
    await expect(openNoteKey({ store, name: NAME, file: otherFile, kek: null })).rejects.toThrow(/does not exist; restore the file/);
    expect(existsSync(otherFile)).toBe(false);
    // One with a key file of its own (as each instance made before the key was recorded): it learns it is not the
    // log's key, and publishes the log's.
    loadOrCreateNoteSigner(otherFile, NAME);
    const other = await openNoteKey({ store, name: NAME, file: otherFile, kek: null });
    expect(other.signer.verifierKey).not.toBe(first.signer.verifierKey);
    expect(other.recordedVerifierKey).toBe(first.signer.verifierKey);
    expect(other.mismatch).toContain("is not the log's note key recorded in the database");

    // The recorded key's file gone: no new key, a start is refused.
    const moved = `${t.file}.moved`;
    renameSync(t.file, moved);
    await expect(openNoteKey({ store, name: NAME, file: t.file, kek: null })).rejects.toThrow(/does not exist; restore the file/);
    expect(existsSync(t.file)).toBe(false);
    // With a key-encryption key but without the file, the private key cannot be had either.
    const kek = randomBytes(32);
    await expect(openNoteKey({ store, name: NAME, file: t.file, kek })).rejects.toThrow(/without its private key/);
    await expect(openNoteKey({ store, name: NAME, file: otherFile, kek })).rejects.toThrow(/holds another key/);
    renameSync(moved, t.file);

    const sealed = await openNoteKey({ store, name: NAME, file: t.file, kek });
    expect(sealed).toMatchObject({ mode: 'database', mismatch: null });
    expect(sealed.signer.verifierKey).toBe(first.signer.verifierKey);
    expect((await store.logNoteKey(NAME))!.privateKey).toMatch(/^aes-256-gcm:v1:/);
    rmSync(t.file);
    expect((await openNoteKey({ store, name: NAME, file: t.file, kek })).signer.verifierKey).toBe(first.signer.verifierKey);
  });
});

describe('the sequencer signs only as the log note key', () => {
  const receipt = (id: string) => ({ verificationId: id, agentId: 'a', taskId: `t-${id}`, result: 'pass' as const, overallRatio: 1, verifiedAt: '2026-01-01T00:00:00Z', keyVersion: 'k1', receipt: `{"verification_id":"${id}"}` });

  it('an instance with another key than the recorded one, or finding a checkpoint of another key, signs nothing and says why', async () => {
    const t = setup();
    const store = t.open();
    const good = await openNoteKey({ store, name: NAME, file: t.file, kek: null });
    loadOrCreateNoteSigner(path.join(t.dir, 'other.pem'), NAME);
    const bad = await openNoteKey({ store, name: NAME, file: path.join(t.dir, 'other.pem'), kek: null });

    const statuses: Array<string | null> = [];
    const badSeq = createSequencer({ store, signer: bad.signer, origin: NAME, keyMismatch: bad.mismatch, onStatus: (s) => statuses.push(s?.code ?? null) });
    expect(badSeq.status()).toMatchObject({ code: 'note_key_not_recorded' });
    await store.saveReceipt(receipt('r1'));
    const untouched = await badSeq.integrate();
    expect(untouched).toMatchObject({ size: 0, note: '' });
    expect((await store.logPending(10)).length).toBe(1);

    const goodSeq = createSequencer({ store, signer: good.signer, origin: NAME, keyMismatch: good.mismatch });
    const head = await goodSeq.integrate();
    expect(head.size).toBe(1);
    expect(openCheckpoint(head.note, good.recordedVerifierKey, NAME).size).toBe(1);
    expect(goodSeq.status()).toBeNull();

    // A sequencer with a key of its own (say, another public URL, so another recorded key): the newest checkpoint is
    // not its key's, so it neither re-signs it nor appends, whatever is queued.
    const elsewhere = await openNoteKey({ store, name: 'other.example.test/log', file: path.join(t.dir, 'elsewhere.pem'), kek: null });
    const foreign = createSequencer({ store, signer: elsewhere.signer, origin: 'other.example.test/log', keyMismatch: elsewhere.mismatch, onStatus: (s) => statuses.push(s?.code ?? null) });
    await store.saveReceipt(receipt('r2'));
    expect(await foreign.integrate()).toEqual(head);
    expect(foreign.status()).toMatchObject({ code: 'checkpoint_signed_by_other_key', problem: expect.stringContaining('tree size 1') });
    expect(statuses).toEqual(['checkpoint_signed_by_other_key']);
    expect((await goodSeq.integrate()).size).toBe(2);
  });

  it('without a fixed public URL, the first integration re-signs another name\'s checkpoint once; later ones refuse', async () => {
    const t = setup();
    const store = t.open();
    const before = await openNoteKey({ store, name: '127.0.0.1:8080/log', file: t.file, kek: null });
    await store.saveReceipt(receipt('r1'));
    const first = await createSequencer({ store, signer: before.signer, origin: '127.0.0.1:8080/log' }).integrate();

    // Restarted on another port, same data directory: the log is renamed, at start only.
    const after = await openNoteKey({ store, name: '127.0.0.1:9090/log', file: t.file, kek: null });
    const adopted: string[] = [];
    const seq = createSequencer({ store, signer: after.signer, origin: '127.0.0.1:9090/log', adoptAtStart: true, onAdopt: (n) => adopted.push(n) });
    const head = await seq.integrate();
    expect(adopted).toEqual([first.note]);
    expect(head).toMatchObject({ size: 1, root: first.root });
    expect(openCheckpoint(head.note, after.recordedVerifierKey, '127.0.0.1:9090/log').size).toBe(1);
    expect(seq.status()).toBeNull();

    // Another instance renames it back meanwhile (its own start): this one, past its start, now refuses.
    const back = createSequencer({ store, signer: before.signer, origin: '127.0.0.1:8080/log', adoptAtStart: true });
    await store.saveReceipt(receipt('r2'));
    expect((await back.integrate()).size).toBe(2);
    await store.saveReceipt(receipt('r3'));
    expect((await seq.integrate()).size).toBe(2);
    expect(seq.status()).toMatchObject({ code: 'checkpoint_signed_by_other_key' });

    // An instance whose key is not the recorded one never adopts.
    loadOrCreateNoteSigner(path.join(t.dir, 'stray.pem'), '127.0.0.1:8080/log');
    const stray = await openNoteKey({ store, name: '127.0.0.1:8080/log', file: path.join(t.dir, 'stray.pem'), kek: null });
    const straySeq = createSequencer({ store, signer: stray.signer, origin: '127.0.0.1:8080/log', keyMismatch: stray.mismatch, adoptAtStart: true });
    expect((await straySeq.integrate()).size).toBe(2);
    expect(straySeq.status()).toMatchObject({ code: 'note_key_not_recorded' });
  });
});
