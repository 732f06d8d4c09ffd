/** @module `aov request-hash` (placeholder until implemented). */
import type { CliIO } from './io.js';

export async function run(_argv: string[], io: CliIO): Promise<number> {
  io.stderr('aov request-hash: not implemented yet\n');
  return 2;
}
