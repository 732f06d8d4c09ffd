/**
 * @module The ERC-8004 validator's key as it sits on disk: 64 hex digits (0x optional), or those
 * sealed under the key-encryption key (KEY_ENCRYPTION_KEY) with the envelope the signing keys use
 * in the database, so a copied key file or backup is useless without the KEK. Errors name the
 * problem, never the key.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { decryptPrivateKey, encryptPrivateKey } from '../receipts/key-store.js';

/** Authenticated data of a sealed validator key: a sealed receipt key or fee payer cannot stand in. */
const SEAL_LABEL = 'erc8004-validator';
const SEALED_PREFIX = 'aes-256-gcm:v1:';
const HEX_KEY = /^(0x)?[0-9a-fA-F]{64}$/;
/** SEC1 ECPrivateKey DER around a raw secp256k1 scalar (version 1, the key, the curve's OID). */
const SEC1_HEAD = Buffer.from('302e0201010420', 'hex');
const SEC1_TAIL = Buffer.from('a00706052b8104000a', 'hex');

function secp256k1Key(hex: string): KeyObject {
  const d = Buffer.from(hex.replace(/^0x/, ''), 'hex');
  return createPrivateKey({ key: Buffer.concat([SEC1_HEAD, d, SEC1_TAIL]), format: 'der', type: 'sec1' });
}

/** The file's text sealed under `kek`: what `aov keys seal-validator-key` prints. */
export function sealValidatorKey(keyText: string, kek: Buffer): string {
  const text = keyText.trim();
  if (!HEX_KEY.test(text)) throw new Error('the key file must hold one private key: 64 hex digits, 0x optional');
  return encryptPrivateKey(secp256k1Key(text), SEAL_LABEL, kek);
}

/** The validator's private key (0x + 64 lowercase hex) from the file's text, plain or sealed. */
export function openValidatorKey(keyText: string, kek: Buffer | null): `0x${string}` {
  const text = keyText.trim();
  if (text.startsWith(SEALED_PREFIX)) {
    if (!kek) throw new Error('is sealed under a key-encryption key, and KEY_ENCRYPTION_KEY is not set');
    let key: KeyObject;
    try {
      key = decryptPrivateKey(text, SEAL_LABEL, kek);
    } catch {
      throw new Error('cannot be opened with this KEY_ENCRYPTION_KEY');
    }
    const jwk = key.export({ format: 'jwk' });
    if (jwk.crv !== 'secp256k1' || typeof jwk.d !== 'string') throw new Error('holds a key that is not a secp256k1 key');
    return `0x${Buffer.from(jwk.d, 'base64url').toString('hex').padStart(64, '0')}`;
  }
  if (!HEX_KEY.test(text)) throw new Error('must hold one private key: 64 hex digits (0x optional), or that key sealed by aov keys seal-validator-key');
  return `0x${text.replace(/^0x/, '').toLowerCase()}`;
}
