/**
 * @module Registry of rule evaluators by rule type (SPEC §3.2). Check ids are
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

export function ruleCheckId(type: RuleType): string {
  return `consistency:${type}`;
}
