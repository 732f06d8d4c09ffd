/**
 * @module Verification ids: UUIDs of version 7 (RFC 9562), a 48-bit Unix-millisecond time
 * followed by 74 random bits. Stores index receipts by id (SQLite's and PostgreSQL's B-trees,
 * and the log's entry index): random version-4 ids land on a random page of each index per
 * receipt, so every commit rewrites pages all over the index; time-ordered ids append at its
 * right edge. The time they reveal is the receipt's own `verified_at`, and 74 random bits
 * still make an id impossible to guess.
 */
import { randomFillSync } from 'node:crypto';

// Random bytes drawn in blocks: one call to the system's generator per 256 ids, as randomUUID does.
const BLOCK = 16 * 256;
const pool = Buffer.alloc(BLOCK);
let used = BLOCK;

/** A new version-7 UUID for `now` (milliseconds since the epoch). */
export function newVerificationId(now: number = Date.now()): string {
  if (used === BLOCK) {
    randomFillSync(pool);
    used = 0;
  }
  const b = pool.subarray(used, used + 16);
  used += 16;
  b.writeUIntBE(now, 0, 6);
  b[6] = ((b[6] as number) & 0x0f) | 0x70;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
