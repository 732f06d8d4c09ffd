/**
 * @module Strict content checks (docs/protocol.md#content-checks), run with `strict_content_check`:
 * `content:undeclared_fields` — every property of every object is declared by
 * the schema applying there (the engine reports the undeclared ones);
 * `content:placeholder_values` — no string value is a placeholder.
 *
 * Placeholder list (case-insensitive, whole value after trimming surrounding
 * whitespace):
 *   - the empty string and whitespace-only strings;
 *   - TODO, TBD, FIXME, N/A, xxx (and longer runs of x), "..." (and longer
 *     runs of dots, or the ellipsis character "…"), string, example,
 *     placeholder, null, undefined;
 *   - anything starting with "lorem ipsum";
 *   - `<insert …>` (e.g. "<insert name here>");
 *   - `{{…}}` template slots (e.g. "{{customer_name}}").
 * Object keys are not checked; only string values.
 */
import type { Json } from './types.js';
import type { CheckFailure, CheckOutcome } from './check-outcome.js';
import { formatSegments } from './strict-json.js';

const UNDECLARED_FIELDS_CHECK = 'content:undeclared_fields';
const PLACEHOLDER_VALUES_CHECK = 'content:placeholder_values';

/** Exact placeholder words (compared lower-case, trimmed). */
const PLACEHOLDER_WORDS: readonly string[] = [
  'todo',
  'tbd',
  'fixme',
  'n/a',
  'xxx',
  '...',
  '…',
  'string',
  'example',
  'placeholder',
  'null',
  'undefined',
];

/** Placeholder shapes (tested against the trimmed value). */
const PLACEHOLDER_PATTERNS: readonly RegExp[] = [
  /^lorem ipsum/i,
  /^<insert\b[^>]*>$/i,
  /^\{\{[\s\S]*\}\}$/,
  /^x{3,}$/i,
  /^\.{3,}$/,
];

const WORDS = new Set(PLACEHOLDER_WORDS);

/** Why a string is a placeholder (`empty`, `whitespace only`, `placeholder text`), or null. */
export function placeholderKind(s: string): string | null {
  if (s.length === 0) return 'empty';
  const t = s.trim();
  if (t.length === 0) return 'whitespace only';
  if (WORDS.has(t.toLowerCase())) return 'placeholder text';
  for (const re of PLACEHOLDER_PATTERNS) if (re.test(t)) return 'placeholder text';
  return null;
}

export function findPlaceholders(output: Json): CheckFailure[] {
  const failures: CheckFailure[] = [];
  const path: Array<string | number> = [];
  const walk = (v: Json): void => {
    if (typeof v === 'string') {
      const kind = placeholderKind(v);
      if (kind) {
        const at = formatSegments(path);
        failures.push({ path: at, expected: 'a real value', found: kind, message: kind === 'placeholder text' ? 'is a placeholder' : `is ${kind}` });
      }
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        walk(v[i]);
        path.pop();
      }
    } else if (v !== null && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        path.push(k);
        walk(v[k]);
        path.pop();
      }
    }
  };
  walk(output);
  return failures;
}

/** Both content checks; `undeclared` is what the schema engine reported. */
export function evaluateContent(output: Json, undeclared: readonly string[]): CheckOutcome[] {
  return [
    {
      check: UNDECLARED_FIELDS_CHECK,
      kind: 'content',
      field: '$',
      failures: undeclared.map((p) => ({
        path: p,
        expected: 'only properties the schema declares',
        found: 'undeclared property',
        message: 'is not declared by the schema',
      })),
    },
    { check: PLACEHOLDER_VALUES_CHECK, kind: 'content', field: '$', failures: findPlaceholders(output) },
  ];
}
