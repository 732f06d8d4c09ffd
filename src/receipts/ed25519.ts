/**
 * @module Ed25519 key encodings used by receipts: the raw 32-byte public key
 * in standard base64 (the agent-card form of docs/protocol.md#keys) and PKCS#8 for
 * private keys. Kept apart from the key ring so offline verification needs no
 * file system.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

// DER headers of an Ed25519 SubjectPublicKeyInfo and of a PKCS#8 OneAsymmetricKey (RFC 8410).
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export const PUBLIC_KEY_ENCODING = 'base64 of the raw 32-byte Ed25519 public key';

const BASE64_32 = /^[A-Za-z0-9+/]{43}=$/;

/** Standard base64 of the raw 32 bytes of an Ed25519 public (or private's public) key. */
export function rawPublicKeyBase64(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const der = pub.export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - 32).toString('base64');
}

/** Imports a public key given as standard base64 of its raw 32 bytes; undefined when malformed. */
export function publicKeyFromBase64(text: unknown): KeyObject | undefined {
  if (typeof text !== 'string' || !BASE64_32.test(text)) return undefined;
  const raw = Buffer.from(text, 'base64');
  if (raw.length !== 32 || raw.toString('base64') !== text) return undefined;
  try {
    return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

/** Imports a raw 32-byte Ed25519 public key; undefined when it is not one. */
export function publicKeyFromRaw(raw: Uint8Array): KeyObject | undefined {
  if (raw.length !== 32) return undefined;
  try {
    return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

/** PKCS#8 PEM of the Ed25519 private key with this 32-byte seed (RFC 8032 "secret key"). */
export function privateKeyPemFromSeed(seed: Uint8Array): string {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return key.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/**
 * Parses a PKCS#8 PEM Ed25519 private key. The error never carries the key
 * text or the underlying parser's message, so nothing of the key can leak
 * into a log.
 */
export function privateKeyFromPem(pem: string, where: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new Error(`${where}: not a readable PKCS#8 PEM private key`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${where}: not an Ed25519 private key`);
  return key;
}
