/** @module `aov keys` (placeholder until implemented). */
import type { CliIO } from './io.js';

export async function run(_argv: string[], io: CliIO): Promise<number> {
  io.stderr('aov keys: not implemented yet\n');
  return 2;
}
