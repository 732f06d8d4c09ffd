/**
 * @module `aov request-hash REQUEST.json [--canonical]`: the request_hash of
 * a verification request (docs/protocol.md#hashes), or with --canonical the
 * exact RFC 8785 text it is the SHA-256 of. `-` reads standard input.
 */
import type { CliIO } from './io.js';
import { configOrExit, onePositional, optionsOrExit, parseCommandArgs, UsageError } from './args.js';
import { loadConfig } from '../config.js';
import { isApiError } from '../errors.js';
import { canonicalRequest, computeHashes } from '../receipts/hashes.js';
import { loadRequestFile } from './verify.js';

const USAGE = `usage: aov request-hash REQUEST.json [--canonical]

  Prints the request_hash (SHA-256 of the RFC 8785 form of the request with every
  default filled in, 'detail' excluded). --canonical prints that canonical form instead.
  Use - to read the request from standard input. Exit 0 ok, 2 unreadable/invalid request.
`;

const OPTIONS = {
  canonical: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(argv: string[], io: CliIO): Promise<number> {
  const opts = optionsOrExit(io, 'request-hash', USAGE, () => {
    const { values, positionals } = parseCommandArgs(argv, OPTIONS);
    const help = values.help === true;
    return { help, canonical: values.canonical === true, file: help ? '' : onePositional(positionals, 'REQUEST.json') };
  });
  if (typeof opts === 'number') return opts;
  const config = configOrExit(io, 'request-hash', () => loadConfig());
  if (typeof config === 'number') return config;
  try {
    const parsed = loadRequestFile(opts.file, io, config.maxJsonDepth);
    io.stdout(`${opts.canonical ? canonicalRequest(parsed.request) : computeHashes(parsed).request_hash}\n`);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`aov request-hash: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    if (!isApiError(e)) throw e;
    const lines = e.fields.map((f) => `  ${f.field}: ${f.problem} — ${f.fix}\n`).join('');
    io.stderr(`aov request-hash: ${e.message}\n${lines}`);
    return 2;
  }
}
