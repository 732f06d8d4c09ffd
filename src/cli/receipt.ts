/**
 * @module `aov receipt verify`: check a signed receipt offline
 * (docs/protocol.md#receipts) with a raw public key or the service's agent card
 * (a file, or its URL, fetched once), and — given the request — recompute all
 * four hashes. Exit 0 valid, 1 invalid (one line naming the failed check), 2
 * usage error.
 */
import type { CliIO } from './io.js';
import { didYouMean, lineColumn, onePositional, parseCommandArgs, UsageError } from './args.js';
import { ReceiptKeyError, verifyReceipt, type ReceiptKeys } from '../receipts/verify-receipt.js';

const USAGE = `usage: aov receipt verify RECEIPT.json (--public-key BASE64 | --agent-card FILE|URL)
                          [--request REQUEST.json] [--context verify|score]

  --public-key BASE64    standard base64 of the raw 32-byte Ed25519 public key
  --agent-card FILE|URL  the service's agent card: a saved file, or its URL
                         (e.g. https://host/.well-known/agent-card.json), fetched once;
                         the key is looked up by key_version, its validity window checked
  --request FILE         the original request: also recompute output/schema/rules/request hashes
  --context C            verify (receipts of /verify/*) or score (trust scores); default: inferred
  Use - for at most one file to read standard input.
  Exit 0 valid, 1 invalid (names the failed check), 2 usage error.
`;

const OPTIONS = {
  'public-key': { type: 'string' },
  'agent-card': { type: 'string' },
  request: { type: 'string' },
  context: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** How long to wait for an agent card URL before giving up. */
const FETCH_TIMEOUT_MS = 15_000;

export interface ReceiptCliOptions {
  /** Fetch an agent card URL (tests inject one; default: global fetch). */
  fetch?: typeof fetch;
}

function usageError(io: CliIO, message: string): number {
  io.stderr(`aov receipt: ${message}\n${USAGE}`);
  return 2;
}

async function fetchCard(url: string, fetchImpl: typeof fetch): Promise<string> {
  let res: Response;
  try {
    res = await fetchImpl(url, { headers: { accept: 'application/json' }, redirect: 'follow', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (e) {
    const cause = e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
    throw new UsageError(`cannot fetch the agent card ${url}: ${cause}`);
  }
  if (!res.ok) throw new UsageError(`cannot fetch the agent card ${url}: HTTP ${res.status}`);
  return res.text();
}

export async function run(argv: string[], io: CliIO, options: ReceiptCliOptions = {}): Promise<number> {
  const [action, ...rest] = argv;
  if (action === '--help' || action === '-h' || action === 'help') {
    io.stdout(USAGE);
    return 0;
  }
  if (action !== 'verify') {
    const guess = action ? didYouMean(action, ['verify']) : undefined;
    return usageError(io, action ? `unknown action '${action}'${guess ? ` — did you mean 'verify'?` : ''}` : 'missing action');
  }

  try {
    const { values, positionals } = parseCommandArgs(rest, OPTIONS);
    if (values.help) {
      io.stdout(USAGE);
      return 0;
    }
    const receiptFile = onePositional(positionals, 'RECEIPT.json');
    const card = values['agent-card'];
    const publicKey = values['public-key'];
    if ((card === undefined) === (publicKey === undefined)) throw new UsageError('give exactly one of --public-key or --agent-card');
    if (card === '' || publicKey === '') throw new UsageError(`${card === '' ? '--agent-card' : '--public-key'} needs a value`);
    const context = values.context;
    if (context !== undefined && context !== 'verify' && context !== 'score') throw new UsageError('--context is verify or score');
    if ([receiptFile, card, values.request].filter((f) => f === '-').length > 1) throw new UsageError('only one file can be read from standard input');

    const read = (file: string, what: string): string => {
      try {
        return io.readFile(file);
      } catch (e) {
        throw new UsageError(`cannot read the ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
      }
    };

    const receiptText = read(receiptFile, 'receipt');
    let keys: ReceiptKeys;
    if (card !== undefined) {
      const isUrl = /^https?:\/\//i.test(card);
      const cardText = isUrl ? await fetchCard(card, options.fetch ?? fetch) : read(card, 'agent card');
      try {
        keys = { agentCard: JSON.parse(cardText) as unknown };
      } catch (e) {
        const at = /position (\d+)/.exec(e instanceof Error ? e.message : '');
        const pos = at ? lineColumn(cardText, Number(at[1])) : undefined;
        const where = pos ? ` (line ${pos.line}, column ${pos.column})` : '';
        throw new UsageError(`the agent card ${card} is not valid JSON${where}`);
      }
    } else {
      keys = { publicKey: publicKey as string };
    }
    const request = values.request !== undefined ? read(values.request, 'request') : undefined;

    let result;
    try {
      result = verifyReceipt(receiptText, keys, { request, context: context as 'verify' | 'score' | undefined });
    } catch (e) {
      if (e instanceof ReceiptKeyError) throw new UsageError(e.message);
      throw e;
    }
    if (result.valid) {
      io.stdout(`ok: receipt signature valid${request !== undefined ? ' and hashes match the request' : ''} (key_version ${result.keyVersion})\n`);
      return 0;
    }
    io.stdout(`invalid: ${result.failedCheck}: ${result.message}\n`);
    return 1;
  } catch (e) {
    if (e instanceof UsageError) return usageError(io, e.message);
    throw e;
  }
}
