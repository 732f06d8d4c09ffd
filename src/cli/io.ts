/**
 * @module Injected I/O for CLI commands, so tests can run a command in-process
 * and read what it printed.
 */
import { readFileSync } from 'node:fs';

export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Read a file, or standard input for `-`. */
  readFile(path: string): string;
}

export const defaultIO: CliIO = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  readFile: (p) => readFileSync(p === '-' ? 0 : p, 'utf8'),
};

/** I/O that keeps what a command prints (and reads files as the default does): for running a command in-process. */
export function createMemoryIO(): CliIO & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), readFile: defaultIO.readFile };
}
