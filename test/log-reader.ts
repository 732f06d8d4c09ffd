/**
 * @module An independent reader of the transparency log for tests, written from the published formats
 * alone (RFC 6962 hashing by its recursive definitions, C2SP signed-note, tlog-checkpoint and tlog-tiles);
 * it deliberately imports nothing from src/log, so a shared mistake cannot make both sides agree.
 */
import { createHash, createPublicKey, verify as edVerify } from 'node:crypto';
import { expect } from 'vitest';

export const sha = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
export const mthLeaf = (e: Uint8Array) => sha(Buffer.from([0]), e);
export const mthNode = (l: Uint8Array, r: Uint8Array) => sha(Buffer.from([1]), l, r);
const pow2Below = (n: number) => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};
export function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return leaves[0]!;
  const k = pow2Below(leaves.length);
  return mthNode(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
export function path(m: number, leaves: Buffer[]): Buffer[] {
  if (leaves.length <= 1) return [];
  const k = pow2Below(leaves.length);
  return m < k ? [...path(m, leaves.slice(0, k)), mth(leaves.slice(k))] : [...path(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}
export function subproof(m: number, leaves: Buffer[], whole: boolean): Buffer[] {
  const n = leaves.length;
  if (m === n) return whole ? [] : [mth(leaves)];
  const k = pow2Below(n);
  return m <= k
    ? [...subproof(m, leaves.slice(0, k), whole), mth(leaves.slice(k))]
    : [...subproof(m - k, leaves.slice(k), false), mth(leaves.slice(0, k))];
}
export function openCheckpointNote(note: string, vkey: string): { origin: string; size: number; root: Buffer } {
  const [name, idHex, keyB64] = [vkey.slice(0, vkey.indexOf('+')), vkey.split('+')[1]!, vkey.split('+').slice(2).join('+')];
  const raw = Buffer.from(keyB64, 'base64');
  expect(raw[0]).toBe(1);
  const keyId = sha(Buffer.from(`${name}\n`), raw).subarray(0, 4).toString('hex');
  expect(keyId).toBe(idHex);
  const pub = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw.subarray(1)]), format: 'der', type: 'spki' });
  const cut = note.lastIndexOf('\n\n');
  const text = note.slice(0, cut + 1);
  const sigLines = note.slice(cut + 2).trimEnd().split('\n');
  const mine = sigLines.map((l) => /^— (\S+) (\S+)$/.exec(l)).find((m) => m && m[1] === name);
  expect(mine).toBeTruthy();
  const blob = Buffer.from(mine![2]!, 'base64');
  expect(blob.subarray(0, 4).toString('hex')).toBe(idHex);
  expect(edVerify(null, Buffer.from(text), pub, blob.subarray(4))).toBe(true);
  const [origin, size, root] = text.trimEnd().split('\n');
  return { origin: origin!, size: Number(size), root: Buffer.from(root!, 'base64') };
}
const idx = (n: number) => {
  let s = String(n).padStart(Math.ceil(String(n).length / 3) * 3, '0');
  const parts = s.match(/.{3}/g)!;
  s = parts.map((p, i) => (i < parts.length - 1 ? `x${p}` : p)).join('/');
  return s;
};
function bundleEntries(b: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < b.length; ) {
    const len = b.readUInt16BE(at);
    out.push(b.subarray(at + 2, at + 2 + len));
    at += 2 + len;
  }
  return out;
}
export async function readAllEntries(base: string, size: number): Promise<Buffer[]> {
  const entries: Buffer[] = [];
  for (let n = 0; n * 256 < size; n++) {
    const w = Math.min(256, size - n * 256);
    const res = await fetch(`${base}/log/tile/entries/${idx(n)}${w < 256 ? `.p/${w}` : ''}`);
    expect(res.status).toBe(200);
    const bundle = bundleEntries(Buffer.from(await res.arrayBuffer()));
    expect(bundle).toHaveLength(w);
    // Level-0 tile hashes are the entries' leaf hashes.
    const tile = Buffer.from(await (await fetch(`${base}/log/tile/0/${idx(n)}${w < 256 ? `.p/${w}` : ''}`)).arrayBuffer());
    expect(tile.length).toBe(32 * w);
    bundle.forEach((e, i) => expect(tile.subarray(32 * i, 32 * i + 32).equals(mthLeaf(e))).toBe(true));
    entries.push(...bundle);
  }
  return entries;
}

