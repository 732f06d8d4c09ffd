/**
 * @module `aov receipt verify`: check a signed receipt offline (SPEC §7) with
 * a raw public key or the service's agent card, and — given the request —
 * recompute all four hashes. Exit 0 valid, 1 invalid (one line naming the
 * failed check), 2 usage error.
 */
import type { CliIO } from './io.js';
import { ReceiptKeyError, verifyReceipt, type ReceiptKeys } from '../receipts/verify-receipt.js';

const USAGE = `usage: aov receipt verify RECEIPT.json (--public-key BASE64 | --agent-card FILE)
                          [--request REQUEST.json] [--context verify|score]

  --public-key BASE64   standard base64 of the raw 32-byte Ed25519 public key
  --agent-card FILE     the service's /.well-known/agent-card.json (key looked up by key_version,
                        validity window checked)
  --request FILE        the original request: also recompute output/schema/rules/request hashes
  --context C           verify (receipts of /verify/*) or score (trust scores); default: inferred
  Use - for at most one file to read standard input.
  Exit 0 valid, 1 invalid (names the failed check), 2 usage error.
`;

function usageError(io: CliIO, message: string): number {
  io.stderr(`aov receipt: ${message}\n${USAGE}`);
  return 2;
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const [action, ...rest] = argv;
  if (action === '--help' || action === '-h' || action === 'help') {
    io.stdout(USAGE);
    return 0;
  }
  if (action !== 'verify') return usageError(io, action ? `unknown action '${action}'` : 'missing action');

  const opts: Record<string, string> = {};
  let receiptFile: string | undefined;
  const valued = new Set(['--public-key', '--agent-card', '--request', '--context']);
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '--help' || a === '-h') {
      io.stdout(USAGE);
      return 0;
    }
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    if (valued.has(name)) {
      const v = name !== a ? a.slice(eq + 1) : rest[++i];
      if (v === undefined || v === '') return usageError(io, `${name} needs a value`);
      if (name in opts) return usageError(io, `${name} given twice`);
      opts[name] = v;
    } else if ((a === '-' || !a.startsWith('-')) && receiptFile === undefined) {
      receiptFile = a;
    } else {
      return usageError(io, `unexpected argument '${a}'`);
    }
  }
  if (receiptFile === undefined) return usageError(io, 'missing RECEIPT.json');
  if (('--public-key' in opts) === ('--agent-card' in opts)) return usageError(io, 'give exactly one of --public-key or --agent-card');
  const context = opts['--context'];
  if (context !== undefined && context !== 'verify' && context !== 'score') return usageError(io, '--context is verify or score');
  const stdinUses = [receiptFile, opts['--agent-card'], opts['--request']].filter((f) => f === '-').length;
  if (stdinUses > 1) return usageError(io, 'only one file can be read from standard input');

  const read = (file: string, what: string): string | number => {
    try {
      return io.readFile(file);
    } catch (e) {
      return usageError(io, `cannot read the ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  };

  const receiptText = read(receiptFile, 'receipt');
  if (typeof receiptText === 'number') return receiptText;

  let keys: ReceiptKeys;
  if (opts['--agent-card'] !== undefined) {
    const cardText = read(opts['--agent-card'], 'agent card');
    if (typeof cardText === 'number') return cardText;
    try {
      keys = { agentCard: JSON.parse(cardText) as unknown };
    } catch {
      return usageError(io, `the agent card ${opts['--agent-card']} is not valid JSON`);
    }
  } else {
    keys = { publicKey: opts['--public-key'] };
  }

  let request: string | undefined;
  if (opts['--request'] !== undefined) {
    const text = read(opts['--request'], 'request');
    if (typeof text === 'number') return text;
    request = text;
  }

  let result;
  try {
    result = verifyReceipt(receiptText, keys, { request, context: context as 'verify' | 'score' | undefined });
  } catch (e) {
    if (e instanceof ReceiptKeyError) return usageError(io, e.message);
    throw e;
  }
  if (result.valid) {
    io.stdout(`ok: receipt signature valid${request !== undefined ? ' and hashes match the request' : ''} (key_version ${result.keyVersion})\n`);
    return 0;
  }
  io.stdout(`invalid: ${result.failedCheck}: ${result.message}\n`);
  return 1;
}
