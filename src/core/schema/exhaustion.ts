/**
 * @module Telling a schema's own problem from the machine running out. V8 reports both a too-deep
 * recursion and a refused allocation (an array, string or buffer over its size limit) as a
 * catchable RangeError. Recursion depth follows from the schema or pattern (nested too deeply:
 * a 422 naming it); a refused allocation does not — it depends on the memory left — so it must
 * never read as "invalid schema" or "invalid pattern": it is rethrown, and the runner answers
 * `verification_aborted`, as it does when a worker reaches its heap cap.
 */

/** True for V8's stack overflow ("Maximum call stack size exceeded"). */
export function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && /call stack/i.test(e.message);
}

/** True for a RangeError that is not a stack overflow: an allocation V8 refused. */
export function isAllocationFailure(e: unknown): boolean {
  return e instanceof RangeError && !isStackOverflow(e);
}
