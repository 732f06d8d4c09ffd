/**
 * @module The two built-in integrity checks run on every output, always
 * blocking (docs/protocol.md#integrity-checks): `integrity:unique_keys` and `integrity:safe_integers`.
 * Their facts come from strict parsing (ParsedRequest.integrity), because a
 * parsed value no longer shows duplicated keys or lost integer precision.
 */
import type { OutputIntegrity } from './types.js';
import type { CheckOutcome } from './check-outcome.js';

const UNIQUE_KEYS_CHECK = 'integrity:unique_keys';
const SAFE_INTEGERS_CHECK = 'integrity:safe_integers';

// Nearly every output passes both checks: their passing outcomes are built
// once. Outcomes are read by buildVerdict and never reach a response, and
// they are frozen so no caller can change the shared ones.
const UNIQUE_KEYS_PASSED: CheckOutcome = Object.freeze({
  check: UNIQUE_KEYS_CHECK,
  kind: 'integrity',
  field: '$',
  failures: Object.freeze([]) as unknown as CheckOutcome['failures'],
});
const SAFE_INTEGERS_PASSED: CheckOutcome = Object.freeze({
  check: SAFE_INTEGERS_CHECK,
  kind: 'integrity',
  field: '$',
  failures: Object.freeze([]) as unknown as CheckOutcome['failures'],
});

function uniqueKeys(integrity: OutputIntegrity): CheckOutcome {
  if (integrity.duplicateKeys.length === 0) return UNIQUE_KEYS_PASSED;
  return {
    check: UNIQUE_KEYS_CHECK,
    kind: 'integrity',
    field: '$',
    failures: integrity.duplicateKeys.map((d) => ({
      path: d.path,
      expected: 'each key once per object',
      found: `key '${d.key}' more than once`,
      message: `has the key '${d.key}' more than once (readers disagree on which value counts)`,
    })),
  };
}

function safeIntegers(integrity: OutputIntegrity): CheckOutcome {
  if (integrity.unsafeIntegers.length === 0) return SAFE_INTEGERS_PASSED;
  return {
    check: SAFE_INTEGERS_CHECK,
    kind: 'integrity',
    field: '$',
    failures: integrity.unsafeIntegers.map((p) => ({
      path: p,
      expected: 'an integer within ±(2^53−1)',
      found: 'integer outside ±(2^53−1)',
      message: 'holds an integer outside ±(2^53−1) (readers may see different numbers; send it as a string)',
    })),
  };
}

/** Both outcomes, in report order, in a new array the caller may extend. */
export function evaluateIntegrity(integrity: OutputIntegrity): CheckOutcome[] {
  return [uniqueKeys(integrity), safeIntegers(integrity)];
}
