/**
 * @module Validation of the `rules` and `bounds` request fields (docs/protocol.md#request,
 * §3.2, §3.3): every problem is collected as a FieldProblem naming the field
 * (`rules[0].type`), never the caller's value, each with a fix.
 */
import type { FieldProblem } from '../errors.js';
import type { Bound, Json, Rule, RuleType } from './types.js';
import { RULE_TYPES } from './types.js';
import { parsePath, PathSyntaxError } from './paths.js';

export const DEFAULT_TOLERANCE = 1e-9;

type Obj = { [key: string]: Json };

const isObject = (v: Json | undefined): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const present = (o: Obj, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k) && o[k] !== null;
const isNum = (v: Json | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** Which reference pairs each rule type takes (constant form, field form). */
const REFERENCES: Record<RuleType, { field: string; constant: string } | null> = {
  sum_equals: { field: 'equals_field', constant: 'equals' },
  gte: { field: 'other_field', constant: 'value' },
  lte: { field: 'other_field', constant: 'value' },
  exists_in: { field: 'in_field', constant: 'values' },
  unique: null,
};

const REFERENCE_KEYS = ['equals_field', 'equals', 'other_field', 'value', 'in_field', 'values'] as const;
const RULE_KEYS = new Set(['type', 'field', ...REFERENCE_KEYS, 'tolerance', 'if_present']);
const BOUND_KEYS = new Set(['min', 'max', 'if_present']);

const PATH_FIX =
  "Write a dotted path such as 'total' or 'line_items[].line_total'; use ['key'] for keys containing '.' or '['.";

function checkPath(value: Json | undefined, field: string, problems: FieldProblem[]): string | null {
  if (typeof value !== 'string') {
    problems.push({ field, problem: 'must be a string (a field path)', fix: PATH_FIX });
    return null;
  }
  try {
    parsePath(value);
    return value;
  } catch (e) {
    if (!(e instanceof PathSyntaxError)) throw e;
    problems.push({ field, problem: `is not a valid path: it ${e.reason}`, fix: PATH_FIX });
    return null;
  }
}

/** Validate `rules`; returns the rules with defaults filled in, or null when absent/empty. */
export function validateRules(raw: Json | undefined, problems: FieldProblem[]): Rule[] | null {
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw)) {
    problems.push({ field: 'rules', problem: 'must be an array of rule objects', fix: 'Send rules as [{"type": ..., "field": ...}] or omit it.' });
    return null;
  }
  const rules: Rule[] = [];
  raw.forEach((item, i) => {
    const at = `rules[${i}]`;
    if (!isObject(item)) {
      problems.push({ field: at, problem: 'must be an object', fix: 'Write each rule as {"type": ..., "field": ..., ...}.' });
      return;
    }
    const before = problems.length;
    for (const k of Object.keys(item)) {
      if (!RULE_KEYS.has(k)) {
        problems.push({
          field: `${at}.${k}`,
          problem: 'is not a known rule field',
          fix: `Remove it; a rule takes only: ${[...RULE_KEYS].join(', ')}.`,
        });
      }
    }
    let type: RuleType | null = null;
    if (!present(item, 'type')) {
      problems.push({ field: `${at}.type`, problem: 'is required', fix: "Use one of: 'sum_equals', 'gte', 'lte', 'exists_in' or 'unique'." });
    } else if (typeof item.type !== 'string' || !(RULE_TYPES as readonly string[]).includes(item.type)) {
      problems.push({ field: `${at}.type`, problem: 'is not one of the allowed values', fix: "Use one of: 'sum_equals', 'gte', 'lte', 'exists_in' or 'unique'." });
    } else {
      type = item.type as RuleType;
    }
    let field: string | null = null;
    if (!present(item, 'field')) {
      problems.push({ field: `${at}.field`, problem: 'is required', fix: `Name the output field the rule checks. ${PATH_FIX}` });
    } else {
      field = checkPath(item.field, `${at}.field`, problems);
    }

    // References: type-specific; anything of another type is an error.
    const refs = type ? REFERENCES[type] : undefined;
    if (type) {
      for (const k of REFERENCE_KEYS) {
        if (present(item, k) && (refs === null || (refs!.field !== k && refs!.constant !== k))) {
          problems.push({
            field: `${at}.${k}`,
            problem: `does not apply to a '${type}' rule`,
            fix: refs === null ? "Remove it; a 'unique' rule takes no reference." : `Remove it; a '${type}' rule takes '${refs!.field}' or '${refs!.constant}'.`,
          });
        }
      }
      if (refs) {
        const hasField = present(item, refs.field);
        const hasConst = present(item, refs.constant);
        if (hasField === hasConst) {
          problems.push({
            field: at,
            problem: hasField ? `gives both '${refs.field}' and '${refs.constant}'` : `gives neither '${refs.field}' nor '${refs.constant}'`,
            fix: `Give exactly one of '${refs.field}' (a path in the output) or '${refs.constant}' (a constant).`,
          });
        }
        if (hasField) checkPath(item[refs.field], `${at}.${refs.field}`, problems);
        if (hasConst) {
          const c = item[refs.constant];
          if (refs.constant === 'values') {
            if (!Array.isArray(c)) problems.push({ field: `${at}.values`, problem: 'must be an array of allowed values', fix: 'Send the allowed values as a JSON array.' });
          } else if (!isNum(c)) {
            problems.push({ field: `${at}.${refs.constant}`, problem: 'must be a number', fix: 'Send a JSON number.' });
          }
        }
      }
    }
    if (present(item, 'tolerance') && !(isNum(item.tolerance) && item.tolerance >= 0)) {
      problems.push({ field: `${at}.tolerance`, problem: 'must be a number >= 0', fix: 'Send an absolute tolerance such as 0.01, or omit it (default 1e-9).' });
    }
    if (present(item, 'if_present') && typeof item.if_present !== 'boolean') {
      problems.push({ field: `${at}.if_present`, problem: 'must be a boolean', fix: 'Send true or false, or omit it (default false).' });
    }
    if (problems.length !== before || !type || field === null) return;
    const get = <T>(k: string): T | null => (present(item, k) ? (item[k] as T) : null);
    rules.push({
      type,
      field,
      equals_field: get<string>('equals_field'),
      equals: get<number>('equals'),
      other_field: get<string>('other_field'),
      value: get<number>('value'),
      in_field: get<string>('in_field'),
      values: get<Json[]>('values'),
      tolerance: get<number>('tolerance') ?? DEFAULT_TOLERANCE,
      if_present: get<boolean>('if_present') ?? false,
    });
  });
  return rules.length > 0 ? rules : null;
}

