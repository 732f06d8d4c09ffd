/**
 * @module Turns check results into the Verdict (docs/protocol.md#result, #response): the result,
 * the blocking check ids, the four capped lists (errors, errors_detail,
 * flags, hints) with their totals, the scores and the next actions.
 *
 * `errors`/`errors_detail` list what made the result fail; rule and bound
 * failures that do not block (enforce_rules false) appear only as warning
 * flags and hints, but still count as failed checks in the scores.
 */
import type { ErrorDetail, Flag, Hint, NextAction, Repair, Score, Verdict, VerificationRequest } from './types.js';
import type { SchemaEvaluation } from './schema/engine.js';
import type { CheckOutcome } from './check-outcome.js';

export const DEFAULT_LIST_CAP = 100;

export interface VerdictInput {
  request: VerificationRequest;
  schema: SchemaEvaluation;
  /** Every integrity-side check, in report order; one outcome per counted check. */
  outcomes: CheckOutcome[];
  listCap?: number;
  /** The repair of each listed schema failure (same index as `schema.failures`), when one is known. */
  schemaRepairs?: ReadonlyArray<Repair | undefined>;
}

export function score(passed: number, total: number): Score {
  return { ratio: total === 0 ? 1 : Math.round((passed / total) * 1e6) / 1e6, passed, total };
}

// Fresh literals per verdict (responses never share mutable objects); a
// literal is cheaper than copying a template with map and spread.
function onFail(): NextAction[] {
  return [{ action: 'repair_and_reverify', using: 'hints' }];
}
/** Determined repairs are mechanical, so they come first; what still fails after them needs the hints. */
function onFailWithRepairs(hints: readonly Hint[]): NextAction[] {
  let determined = 0;
  for (let i = 0; i < hints.length; i++) if (hints[i].repair?.certainty === 'determined') determined++;
  if (determined === 0) return onFail();
  return [
    { action: 'apply_repairs', count: determined },
    { action: 'repair_and_reverify', using: 'hints' },
  ];
}

/** A hint, with its repair after `found` when one is known (the key order is part of the signed bytes). */
function hint(source: Hint['source'], check: string, path: string, expected: string, found: string, repair: Repair | undefined): Hint {
  const h: Hint = { source, check, path, expected, found };
  if (repair !== undefined) h.repair = repair;
  return h;
}
function onPass(): NextAction[] {
  return [
    { action: 'attach_receipt', for: 'seller' },
    { action: 'proceed_to_payment', for: 'buyer' },
  ];
}

/**
 * The four capped lists and the blocking check ids. Plain arrays and counters
 * instead of a list class with per-entry closures: entries past the cap are
 * only counted, and nothing is allocated when nothing failed.
 */
class Lists {
  readonly errors: string[] = [];
  readonly details: ErrorDetail[] = [];
  readonly flags: Flag[] = [];
  readonly hints: Hint[] = [];
  /** First-seen order, like a Set; a handful of distinct ids, so a linear search is cheapest. */
  readonly blocking: string[] = [];
  errorsTotal = 0;
  detailsTotal = 0;
  flagsTotal = 0;
  warningsTotal = 0;
  hintsTotal = 0;
  constructor(readonly cap: number) {}
  block(check: string): void {
    if (!this.blocking.includes(check)) this.blocking.push(check);
  }
}

function addSchemaFailures(lists: Lists, failures: SchemaEvaluation['failures'], repairs: ReadonlyArray<Repair | undefined> | undefined): void {
  const cap = lists.cap;
  for (let i = 0; i < failures.length; i++) {
    const f = failures[i];
    const check = `schema:${f.keyword}`;
    lists.block(check);
    if (lists.errors.length < cap) lists.errors.push(`${check} at '${f.instancePath}': expected ${f.expected}, found ${f.found}`);
    lists.errorsTotal++;
    if (lists.details.length < cap) lists.details.push({ check, path: f.instancePath, expected: f.expected, found: f.found, message: f.message });
    lists.detailsTotal++;
    if (lists.hints.length < cap) lists.hints.push(hint('schema', check, f.instancePath, f.expected, f.found, repairs?.[i]));
    lists.hintsTotal++;
  }
}

