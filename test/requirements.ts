/**
 * @module Whether a test file may skip when an outside service or data folder is
 * missing. Locally a missing PostgreSQL, conformance folder or browser skips the
 * tests that need it, visibly and with the reason; CI (`.ci/run`) sets
 * REQUIRE_POSTGRES=1, REQUIRE_CONFORMANCE=1 (and REQUIRE_BROWSER=1 where browser
 * tests exist), and then a missing requirement fails the run instead, so a
 * skipped suite can never hide a broken product.
 */

/** The environment variables that turn a skip into a failure. */
export type Requirement = 'REQUIRE_POSTGRES' | 'REQUIRE_CONFORMANCE' | 'REQUIRE_BROWSER';

/** True when the run demands `requirement` (its variable is `1`). */
export function isRequired(requirement: Requirement): boolean {
  return process.env[requirement] === '1';
}

/**
 * Decide whether the tests needing something `available` should be skipped.
 * Returns true (skip) when it is missing and not required, after saying why;
 * throws (the test file fails to load, so the run fails) when it is missing and
 * `requirement` is set.
 */
export function skipUnlessAvailable(available: boolean, requirement: Requirement, what: string): boolean {
  if (available) return false;
  if (isRequired(requirement)) throw new Error(`${requirement}=1 but ${what}`);
  console.warn(`skipping: ${what} (set ${requirement}=1 to make this a failure)`);
  return true;
}
