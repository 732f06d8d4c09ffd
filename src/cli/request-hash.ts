/**
 * @module `aov request-hash REQUEST.json [--canonical]`: the request_hash of
 * a verification request (SPEC §5.1), or with --canonical the exact JCS text
 * it is the SHA-256 of. `-` reads standard input.
 */
import type { CliIO } from './io.js';
import { isApiError } from '../errors.js';
import { parseVerificationRequest } from '../core/request.js';
import { canonicalRequest, computeHashes } from '../receipts/hashes.js';

const USAGE = `usage: aov request-hash REQUEST.json [--canonical]

  Prints the request_hash (SHA-256 of the RFC 8785 form of the request with every
  default filled in, 'detail' excluded). --canonical prints that canonical form instead.
  Use - to read the request from standard input. Exit 0 ok, 2 unreadable/invalid request.
`;

export async function run(argv: string[], io: CliIO): Promise<number> {
  let file: string | undefined;
  let canonical = false;
  for (const a of argv) {
    if (a === '--help' || a === '-h') {
      io.stdout(USAGE);
      return 0;
    } else if (a === '--canonical') {
      canonical = true;
    } else if ((a === '-' || !a.startsWith('-')) && file === undefined) {
      file = a;
    } else {
      io.stderr(`aov request-hash: unexpected argument '${a}'\n${USAGE}`);
      return 2;
    }
  }
  if (file === undefined) {
    io.stderr(`aov request-hash: missing REQUEST.json\n${USAGE}`);
    return 2;
  }
  let text: string;
  try {
    text = io.readFile(file);
  } catch (e) {
    io.stderr(`aov request-hash: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}\n`);
    return 2;
  }
  try {
    const parsed = parseVerificationRequest(text);
    io.stdout(`${canonical ? canonicalRequest(parsed.request) : computeHashes(parsed).request_hash}\n`);
    return 0;
  } catch (e) {
    if (!isApiError(e)) throw e;
    const lines = e.fields.map((f) => `  ${f.field}: ${f.problem} — ${f.fix}\n`).join('');
    io.stderr(`aov request-hash: ${e.message}\n${lines}`);
    return 2;
  }
}
