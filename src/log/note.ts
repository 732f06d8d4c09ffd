/**
 * @module C2SP signed notes with Ed25519 keys, and the C2SP tlog-checkpoint
 * body they carry. A checkpoint is "origin\nsize\nbase64(root)\n"; the note
 * appends a blank line and "— <key name> base64(key id || signature)\n". The
 * verifier key "<name>+<hex key id>+base64(0x01 || public key)" is what
 * clients and witnesses configure; the key id is the first four bytes of
 * SHA-256(name || 0x0A || 0x01 || public key).
 */
import { createHash, createPrivateKey, createPublicKey, sign as edSign, verify as edVerify, type KeyObject } from 'node:crypto';
import { rawPublicKeyBase64 } from '../receipts/ed25519.js';

const ED25519_TYPE = 0x01;
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const EM_DASH = '\u2014';
/** Verifiers must accept at least 16 signatures; more than this is refused as malformed. */
const MAX_SIGNATURES = 100;

export class NoteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoteError';
  }
}

/** A key name: non-empty, no Unicode spaces, no plus sign. */
function isValidKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name);
}

function noteKeyId(name: string, publicKey: Uint8Array): number {
  const h = createHash('sha256').update(name, 'utf8').update(Buffer.from([0x0a, ED25519_TYPE])).update(publicKey).digest();
  return h.readUInt32BE(0);
}

function hex8(id: number): string {
  return id.toString(16).padStart(8, '0');
}

/** The verifier key `<name>+<hex key id>+<base64(0x01 || public key)>` of a raw 32-byte Ed25519 public key. */
export function noteVerifierKey(name: string, publicKey: Uint8Array): string {
  if (!isValidKeyName(name)) throw new NoteError(`note key name must be non-empty without spaces or '+': ${JSON.stringify(name)}`);
  if (publicKey.length !== 32) throw new NoteError('an Ed25519 public key has 32 bytes');
  return `${name}+${hex8(noteKeyId(name, publicKey))}+${Buffer.concat([Buffer.from([ED25519_TYPE]), publicKey]).toString('base64')}`;
}

export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  /** `<name>+<hex key id>+<base64(0x01 || public key)>`. */
  readonly verifierKey: string;
  /** Signs `text` (which must end in a newline) and returns the whole signed note. */
  sign(text: string): string;
}

export function createNoteSigner(name: string, privateKey: KeyObject): NoteSigner {
  if (!isValidKeyName(name)) throw new NoteError(`note key name must be non-empty without spaces or '+': ${JSON.stringify(name)}`);
  if (privateKey.asymmetricKeyType !== 'ed25519' || privateKey.type !== 'private') throw new NoteError('note key must be an Ed25519 private key');
  const pub = Buffer.from(rawPublicKeyBase64(privateKey), 'base64');
  const keyId = noteKeyId(name, pub);
  const verifierKey = noteVerifierKey(name, pub);
  return {
    name,
    keyId,
    verifierKey,
    sign(text: string): string {
      checkText(text);
      const sig = edSign(null, Buffer.from(text, 'utf8'), privateKey);
      const blob = Buffer.alloc(4 + sig.length);
      blob.writeUInt32BE(keyId, 0);
      sig.copy(blob, 4);
      return `${text}\n${EM_DASH} ${name} ${blob.toString('base64')}\n`;
    },
  };
}

/** Signer from the Go-style private key text `PRIVATE+KEY+<name>+<hex id>+base64(0x01 || seed)` (test vectors use it). */
export function noteSignerFromPrivateKeyText(text: string): NoteSigner {
  // The base64 key may itself contain '+': only the first four are separators.
  const parts = text.split('+');
  if (parts.length < 5 || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY') throw new NoteError('not a PRIVATE+KEY+name+id+key string');
  const [, , name, id] = parts as [string, string, string, string];
  const b64 = parts.slice(4).join('+');
  const raw = Buffer.from(b64, 'base64');
  if (raw.length !== 33 || raw[0] !== ED25519_TYPE) throw new NoteError('private key is not an Ed25519 note key');
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, raw.subarray(1)]), format: 'der', type: 'pkcs8' });
  const signer = createNoteSigner(name, key);
  if (hex8(signer.keyId) !== id) throw new NoteError('private key id does not match its key');
  return signer;
}

export interface NoteVerifier {
  name: string;
  keyId: number;
  publicKey: KeyObject;
}

