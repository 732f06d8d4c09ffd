/**
 * @module The keyword table: every assertion and applicator keyword the compiler
 * knows, by name. Core keywords (`$ref`, `$dynamicRef`, `$recursiveRef`) are
 * handled by the compiler itself; unknown keywords are ignored.
 */
import type { KeywordDefinition } from '../keyword.js';
import {
  additionalPropertiesKeyword, dependenciesKeyword, dependentRequiredKeyword, dependentSchemasKeyword,
  maxPropertiesKeyword, minPropertiesKeyword, patternPropertiesKeyword, propertiesKeyword, propertyNamesKeyword,
  requiredKeyword, unevaluatedPropertiesKeyword,
} from './object.js';
import {
  containsKeyword, itemsKeyword, maxItemsKeyword, minItemsKeyword, prefixItemsKeyword, uniqueItemsKeyword,
  unevaluatedItemsKeyword,
} from './array.js';
import { allOfKeyword, anyOfKeyword, ifKeyword, notKeyword, oneOfKeyword } from './logic.js';
import {
  exclusiveMaximumKeyword, exclusiveMinimumKeyword, maximumKeyword, minimumKeyword, multipleOfKeyword,
} from './number.js';
import { formatKeyword, maxLengthKeyword, minLengthKeyword, patternKeyword } from './string.js';
import { constKeyword, enumKeyword, typeKeyword } from './type.js';

const ALL: KeywordDefinition[] = [
  typeKeyword, enumKeyword, constKeyword,
  minimumKeyword, maximumKeyword, exclusiveMinimumKeyword, exclusiveMaximumKeyword, multipleOfKeyword,
  minLengthKeyword, maxLengthKeyword, patternKeyword, formatKeyword,
  minItemsKeyword, maxItemsKeyword, uniqueItemsKeyword, prefixItemsKeyword, itemsKeyword, containsKeyword,
  unevaluatedItemsKeyword,
  requiredKeyword, minPropertiesKeyword, maxPropertiesKeyword, dependentRequiredKeyword, dependentSchemasKeyword,
  dependenciesKeyword, propertiesKeyword, patternPropertiesKeyword, additionalPropertiesKeyword,
  propertyNamesKeyword, unevaluatedPropertiesKeyword,
  allOfKeyword, anyOfKeyword, oneOfKeyword, notKeyword, ifKeyword,
];

export const KEYWORDS: ReadonlyMap<string, KeywordDefinition> = new Map(ALL.map((d) => [d.keyword, d]));
