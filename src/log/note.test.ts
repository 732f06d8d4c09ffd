/**
 * @module Signed notes and checkpoints against the published vectors: the Ed25519 key, note and signature of
 * golang.org/x/mod/sumdb/note (note_test.go: the "PeterNeumann" key pair) and the verifier key example of the
 * C2SP signed-note specification (github.com/C2SP/C2SP signed-note.md, "example.com/foo").
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createNoteSigner, formatCheckpoint, logOrigin, noteSignerFromPrivateKeyText, openCheckpoint, openNote, parseCheckpoint, parseVerifierKey } from './note.js';

const SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const SIGNED = `${TEXT}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

describe('signed notes (golang.org/x/mod/sumdb/note vectors)', () => {
  it('signs the reference text byte for byte and derives the reference verifier key', () => {
    const signer = noteSignerFromPrivateKeyText(SKEY);
    expect(signer.verifierKey).toBe(VKEY);
    expect(signer.sign(TEXT)).toBe(SIGNED);
  });
  it('opens the reference note; a changed text or signature is refused', () => {
    expect(openNote(SIGNED, VKEY)).toBe(TEXT);
    expect(() => openNote(SIGNED.replace('cryptography', 'cryptographY'), VKEY)).toThrow(/does not verify/);
    expect(() => openNote(SIGNED.replace('x08go/', 'x08go+'), VKEY)).toThrow();
  });
  it('ignores unknown keys but requires one trusted signature', () => {
    const other = createNoteSigner('witness.example/w1', generateKeyPairSync('ed25519').privateKey);
    const cosigned = `${SIGNED}${other.sign(TEXT).split('\n\n')[1]}`;
    expect(openNote(cosigned, VKEY)).toBe(TEXT);
    expect(() => openNote(other.sign(TEXT), VKEY)).toThrow(/no signature of the trusted key/);
  });
  it('accepts the C2SP spec example verifier key and refuses mangled keys', () => {
    expect(parseVerifierKey('example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k').name).toBe('example.com/foo');
    expect(() => parseVerifierKey('PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')).toThrow();
    expect(() => parseVerifierKey('PeterNeumann+c74f20a3+Ahpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')).toThrow();
    expect(() => parseVerifierKey('Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW')).toThrow();
  });
  it('verifies the C2SP spec example note', () => {
    const note = 'This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';
    expect(openNote(note, 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k')).toBe('This is an example message.\n');
  });
});

describe('checkpoints (C2SP tlog-checkpoint)', () => {
  it('round-trips the spec example body and refuses malformed ones', () => {
    const text = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
    const c = parseCheckpoint(text);
    expect(c.origin).toBe('example.com/behind-the-sofa');
    expect(c.size).toBe(20852163);
    expect(formatCheckpoint(c)).toBe(text);
    expect(() => parseCheckpoint(text.replace('20852163', '020852163'))).toThrow();
    expect(() => parseCheckpoint('a\n1\n')).toThrow();
  });
  it('signed by the log key, opened with its verifier key and origin', () => {
    const signer = createNoteSigner('verifier.example/log', generateKeyPairSync('ed25519').privateKey);
    const note = signer.sign(formatCheckpoint({ origin: 'verifier.example/log', size: 3, root: Buffer.alloc(32, 7) }));
    expect(openCheckpoint(note, signer.verifierKey, 'verifier.example/log').size).toBe(3);
    expect(() => openCheckpoint(note, signer.verifierKey, 'other.example/log')).toThrow(/origin/);
  });
  it('origin is the public host and path plus /log, without scheme', () => {
    expect(logOrigin('https://verify.example.com')).toBe('verify.example.com/log');
    expect(logOrigin('http://127.0.0.1:8080/api/')).toBe('127.0.0.1:8080/api/log');
  });
});
