/**
 * @module Turns check results into the Verdict (SPEC §3.1, §4): the result,
 * the blocking check ids, the four capped lists (errors, errors_detail,
 * flags, hints) with their totals, the scores and the next actions.
 *
 * `errors`/`errors_detail` list what made the result fail; rule and bound
 * failures that do not block (enforce_rules false) appear only as warning
 * flags and hints, but still count as failed checks in the scores.
 */
import type { ErrorDetail, Flag, Hint, NextAction, Score, Verdict, VerificationRequest } from './types.js';
import type { SchemaEvaluation } from './schema/engine.js';
import type { CheckOutcome } from './check-outcome.js';

export const DEFAULT_LIST_CAP = 100;

export interface VerdictInput {
  request: VerificationRequest;
  schema: SchemaEvaluation;
  /** Every integrity-side check, in report order; one outcome per counted check. */
  outcomes: CheckOutcome[];
  listCap?: number;
}

/** A list that keeps the first `cap` entries and counts the rest. */
class CappedList<T> {
  readonly items: T[] = [];
  total = 0;
  constructor(private readonly cap: number) {}
  /** `make` runs only when the entry is kept, so huge failure lists cost no strings. */
  add(make: () => T): void {
    if (this.items.length < this.cap) this.items.push(make());
    this.total++;
  }
  get omitted(): number {
    return this.total - this.items.length;
  }
}

export function score(passed: number, total: number): Score {
  return { ratio: total === 0 ? 1 : Math.round((passed / total) * 1e6) / 1e6, passed, total };
}

const ON_FAIL: NextAction[] = [{ action: 'repair_and_reverify', using: 'hints' }];
const ON_PASS: NextAction[] = [
  { action: 'attach_receipt', for: 'seller' },
  { action: 'proceed_to_payment', for: 'buyer' },
];

export function buildVerdict(input: VerdictInput): Verdict {
  const { request, schema, outcomes } = input;
  const cap = Math.max(0, input.listCap ?? DEFAULT_LIST_CAP);
  const errors = new CappedList<string>(cap);
  const details = new CappedList<ErrorDetail>(cap);
  const flags = new CappedList<Flag>(cap);
  const hints = new CappedList<Hint>(cap);
  const blocking = new Set<string>();

  for (const f of schema.failures) {
    const check = `schema:${f.keyword}`;
    blocking.add(check);
    const text = () => `${check} at '${f.instancePath}': expected ${f.expected}, found ${f.found}`;
    errors.add(text);
    details.add(() => ({ check, path: f.instancePath, expected: f.expected, found: f.found, message: f.message }));
    hints.add(() => ({ source: 'schema', check, path: f.instancePath, expected: f.expected, found: f.found }));
  }
  // An invalid verdict without a reported failure must still fail.
  let failed = !schema.valid || schema.failures.length > 0;

  let integrityPassed = 0;
  for (const o of outcomes) {
    if (o.failures.length === 0) {
      integrityPassed++;
      continue;
    }
    const blocks = o.kind !== 'gated' || request.enforce_rules;
    if (blocks) {
      failed = true;
      blocking.add(o.check);
    }
    const prefix = o.kind === 'gated' && blocks ? 'enforce_rules: ' : '';
    const source = o.kind === 'content' ? 'content' : 'integrity';
    for (const f of o.failures) {
      const where = o.field === '$' ? f.path : o.field;
      const text = `${prefix}${o.check} at '${where}': ${f.message}`;
      if (blocks) {
        errors.add(() => text);
        details.add(() => ({ check: o.check, path: f.path, expected: f.expected, found: f.found, message: text }));
      }
      flags.add(() => ({ check: o.check, field: where, severity: blocks ? 'error' : 'warning', detail: f.message }));
      hints.add(() => ({ source, check: o.check, path: f.path, expected: f.expected, found: f.found }));
    }
  }

  const schemaScore = score(schema.passed, schema.total);
  const integrityScore = score(integrityPassed, outcomes.length);
  const result = failed ? 'fail' : 'pass';
  return {
    result,
    blocking_checks: [...blocking],
    next_actions: (failed ? ON_FAIL : ON_PASS).map((a) => ({ ...a })),
    task_id: request.task_id,
    agent_id: request.agent_id,
    enforce_rules: request.enforce_rules,
    strict_content_check: request.strict_content_check,
    errors: errors.items,
    errors_total: errors.total,
    errors_omitted: errors.omitted,
    errors_detail: details.items,
    errors_detail_total: details.total,
    errors_detail_omitted: details.omitted,
    flags: flags.items,
    flags_total: flags.total,
    flags_omitted: flags.omitted,
    hints: hints.items,
    hints_total: hints.total,
    hints_omitted: hints.omitted,
    schema_compliance: schemaScore,
    integrity_checks: integrityScore,
    overall: score(schema.passed + integrityPassed, schema.total + outcomes.length),
  };
}
