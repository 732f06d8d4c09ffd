/** @module Rule `lte` (SPEC §3.2): every number at `field` is <= the reference. */
import { createComparisonRule } from './compare.js';

export const lte = createComparisonRule('lte');
