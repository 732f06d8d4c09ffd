/** @module Rule `gte` (docs/protocol.md#rules): every number at `field` is >= the reference. */
import { createComparisonRule } from './compare.js';

export const gte = createComparisonRule('gte');
