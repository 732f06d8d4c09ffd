import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { sign, verify } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { privateKeyFromPem, privateKeyPemFromSeed, publicKeyFromBase64, PUBLIC_KEY_ENCODING } from './ed25519.js';
import { createKeyRing, createStaticKeyRing } from './key-ring.js';

const RFC8032_SEED = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
const RFC8032_PUBLIC = Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex');
const RFC8032_SIG_EMPTY =
  'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'aov-keys-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function fixedClock(iso: string): { clock: () => Date; set(iso: string): void } {
  let now = new Date(iso);
  return { clock: () => now, set: (t) => void (now = new Date(t)) };
}

describe('Ed25519 encodings', () => {
  it('RFC 8032 test 1: seed → public key and deterministic signature', () => {
    const pem = privateKeyPemFromSeed(RFC8032_SEED);
    const ring = createStaticKeyRing(pem, { keyVersion: 'k-test', notBefore: '2026-01-01T00:00:00Z' });
    expect(Buffer.from(ring.active().publicKey, 'base64').equals(RFC8032_PUBLIC)).toBe(true);
    expect(ring.signer().sign(Buffer.alloc(0)).toString('hex')).toBe(RFC8032_SIG_EMPTY);
  });
  it('rejects malformed public keys', () => {
    expect(publicKeyFromBase64(RFC8032_PUBLIC.toString('base64'))?.export({ format: 'jwk' })).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: RFC8032_PUBLIC.toString('base64url'),
    });
    expect(publicKeyFromBase64(RFC8032_PUBLIC.subarray(1).toString('base64'))).toBeUndefined();
    expect(publicKeyFromBase64(RFC8032_PUBLIC.toString('base64url'))).toBeUndefined();
    expect(publicKeyFromBase64(42)).toBeUndefined();
  });
  it('a bad PEM error carries no key material', () => {
    const pem = privateKeyPemFromSeed(RFC8032_SEED);
    const broken = pem.replace(/[A-Za-z]{4}\n-----END/, 'AAAA\n-----END').replace('MC4CAQ', 'XXXXXX');
    let err: unknown;
    try {
      privateKeyFromPem(broken, '/tmp/x.pem');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    const text = `${String(err)} ${inspect(err)} ${JSON.stringify(err)}`;
    expect(text).not.toMatch(/BEGIN|PRIVATE KEY|MC4CAQ/);
    expect(text).not.toContain(broken.split('\n')[1].slice(8, 30));
  });
});

