/**
 * @module What every rule (and bound) evaluator shares: the failure shape and
 * the small helpers that turn selected values into numbers and describe what
 * was found without echoing more of the output than a hint needs (docs/protocol.md#response).
 */
import type { Json, Repair, Rule } from '../types.js';
import type { FieldPath, Selected } from '../paths.js';
import { displayPath, parsePath, pathValues, selectPath } from '../paths.js';

/** One reason a check failed, at one location. `message` is the part after `<check> at '<field>': `. */
export interface CheckFailure {
  path: string;
  expected: string;
  found: string;
  message: string;
  /** A known fix (docs/protocol.md#repairs); carried into the hint of this failure. */
  repair?: Repair;
}

/** Evaluates one rule against the output: no failures means the check passed. */
export type RuleEvaluator = (rule: Rule, output: Json) => CheckFailure[];

/** `type string`, `type array`… */
export function describeType(v: Json): string {
  if (v === null) return 'type null';
  if (Array.isArray(v)) return 'type array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'type integer' : 'type number';
  return `type ${typeof v}`;
}

/** Numbers for people: no float noise (0.1+0.2 shows as 0.3). */
export function formatNumber(n: number): string {
  const s = String(n);
  // Float noise always shows as 16-17 significant digits; short forms are already clean.
  return s.length <= 12 ? s : String(Number(n.toPrecision(15)));
}

export function select(path: string, output: Json): { path: FieldPath; values: Selected[] } {
  const parsed = parsePath(path);
  return { path: parsed, values: selectPath(parsed, output) };
}

export function missingField(path: FieldPath): CheckFailure {
  return { path: displayPath(path), expected: 'at least one value', found: 'missing', message: 'field missing' };
}

export function notANumber(s: Selected): CheckFailure {
  return notANumberAt(s.location, s.value);
}

export function notANumberAt(location: string, value: Json): CheckFailure {
  const t = describeType(value);
  return { path: location, expected: 'a number', found: t, message: `${location} holds ${t}, expected a number` };
}

/** Split selected values into numbers and failures for the non-numbers. */
export function numbersOf(values: Selected[], failures: CheckFailure[]): Array<Selected & { value: number }> {
  const out: Array<Selected & { value: number }> = [];
  for (const s of values) {
    if (typeof s.value === 'number') out.push(s as Selected & { value: number });
    else failures.push(notANumber(s));
  }
  return out;
}

/** A resolved numeric reference: the constant (field null) or the value found at `field`. */
export interface NumberRef {
  value: number;
  field: string | null;
}

/** How a reference is named in messages: `135`, or `total (135)`. */
export function refLabel(ref: NumberRef): string {
  return ref.field === null ? formatNumber(ref.value) : `${ref.field} (${formatNumber(ref.value)})`;
}

/**
 * A reference that must be one number: the constant, or the single value at
 * `field`. Returns the number and where it came from (see refLabel),
 * or pushes a failure and returns null.
 */
export function singleNumber(
  constant: number | null,
  field: string | null,
  output: Json,
  failures: CheckFailure[],
): NumberRef | null {
  if (field === null) {
    const value = constant as number;
    return { value, field: null };
  }
  const path = parsePath(field);
  // Only the values on the common path; locations are built when the reference is unusable.
  const found = pathValues(path, output);
  if (found.length === 1 && typeof found[0] === 'number') return { value: found[0], field };
  const values = selectPath(path, output);
  if (values.length !== 1) {
    failures.push({
      path: displayPath(path),
      expected: 'a single number',
      found: values.length === 0 ? 'missing' : `${values.length} values`,
      message: values.length === 0 ? `reference '${field}' is missing` : `reference '${field}' yields ${values.length} values, expected one`,
    });
    return null;
  }
  const v = values[0];
  failures.push({ ...notANumber(v), message: `reference ${v.location} holds ${describeType(v.value)}, expected a number` });
  return null;
}
