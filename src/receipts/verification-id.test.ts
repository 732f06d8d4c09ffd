import { describe, expect, it } from 'vitest';
import { newVerificationId } from './verification-id.js';

describe('verification ids', () => {
  it('are RFC 9562 version-7 UUIDs carrying the time they were made at', () => {
    const at = Date.UTC(2026, 11, 1, 5, 50, 0, 123);
    const id = newVerificationId(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it('sort by time, and never repeat across many blocks of random bytes', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => newVerificationId(1_700_000_000_000 + Math.floor(i / 10)));
    expect(new Set(ids).size).toBe(ids.length);
    const prefixes = ids.map((id) => id.slice(0, 13));
    expect([...prefixes].sort()).toEqual(prefixes);
    // The random part varies in every position (74 random bits per id).
    const tails = new Set(ids.map((id) => id.slice(24)));
    expect(tails.size).toBe(ids.length);
  });
});
