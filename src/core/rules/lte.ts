/** @module Rule `lte` (docs/protocol.md#rules): every number at `field` is <= the reference. */
import { createComparisonRule } from './compare.js';

export const lte = createComparisonRule('lte');
