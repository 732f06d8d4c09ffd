/**
 * @module The JSON-Schema-Test-Suite tests the engine deliberately does not pass,
 * each with its reason. Ids are `<draft>/<file>/<case description>/<test description>`;
 * a trailing `*` matches a whole case. Keep this list tiny.
 */

export interface ConformanceSkip {
  id: string;
  reason: string;
}

export const CONFORMANCE_SKIPS: readonly ConformanceSkip[] = [];

export function isSkipped(id: string): boolean {
  for (const s of CONFORMANCE_SKIPS) {
    if (s.id === id) return true;
    if (s.id.endsWith('*') && id.startsWith(s.id.slice(0, -1))) return true;
  }
  return false;
}
