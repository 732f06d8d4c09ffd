/**
 * @module `agent-output-verifier/json`: the strict JSON parser the service reads request
 * bodies and receipts with (docs/protocol.md#strict-json), for any runtime: duplicate keys
 * and out-of-range integers reported with their location, lone surrogates, non-finite
 * numbers and over-deep nesting refused. Use it to see a body as the service will, and to
 * write locations in the notation verdicts use (`$.line_items[1].qty`).
 */
export {
  formatSegments,
  parseStrictJson,
  StrictJsonError,
  type DuplicateKeyFinding,
  type JsonPathSegments,
  type StrictJsonErrorKind,
  type StrictJsonOptions,
  type StrictJsonResult,
} from './core/strict-json.js';
export type { Json } from './core/types.js';