/** Validate `bounds`; returns them with defaults filled in, or null when absent/empty. */
export function validateBounds(raw: Json | undefined, problems: FieldProblem[]): Record<string, Bound> | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) {
    problems.push({ field: 'bounds', problem: 'must be an object mapping paths to {min, max}', fix: 'Send bounds as {"items[].price": {"min": 0, "max": 100}} or omit it.' });
    return null;
  }
  const out: Record<string, Bound> = Object.create(null);
  let count = 0;
  for (const path of Object.keys(raw)) {
    const at = `bounds['${path.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
    const entry = raw[path];
    const before = problems.length;
    checkPathKey(path, at, problems);
    if (!isObject(entry)) {
      problems.push({ field: at, problem: 'must be an object {min?, max?, if_present?}', fix: 'Send e.g. {"min": 0, "max": 100}.' });
      continue;
    }
    for (const k of Object.keys(entry)) {
      if (!BOUND_KEYS.has(k)) problems.push({ field: `${at}.${k}`, problem: 'is not a known bound field', fix: 'Remove it; a bound takes only: min, max, if_present.' });
    }
    for (const k of ['min', 'max'] as const) {
      if (present(entry, k) && !isNum(entry[k])) problems.push({ field: `${at}.${k}`, problem: 'must be a number', fix: 'Send a JSON number, or omit it.' });
    }
    if (!present(entry, 'min') && !present(entry, 'max')) {
      problems.push({ field: at, problem: "gives neither 'min' nor 'max'", fix: "Give 'min', 'max' or both." });
    }
    if (isNum(entry.min) && isNum(entry.max) && entry.min > entry.max) {
      problems.push({ field: at, problem: "has 'min' greater than 'max'", fix: "Make 'min' <= 'max'." });
    }
    if (present(entry, 'if_present') && typeof entry.if_present !== 'boolean') {
      problems.push({ field: `${at}.if_present`, problem: 'must be a boolean', fix: 'Send true or false, or omit it (default false).' });
    }
    if (problems.length !== before) continue;
    out[path] = {
      min: present(entry, 'min') ? (entry.min as number) : null,
      max: present(entry, 'max') ? (entry.max as number) : null,
      if_present: present(entry, 'if_present') ? (entry.if_present as boolean) : false,
    };
    count++;
  }
  return count > 0 ? out : null;
}

function checkPathKey(path: string, at: string, problems: FieldProblem[]): void {
  try {
    parsePath(path);
  } catch (e) {
    if (!(e instanceof PathSyntaxError)) throw e;
    problems.push({ field: at, problem: `is not a valid path: it ${e.reason}`, fix: PATH_FIX });
  }
}