describe('file key ring', () => {
  it('first use generates one active key: PEM 0600 in a 0700 directory, metadata beside it', () => {
    const keysDir = path.join(dir, 'data', 'keys');
    const t = fixedClock('2026-03-04T05:06:07.890Z');
    const ring = createKeyRing({ dir: keysDir, clock: t.clock });
    const info = ring.active();
    expect(info).toEqual({
      keyVersion: expect.stringMatching(/^k-20260304-[0-9a-f]+$/),
      algorithm: 'Ed25519',
      publicKey: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      publicKeyEncoding: PUBLIC_KEY_ENCODING,
      status: 'active',
      notBefore: '2026-03-04T05:06:07Z',
      notAfter: null,
    });
    expect(Object.keys(info)).toEqual(['keyVersion', 'algorithm', 'publicKey', 'publicKeyEncoding', 'status', 'notBefore', 'notAfter']);
    expect(statSync(keysDir).mode & 0o777).toBe(0o700);
    const pemFile = path.join(keysDir, `${info.keyVersion}.pem`);
    expect(statSync(pemFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(pemFile, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    // A second ring on the same directory loads the same key instead of generating another.
    const again = createKeyRing({ dir: keysDir });
    expect(again.list()).toEqual([info]);
  });

  it('the ring that generated its first key lists it once', () => {
    const ring = createKeyRing({ dir: path.join(dir, 'fresh') });
    const { keyVersion } = ring.signer();
    expect(ring.list().map((k) => k.keyVersion)).toEqual([keyVersion]);
    expect(ring.active().keyVersion).toBe(keyVersion);
  });

  it('listing an empty ring creates nothing', () => {
    const ring = createKeyRing({ dir: path.join(dir, 'k') });
    expect(ring.list()).toEqual([]);
    expect(ring.find('k-20260101-00000000')).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('signs with the active key; the public info verifies it', () => {
    const ring = createKeyRing({ dir });
    const s = ring.signer();
    const data = Buffer.from('hello');
    const sig = s.sign(data);
    expect(verify(null, data, publicKeyFromBase64(ring.find(s.keyVersion)!.publicKey)!, sig)).toBe(true);
  });

  it('rotate: new active key, old retired with notAfter = now, never deleted or reused', () => {
    const t = fixedClock('2026-03-04T05:06:07Z');
    const ring = createKeyRing({ dir, clock: t.clock });
    const first = ring.active();
    t.set('2026-04-01T00:00:00.500Z');
    const second = ring.rotate();
    t.set('2026-05-01T00:00:00Z');
    const third = ring.rotate();
    expect(new Set([first.keyVersion, second.keyVersion, third.keyVersion]).size).toBe(3);
    const list = ring.list();
    expect(list.map((k) => [k.keyVersion, k.status, k.notBefore, k.notAfter])).toEqual([
      [first.keyVersion, 'retired', '2026-03-04T05:06:07Z', '2026-04-01T00:00:00Z'],
      [second.keyVersion, 'retired', '2026-04-01T00:00:00Z', '2026-05-01T00:00:00Z'],
      [third.keyVersion, 'active', '2026-05-01T00:00:00Z', null],
    ]);
    expect(ring.signer().keyVersion).toBe(third.keyVersion);
    // Another process sees the same ring.
    expect(createKeyRing({ dir }).list()).toEqual(list);
    expect(readdirSync(dir).filter((f) => f.endsWith('.pem'))).toHaveLength(3);
  });

  it('a rotation made by another process is picked up before any signature past the old key\'s notAfter', () => {
    const t = fixedClock('2026-03-01T10:00:00.100Z');
    const a = createKeyRing({ dir, clock: t.clock });
    const b = createKeyRing({ dir, clock: t.clock });
    const k1 = a.signer('2026-03-01T10:00:00Z').keyVersion;
    expect(b.signer().keyVersion).toBe(k1);
    t.set('2026-03-01T10:00:00.600Z');
    const k2 = b.rotate().keyVersion;
    const retired = b.find(k1);
    expect(retired?.notAfter).toBe('2026-03-01T10:00:00Z');
    // Same second: the directory is not read again, and the old key is still inside its window.
    expect(a.signer('2026-03-01T10:00:00Z').keyVersion).toBe(k1);
    // A timestamp past the old key's notAfter forces a fresh look, even before the clock's second turns.
    expect(a.signer('2026-03-01T10:00:01Z').keyVersion).toBe(k2);
    // And so does the next second of the clock, with no timestamp given.
    const c = createKeyRing({ dir, clock: t.clock });
    t.set('2026-03-01T10:00:00.700Z');
    expect(c.signer().keyVersion).toBe(k2);
    const k2b = b.rotate().keyVersion;
    expect(c.signer().keyVersion).toBe(k2);
    t.set('2026-03-01T10:00:01.000Z');
    expect(c.signer().keyVersion).toBe(k2b);
    const k2c = b.rotate().keyVersion;
    t.set('2026-03-01T10:00:02.000Z');
    expect(a.signer().keyVersion).toBe(k2c);
    expect(a.find(k1)?.status).toBe('retired');
    const k3 = b.rotate().keyVersion;
    a.reload();
    expect(a.signer().keyVersion).toBe(k3);
  });

  it('no output, error or handle ever contains the private key', () => {
    const ring = createKeyRing({ dir });
    const s = ring.signer();
    const pem = readFileSync(path.join(dir, `${s.keyVersion}.pem`), 'utf8');
    const body = pem.split('\n')[1];
    const outputs = [JSON.stringify(ring.list()), JSON.stringify(ring.active()), JSON.stringify(s), inspect(s, { depth: 5 }), inspect(ring, { depth: 5 })];
    // A corrupt key file: the error names the file, not its content.
    const other = path.join(dir, 'k-20260101-00000000.pem');
    writeFileSync(other, pem.replace(body, body.slice(0, 20) + '!!' + body.slice(22)), { mode: 0o600 });
    writeFileSync(path.join(dir, 'k-20260101-00000000.json'), JSON.stringify({ status: 'retired', notBefore: '2026-01-01T00:00:00Z' }));
    let err: unknown;
    try {
      createKeyRing({ dir }).list();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('k-20260101-00000000.pem');
    outputs.push(String(err), inspect(err), (err as Error).stack ?? '');
    for (const out of outputs) {
      expect(out).not.toContain('PRIVATE KEY');
      expect(out).not.toContain(body.slice(0, 24));
      expect(out).not.toContain(body.slice(20, 44));
    }
  });

  it('static ring cannot rotate and signs like node:crypto with the same key', () => {
    const pem = privateKeyPemFromSeed(RFC8032_SEED);
    const ring = createStaticKeyRing(pem, { keyVersion: 'k-x', notBefore: '2026-01-01T00:00:00Z' });
    expect(() => ring.rotate()).toThrow(/static/);
    const data = Buffer.from('abc');
    expect(ring.signer().sign(data).equals(sign(null, data, privateKeyFromPem(pem, 'x')))).toBe(true);
  });
});
