/** @module Rule `gte` (SPEC §3.2): every number at `field` is >= the reference. */
import { createComparisonRule } from './compare.js';

export const gte = createComparisonRule('gte');
