/**
 * @module The log entry written directly (entryText, also run by the SQLite store's worker threads)
 * is byte for byte the RFC 8785 form of the entry object, for any ids the strict parser admits.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../receipts/jcs.js';
import { decodeLogEntry, encodeLogEntry, entryText } from './entry.js';

/** Well-formed strings only: lone surrogates never reach a receipt. */
const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const entry = fc.record({
  verification_id: text,
  task_id: text,
  agent_id: fc.option(text, { nil: null }),
  result: fc.constantFrom('pass' as const, 'fail' as const),
  overall_ratio: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 1, 0.1, 1 / 3, 5e-324, -0)),
  verified_at: text,
  receipt_sha256: fc.stringMatching(/^[0-9a-f]{64}$/),
});

describe('log entry text', () => {
  it('equals the RFC 8785 form of the entry object', () => {
    fc.assert(
      fc.property(entry, (e) => {
        const jcs = canonicalize({ ...e });
        expect(encodeLogEntry(e)).toBe(jcs);
        expect(entryText(e.verification_id, e.task_id, e.agent_id, e.result, e.overall_ratio, e.verified_at, e.receipt_sha256)).toBe(jcs);
        expect(decodeLogEntry(jcs)).toEqual({ ...e, overall_ratio: e.overall_ratio === 0 ? 0 : e.overall_ratio });
      }),
      { numRuns: 2000 },
    );
  });

  it('escapes quotes, backslashes and control characters as JCS does', () => {
    const e = { verification_id: 'a"b\\c', task_id: '\u0001\n\u2028', agent_id: '😀é', result: 'fail' as const, overall_ratio: 0.5, verified_at: '2026-12-01T00:00:00Z', receipt_sha256: 'f'.repeat(64) };
    expect(encodeLogEntry(e)).toBe(canonicalize({ ...e }));
  });
});
