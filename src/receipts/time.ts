/** @module RFC 3339 UTC timestamps at whole-second precision, the form of `verified_at` and key validity windows. */

// Every receipt is stamped with this; requests of one second share its text (an invalid date is never cached:
// NaN equals nothing, so toISOString throws as it would uncached).
let cachedSecond = Number.NaN;
let cachedText = '';

/** `2026-01-31T12:00:00Z`: the instant truncated to the second. */
export function rfc3339Seconds(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second !== cachedSecond) {
    cachedText = `${date.toISOString().slice(0, 19)}Z`;
    cachedSecond = second;
  }
  return cachedText;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch of an RFC 3339 timestamp; undefined when it is not one. */
export function parseRfc3339(text: unknown): number | undefined {
  if (typeof text !== 'string' || !RFC3339.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}
