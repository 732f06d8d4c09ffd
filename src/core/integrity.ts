/**
 * @module The two built-in integrity checks run on every output, always
 * blocking (docs/protocol.md#integrity-checks): `integrity:unique_keys` and `integrity:safe_integers`.
 * Their facts come from strict parsing (ParsedRequest.integrity), because a
 * parsed value no longer shows duplicated keys or lost integer precision.
 */
import type { OutputIntegrity } from './types.js';
import type { CheckFailure, CheckOutcome } from './check-outcome.js';

/**
 * A built-in integrity check over the whole output: one failure per item `found` (none: it passed).
 * Nearly every output passes both checks, so the passing outcome is built once per check; outcomes
 * are read by buildVerdict and never reach a response, and that shared one is frozen so no caller
 * can change it.
 */
function integrityCheck<T>(check: string, failure: (item: T) => CheckFailure): (found: readonly T[]) => CheckOutcome {
  const passed: CheckOutcome = Object.freeze({
    check,
    kind: 'integrity',
    field: '$',
    failures: Object.freeze([]) as unknown as CheckFailure[],
  });
  return (found) => (found.length === 0 ? passed : { check, kind: 'integrity', field: '$', failures: found.map(failure) });
}

const uniqueKeys = integrityCheck<OutputIntegrity['duplicateKeys'][number]>('integrity:unique_keys', (d) => ({
  path: d.path,
  expected: 'each key once per object',
  found: `key '${d.key}' more than once`,
  message: `has the key '${d.key}' more than once (readers disagree on which value counts)`,
}));

const safeIntegers = integrityCheck<string>('integrity:safe_integers', (p) => ({
  path: p,
  expected: 'an integer within ±(2^53−1)',
  found: 'integer outside ±(2^53−1)',
  message: 'holds an integer outside ±(2^53−1) (readers may see different numbers; send it as a string)',
}));

/** Both outcomes, in report order, in a new array the caller may extend. */
export function evaluateIntegrity(integrity: OutputIntegrity): CheckOutcome[] {
  return [uniqueKeys(integrity.duplicateKeys), safeIntegers(integrity.unsafeIntegers)];
}