/** Adds one failed outcome; returns whether it blocks. */
function addOutcomeFailures(lists: Lists, o: CheckOutcome, enforceRules: boolean): boolean {
  const cap = lists.cap;
  const blocks = o.kind !== 'gated' || enforceRules;
  if (blocks) lists.block(o.check);
  const prefix = o.kind === 'gated' && blocks ? 'enforce_rules: ' : '';
  const source = o.kind === 'content' ? 'content' : 'integrity';
  for (let i = 0; i < o.failures.length; i++) {
    const f = o.failures[i];
    const where = o.field === '$' ? f.path : o.field;
    if (blocks) {
      const text = `${prefix}${o.check} at '${where}': ${f.message}`;
      if (lists.errors.length < cap) lists.errors.push(text);
      lists.errorsTotal++;
      if (lists.details.length < cap) lists.details.push({ check: o.check, path: f.path, expected: f.expected, found: f.found, message: text });
      lists.detailsTotal++;
    }
    if (lists.flags.length < cap) lists.flags.push({ check: o.check, field: where, severity: blocks ? 'error' : 'warning', detail: f.message });
    lists.flagsTotal++;
    if (!blocks) lists.warningsTotal++;
    if (lists.hints.length < cap) lists.hints.push(hint(source, o.check, f.path, f.expected, f.found, f.repair));
    lists.hintsTotal++;
  }
  return blocks;
}

export function buildVerdict(input: VerdictInput): Verdict {
  const { request, schema, outcomes } = input;
  let integrityPassed = 0;
  for (let i = 0; i < outcomes.length; i++) if (outcomes[i].failures.length === 0) integrityPassed++;
  if (integrityPassed === outcomes.length && schema.failures.length === 0) return cleanVerdict(request, schema, integrityPassed);
  return verdictWithFailures(input);
}

/** The common case, nothing failed: empty lists, no list bookkeeping. */
function cleanVerdict(request: VerificationRequest, schema: SchemaEvaluation, checks: number): Verdict {
  // An invalid verdict without a reported failure must still fail.
  const failed = !schema.valid;
  return {
    result: failed ? 'fail' : 'pass',
    blocking_checks: [],
    next_actions: failed ? onFail() : onPass(),
    task_id: request.task_id,
    agent_id: request.agent_id,
    enforce_rules: request.enforce_rules,
    strict_content_check: request.strict_content_check,
    errors: [],
    errors_total: 0,
    errors_omitted: 0,
    errors_detail: [],
    errors_detail_total: 0,
    errors_detail_omitted: 0,
    flags: [],
    flags_total: 0,
    warnings_total: 0,
    schema_warnings: 0,
    flags_omitted: 0,
    hints: [],
    hints_total: 0,
    hints_omitted: 0,
    schema_compliance: score(schema.passed, schema.total),
    integrity_checks: score(checks, checks),
    overall: score(schema.passed + checks, schema.total + checks),
  };
}

function verdictWithFailures(input: VerdictInput): Verdict {
  const { request, schema, outcomes } = input;
  const cap = Math.max(0, input.listCap ?? DEFAULT_LIST_CAP);
  const lists = new Lists(cap);

  addSchemaFailures(lists, schema.failures, input.schemaRepairs);
  if (schema.omitted !== undefined && schema.omitted > 0) {
    // failures past the list cap were counted, not built: they still block and count
    for (const k of schema.omittedKeywords ?? []) lists.block(`schema:${k}`);
    lists.errorsTotal += schema.omitted;
    lists.detailsTotal += schema.omitted;
    lists.hintsTotal += schema.omitted;
  }
  // An invalid verdict without a reported failure must still fail.
  let failed = !schema.valid || schema.failures.length > 0;

  let integrityPassed = 0;
  for (let i = 0; i < outcomes.length; i++) {
    const o = outcomes[i];
    if (o.failures.length === 0) integrityPassed++;
    else if (addOutcomeFailures(lists, o, request.enforce_rules)) failed = true;
  }

  return {
    result: failed ? 'fail' : 'pass',
    blocking_checks: lists.blocking,
    next_actions: failed ? onFailWithRepairs(lists.hints) : onPass(),
    task_id: request.task_id,
    agent_id: request.agent_id,
    enforce_rules: request.enforce_rules,
    strict_content_check: request.strict_content_check,
    errors: lists.errors,
    errors_total: lists.errorsTotal,
    errors_omitted: lists.errorsTotal - lists.errors.length,
    errors_detail: lists.details,
    errors_detail_total: lists.detailsTotal,
    errors_detail_omitted: lists.detailsTotal - lists.details.length,
    flags: lists.flags,
    flags_total: lists.flagsTotal,
    warnings_total: lists.warningsTotal,
    schema_warnings: 0,
    flags_omitted: lists.flagsTotal - lists.flags.length,
    hints: lists.hints,
    hints_total: lists.hintsTotal,
    hints_omitted: lists.hintsTotal - lists.hints.length,
    schema_compliance: score(schema.passed, schema.total),
    integrity_checks: score(integrityPassed, outcomes.length),
    overall: score(schema.passed + integrityPassed, schema.total + outcomes.length),
  };
}
