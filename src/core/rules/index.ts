/**
 * @module Registry of rule evaluators by rule type (docs/protocol.md#rules). Check ids are
 * `consistency:<type>`.
 */
import type { RuleType } from '../types.js';
import type { RuleEvaluator } from './common.js';
import { sumEquals } from './sum-equals.js';
import { gte } from './gte.js';
import { lte } from './lte.js';
import { existsIn } from './exists-in.js';
import { unique } from './unique.js';

export type { CheckFailure, RuleEvaluator } from './common.js';

export const RULE_EVALUATORS: Readonly<Record<RuleType, RuleEvaluator>> = {
  sum_equals: sumEquals,
  gte,
  lte,
  exists_in: existsIn,
  unique,
};

// Built once: the id of every rule's outcome, looked up per request instead of concatenated.
const RULE_CHECK_IDS: Readonly<Record<RuleType, string>> = {
  sum_equals: 'consistency:sum_equals',
  gte: 'consistency:gte',
  lte: 'consistency:lte',
  exists_in: 'consistency:exists_in',
  unique: 'consistency:unique',
};

export function ruleCheckId(type: RuleType): string {
  return RULE_CHECK_IDS[type];
}
