#!/usr/bin/env node
/**
 * @module The `aov` command line: one binary for everything a user does locally
 * (docs/protocol.md#command-line). Each subcommand lives in its own module and
 * is loaded on demand, so `aov verify` does not pay for the server's imports.
 */
import type { CliIO } from './io.js';
import { defaultIO } from './io.js';
import { didYouMean } from './args.js';
import { VERSION } from '../version.js';

type CommandModule = { run(argv: string[], io: CliIO): Promise<number> };

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  serve: { summary: 'run the HTTP + MCP service', load: () => import('./serve.js') },
  verify: { summary: 'verify an output offline (exit 0 pass, 1 fail, 2 invalid/usage)', load: () => import('./verify.js') },
  repair: { summary: 'apply the repairs of a failing verdict and verify again (exit 0 pass, 1 fail, 2 invalid/usage)', load: () => import('./repair.js') },
  keys: { summary: 'generate | list | rotate signing keys; seal the Solana fee payer', load: () => import('./keys.js') },
  'request-hash': { summary: 'print the request_hash of a request file', load: () => import('./request-hash.js') },
  receipt: { summary: 'receipt verify: check a signed receipt offline', load: () => import('./receipt.js') },
  log: { summary: 'transparency log: verify a receipt, monitor a service, audit the store', load: () => import('./log.js') },
  backup: { summary: 'copy the embedded store (online, with a manifest)', load: async () => ({ run: (await import('./backup.js')).runBackup }) },
  restore: { summary: 'check a backup and put it in place, then audit it', load: async () => ({ run: (await import('./backup.js')).runRestore }) },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(14)} ${c.summary}`);
  return `usage: aov <command> [options]\n\ncommands:\n${lines.join('\n')}\n\nRun 'aov <command> --help' for a command's options; 'aov --version' prints the version.\n`;
}

export async function main(argv: string[], io: CliIO = defaultIO): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage());
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-v' || name === '-V' || name === 'version') {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    const guess = didYouMean(name.replace(/^-+/, ''), Object.keys(COMMANDS));
    io.stderr(`aov: unknown command '${name}'${guess ? ` — did you mean '${guess}'?` : ''}\n\n${usage()}`);
    return 2;
  }
  const mod = await command.load();
  return mod.run(rest, io);
}

const invokedDirectly = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (invokedDirectly || process.argv[1]?.endsWith('/aov')) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      // Never a stack trace to the user; the message is enough to act on.
      process.stderr.write(`aov: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 2;
    },
  );
}
