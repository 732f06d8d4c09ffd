/**
 * @module The keyword table: every assertion and applicator keyword the compiler
 * knows, by name. Core keywords (`$ref`, `$dynamicRef`, `$recursiveRef`) are
 * handled by the compiler itself; unknown keywords are ignored.
 */
import type { KeywordDefinition } from '../keyword.js';
import { minPropertiesKeyword, maxPropertiesKeyword, propertyNamesKeyword } from './object.js';
import {
  additionalPropertiesKeyword, patternPropertiesKeyword, propertiesKeyword, unevaluatedPropertiesKeyword,
} from './properties.js';
import { dependenciesKeyword, dependentRequiredKeyword, dependentSchemasKeyword, requiredKeyword } from './required.js';
import { containsKeyword, maxItemsKeyword, minItemsKeyword, uniqueItemsKeyword } from './array.js';
import { itemsKeyword, prefixItemsKeyword, unevaluatedItemsKeyword } from './items.js';
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
