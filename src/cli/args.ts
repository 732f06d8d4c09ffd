/**
 * @module Flag parsing shared by every `aov` command: node:util parseArgs in
 * strict mode, with a "did you mean" for misspelt commands and flags, so a typo
 * in a CI script fails with a fix instead of parser jargon.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from '../config-values.js';
import { editDistance } from '../core/schema/unknown.js';
import type { CliIO } from './io.js';

/** A wrong invocation: the command prints the message and its usage, and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The closest candidate when it is close enough to be a typo of `word`, else undefined. */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  // Short words need a closer match, or every two-letter typo would "mean" something.
  const allowed = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const dist = editDistance(word.toLowerCase(), c.toLowerCase(), allowed);
    if (dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  return best !== undefined && bestDistance <= allowed ? best : undefined;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** What parseCommandArgs returns: parseArgs' typed values and the positionals. */
export type ParsedArgs<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;

/**
 * Strict parseArgs over `argv` (positionals allowed; each command checks how
 * many it takes). An unknown flag becomes a UsageError naming
 * the closest known one; other parser errors keep parseArgs' own wording.
 */
export function parseCommandArgs<O extends Options>(argv: string[], options: O): ParsedArgs<O> {
  // A lenient pass first, to find unknown flags and suggest the one that was meant.
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  const known = Object.keys(options);
  for (const t of tokens) {
    if (t.kind !== 'option' || t.name in options) continue;
    const shown = t.rawName.startsWith('--') ? `--${t.name}` : t.rawName;
    const guess = t.rawName.startsWith('--') ? didYouMean(t.name, known) : undefined;
    throw new UsageError(`unknown option '${shown}'${guess ? ` — did you mean --${guess}?` : ''}`);
  }
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

/** The one positional argument of a command: a UsageError when it is missing (`missing <what>`) or followed by another. */
export function onePositional(positionals: readonly string[], what: string): string {
  if (positionals.length === 0) throw new UsageError(`missing ${what}`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  return positionals[0];
}

/**
 * A command's options from `parse` (which throws UsageError for a wrong invocation), or the exit
 * code where the command ends: 0 once `usage` is printed for --help, 2 once a UsageError is
 * printed with `usage` after it.
 */
export function optionsOrExit<T extends { help: boolean }>(io: CliIO, command: string, usage: string, parse: () => T): T | number {
  let options: T;
  try {
    options = parse();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr(`aov ${command}: ${e.message}\n\n${usage}`);
    return 2;
  }
  if (options.help) {
    io.stdout(usage);
    return 0;
  }
  return options;
}

/** The configuration `load` reads, or exit code 2 once its ConfigError is printed. */
export function configOrExit<C extends object>(io: CliIO, command: string, load: () => C): C | number {
  try {
    return load();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    io.stderr(`aov ${command}: invalid configuration: ${e.message}\n`);
    return 2;
  }
}

/** 1-based line and column (in UTF-16 units, as editors count) of an offset in a text. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}