/** Parses a verifier key; throws NoteError when it is malformed or its id does not match. */
export function parseVerifierKey(vkey: string): NoteVerifier {
  const first = vkey.indexOf('+');
  const second = first < 0 ? -1 : vkey.indexOf('+', first + 1);
  if (first <= 0 || second < 0) throw new NoteError('verifier key must be <name>+<hex id>+<base64 key>');
  const name = vkey.slice(0, first);
  const id = vkey.slice(first + 1, second);
  const b64 = vkey.slice(second + 1);
  if (!isValidKeyName(name) || !/^[0-9a-f]{8}$/.test(id)) throw new NoteError('verifier key has a malformed name or key id');
  const raw = Buffer.from(b64, 'base64');
  if (raw.toString('base64') !== b64 || raw.length !== 33 || raw[0] !== ED25519_TYPE) throw new NoteError('verifier key is not an Ed25519 note key');
  const pub = raw.subarray(1);
  const keyId = noteKeyId(name, pub);
  if (hex8(keyId) !== id) throw new NoteError('verifier key id does not match its key');
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, pub]), format: 'der', type: 'spki' });
  } catch {
    throw new NoteError('verifier key holds no valid Ed25519 public key');
  }
  return { name, keyId, publicKey };
}

function checkText(text: string): void {
  if (!text.endsWith('\n')) throw new NoteError('note text must end with a newline');
  if (/[\x00-\x09\x0b-\x1f]/.test(text)) throw new NoteError('note text must not contain control characters other than newline');
}

/**
 * Opens a signed note with one trusted key: returns its text when a signature
 * by that key (same name and id) verifies; throws otherwise. Signatures of
 * other keys (witnesses, a rotated log key) are ignored, as the format requires.
 */
export function openNote(note: string, verifier: NoteVerifier | string): string {
  const v = typeof verifier === 'string' ? parseVerifierKey(verifier) : verifier;
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('malformed note: no blank line before the signatures');
  const text = note.slice(0, split + 1);
  const sigBlock = note.slice(split + 2);
  checkText(text);
  if (!sigBlock.endsWith('\n')) throw new NoteError('malformed note: signatures must end with a newline');
  const lines = sigBlock.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new NoteError('malformed note: too many signatures');
  let verified = false;
  for (const line of lines) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/]+=*)$/u.exec(line);
    if (!m) throw new NoteError('malformed note: bad signature line');
    const [, name, b64] = m as unknown as [string, string, string];
    const blob = Buffer.from(b64, 'base64');
    if (blob.length < 4) throw new NoteError('malformed note: signature too short');
    if (name !== v.name || blob.readUInt32BE(0) !== v.keyId) continue;
    if (blob.length !== 68 || !edVerify(null, Buffer.from(text, 'utf8'), v.publicKey, blob.subarray(4))) {
      throw new NoteError(`the signature of ${name} does not verify`);
    }
    verified = true;
  }
  if (!verified) throw new NoteError('the note carries no signature of the trusted key');
  return text;
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
  /** Extension lines (none are written by this log). */
  extensions: string[];
}

export function formatCheckpoint(c: { origin: string; size: number; root: Uint8Array }): string {
  if (c.origin.length === 0 || c.origin.includes('\n')) throw new NoteError('checkpoint origin must be one non-empty line');
  if (!Number.isSafeInteger(c.size) || c.size < 0) throw new NoteError('checkpoint size must be a non-negative integer');
  if (c.root.length !== 32) throw new NoteError('checkpoint root must be 32 bytes');
  return `${c.origin}\n${c.size}\n${Buffer.from(c.root).toString('base64')}\n`;
}

/** Parses checkpoint text (the note text, not the signed note). */
export function parseCheckpoint(text: string): Checkpoint {
  if (!text.endsWith('\n')) throw new NoteError('checkpoint must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) throw new NoteError('checkpoint needs origin, size and root lines');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (origin.length === 0) throw new NoteError('checkpoint origin is empty');
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw new NoteError('checkpoint size is not a decimal number');
  const root = Buffer.from(rootText, 'base64');
  if (root.length !== 32 || root.toString('base64') !== rootText) throw new NoteError('checkpoint root is not base64 of 32 bytes');
  if (extensions.some((l) => l.length === 0)) throw new NoteError('checkpoint extension lines must not be empty');
  return { origin, size: Number(sizeText), root, extensions };
}

/** Opens a signed checkpoint with a trusted verifier key and parses it. */
export function openCheckpoint(note: string, verifierKey: string, origin?: string): Checkpoint {
  const v = parseVerifierKey(verifierKey);
  const c = parseCheckpoint(openNote(note, v));
  if (origin !== undefined && c.origin !== origin) throw new NoteError(`checkpoint origin ${JSON.stringify(c.origin)} is not ${JSON.stringify(origin)}`);
  return c;
}

/** The checkpoint origin (and note key name) of a service: its public host and path + "/log", without scheme. */
export function logOrigin(publicBaseUrl: string): string {
  const u = new URL(publicBaseUrl);
  return `${u.host}${u.pathname.replace(/\/+$/, '')}/log`;
}
