/**
 * @module `aov request-hash REQUEST.json [--canonical]`: the request_hash of
 * a verification request (docs/protocol.md#hashes), or with --canonical the
 * exact RFC 8785 text it is the SHA-256 of. `-` reads standard input.
 */
import type { CliIO } from './io.js';
import { onePositional, parseCommandArgs, UsageError } from './args.js';
import { ConfigError, loadConfig } from '../config.js';
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
  try {
    const { values, positionals } = parseCommandArgs(argv, OPTIONS);
    if (values.help) {
      io.stdout(USAGE);
      return 0;
    }
    const file = onePositional(positionals, 'REQUEST.json');
    const { maxJsonDepth } = loadConfig();
    const parsed = loadRequestFile(file, io, maxJsonDepth);
    io.stdout(`${values.canonical ? canonicalRequest(parsed.request) : computeHashes(parsed).request_hash}\n`);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`aov request-hash: ${e.message}\n${USAGE}`);
      return 2;
    }
    if (e instanceof ConfigError) {
      io.stderr(`aov request-hash: invalid configuration: ${e.message}\n`);
      return 2;
    }
    if (!isApiError(e)) throw e;
    const lines = e.fields.map((f) => `  ${f.field}: ${f.problem} — ${f.fix}\n`).join('');
    io.stderr(`aov request-hash: ${e.message}\n${lines}`);
    return 2;
  }
}
