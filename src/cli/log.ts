/**
 * @module `aov log`: the transparency log from the command line.
 *   verify <receipt.json> --log <url>   the receipt file's entry is in the log (signed checkpoint + inclusion)
 *   monitor <url> [--state file]         check the newest checkpoint extends the last one seen; new entries per agent
 *   audit                                the operator's check: every stored receipt is in the log and vice versa
 *   resign                               the operator's deliberate change of the log's note key or public URL
 * Exit codes: 0 ok, 1 a check failed, 2 usage or a service/database that could not be read.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Config } from '../config.js';
import type { CliIO } from './io.js';
import { didYouMean, parseCommandArgs } from './args.js';

const HELP = `usage: aov log <verify|monitor|audit|resign> [options]

  aov log verify <receipt.json> --log <url> [--key <verifier key>] [--json]
      Checks the receipt (the exact bytes GET /verifications/{id} served) is in the
      service's transparency log: its entry hashes the file, the checkpoint is signed
      by the log key (from --key, else <url>/log/key), and the inclusion proof holds.

  aov log monitor <url> [--state <file>] [--key <verifier key>] [--json]
      Fetches the newest checkpoint, checks it is consistent with the one in the state
      file, reads the new entries from the tiles and reports what each agent gained.
      The state file (created when missing) pins the log key and remembers the tree.

  aov log audit [--data-dir <dir>] [--database-url <url>] [--checkpoint <file>] [--json]
      For the operator: every receipt in the store is in the log (or queued) and every
      log entry still has its receipt, unchanged; the tree and its checkpoint match.
      --checkpoint: a checkpoint the service published earlier (the text of
      GET /log/checkpoint, or a monitor's state file); the store's tree must contain
      it. After a restore from an older backup, its lost tail is reported here.
      Checkpoints are checked with the note key the database records.

  aov log resign [--data-dir <dir>] [--database-url <url>]
      For the operator, after changing the log's note key or PUBLIC_BASE_URL on purpose:
      signs the newest checkpoint with the note key of this configuration (the one in
      the database with KEY_ENCRYPTION_KEY, else LOG_NOTE_KEY_FILE), so that instances
      holding that key sign checkpoints again. Monitors that pinned the old key alert
      until they are given the new one (GET /log/key).
`;

function fail(io: CliIO, message: string): number {
  io.stderr(`aov log: ${message}\n`);
  return 2;
}

const SUBCOMMANDS = ['verify', 'monitor', 'audit', 'resign'];

const LOG_OPTIONS = {
  log: { type: 'string' },
  key: { type: 'string' },
  state: { type: 'string' },
  json: { type: 'boolean' },
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  checkpoint: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(argv: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '-h' || sub === '--help') {
    io.stdout(HELP);
    return sub ? 0 : 2;
  }
  if (!SUBCOMMANDS.includes(sub)) {
    const guess = didYouMean(sub, SUBCOMMANDS);
    return fail(io, `unknown subcommand '${sub}'${guess ? ` — did you mean '${guess}'?` : ' (verify, monitor, audit or resign)'}`);
  }
  let parsed;
  try {
    parsed = parseCommandArgs(rest, LOG_OPTIONS);
  } catch (e) {
    return fail(io, `${(e as Error).message} (see aov log --help)`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  try {
    if (sub === 'verify') return await checkInclusion(io, positionals, values);
    if (sub === 'monitor') return await monitor(io, positionals, values);
    if (sub === 'resign') return await resign(io, positionals, values);
    return await audit(io, positionals, values);
  } catch (e) {
    return fail(io, e instanceof Error ? e.message : String(e));
  }
}

type Values = { log?: string; key?: string; state?: string; json?: boolean; 'data-dir'?: string; 'database-url'?: string; checkpoint?: string };

async function checkInclusion(io: CliIO, positionals: string[], values: Values): Promise<number> {
  if (positionals.length !== 1 || !values.log) return fail(io, 'usage: aov log verify <receipt.json> --log <url>');
  const { checkReceiptInLog } = await import('../log/client.js');
  const receiptText = io.readFile(positionals[0] as string);
  const r = await checkReceiptInLog({ receiptText, logUrl: values.log, verifierKey: values.key });
  if (values.json) {
    io.stdout(`${JSON.stringify({ ok: r.ok, verification_id: r.verificationId, index: r.index, tree_size: r.checkpoint?.size ?? null, problems: r.problems })}\n`);
  } else if (r.ok) {
    io.stdout(`ok: receipt ${r.verificationId} is entry ${r.index} of the log (checkpoint ${r.checkpoint?.origin} size ${r.checkpoint?.size}, root ${r.checkpoint?.root.toString('base64')})\n`);
  } else {
    io.stdout(`NOT PROVEN: receipt ${r.verificationId ?? '?'}\n${r.problems.map((p) => `  - ${p}\n`).join('')}`);
  }
  return r.ok ? 0 : 1;
}

async function monitor(io: CliIO, positionals: string[], values: Values): Promise<number> {
  if (positionals.length !== 1) return fail(io, 'usage: aov log monitor <url> [--state <file>]');
  const { monitorLog } = await import('../log/client.js');
  const stateFile = values.state;
  const state = stateFile && existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : null;
  const r = await monitorLog({ logUrl: positionals[0] as string, state, verifierKey: values.key });
  if (values.json) {
    io.stdout(`${JSON.stringify({ ok: r.ok, from: r.from, to: r.to, problems: r.problems, agents: r.agents })}\n`);
  } else if (r.ok) {
    io.stdout(`ok: ${r.state.origin} grew from ${r.from} to ${r.to} entries, consistent with what was seen before\n`);
    for (const a of r.agents) io.stdout(`  ${a.agent_id ?? '(no agent)'}: +${a.added} (${a.passes} pass, ${a.fails} fail)\n`);
  } else {
    io.stdout(`ALERT: ${r.problems.map((p) => `\n  - ${p}`).join('')}\n`);
  }
  // Only a verified state is remembered; after an alert the old one stays, so the next run alerts again.
  if (r.ok && stateFile) {
    writeFileSync(`${stateFile}.tmp`, `${JSON.stringify(r.state, null, 2)}\n`);
    renameSync(`${stateFile}.tmp`, stateFile);
  }
  return r.ok ? 0 : 1;
}

/** The configuration of the operator's commands (environment, --data-dir, --database-url), or exit code 2 when it is invalid. */
async function storeConfig(io: CliIO, values: Values): Promise<Config | number> {
  const { ConfigError, loadConfig } = await import('../config.js');
  try {
    return loadConfig(undefined, { 'data-dir': values['data-dir'], 'database-url': values['database-url'] });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return fail(io, `invalid configuration: ${e.message}`);
  }
}

async function audit(io: CliIO, positionals: string[], values: Values): Promise<number> {
  if (positionals.length !== 0) return fail(io, 'usage: aov log audit [--data-dir <dir>] [--database-url <url>] [--checkpoint <file>]');
  const config = await storeConfig(io, values);
  if (typeof config === 'number') return config;
  const published = values.checkpoint === undefined ? undefined : io.readFile(values.checkpoint);
  return auditStore(io, config, { published, json: values.json });
}

/**
 * Audits the configured store against its log (and a published checkpoint, when given) and prints the report;
 * 0 clean, 1 findings. Also what `aov restore` runs on what it restored.
 */
export async function auditStore(io: CliIO, config: Config, options: { published?: string; json?: boolean }): Promise<number> {
  const { openStore } = await import('../store/index.js');
  const { auditLog } = await import('../log/audit.js');
  const { loadOrCreateNoteSigner, noteVerifierKey } = await import('../log/index.js');
  const { openCheckpoint, parseCheckpoint } = await import('../log/note.js');
  const originOf = (note: string) => note.slice(0, Math.max(0, note.indexOf('\n')));
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, schema: config.databaseSchema });
  try {
    // The note key the database records for each origin met (public: no KEY_ENCRYPTION_KEY needed); a store that has
    // none recorded yet (its service not restarted since the upgrade) has its key file. Nothing is created here.
    const keyFile = config.logNoteKeyFile;
    const isJson = options.published?.trimStart().startsWith('{') ?? false;
    const origins = new Set([originOf((await store.logHead()).note), options.published !== undefined && !isJson ? originOf(options.published) : ''].filter((o) => o !== ''));
    const keys = new Map<string, string>();
    for (const origin of origins) {
      const recorded = await store.logNoteKey(origin).catch(() => null);
      if (recorded) keys.set(origin, noteVerifierKey(origin, Buffer.from(recorded.publicKey, 'base64')));
      else if (existsSync(keyFile)) keys.set(origin, loadOrCreateNoteSigner(keyFile, origin).verifierKey);
    }
    const hasKey = keys.size > 0;
    const verifierKeyFor = hasKey
      ? (origin: string) => {
          const k = keys.get(origin);
          if (!k) throw new Error(`no note key is recorded for ${origin}`);
          return k;
        }
      : undefined;
    let published: { size: number; root: Buffer } | undefined;
    if (options.published !== undefined) {
      const text = options.published;
      if (isJson) {
        // A monitor's state file: a tree head the monitor already checked against the log key.
        const state = JSON.parse(text) as { size?: unknown; root_hash?: unknown };
        if (!Number.isSafeInteger(state.size) || typeof state.root_hash !== 'string') throw new Error('the checkpoint file is JSON but not a monitor state (size, root_hash)');
        published = { size: state.size as number, root: Buffer.from(state.root_hash, 'base64') };
      } else {
        const origin = originOf(text);
        const body = text.slice(0, text.indexOf('\n\n') + 1);
        const c = verifierKeyFor ? openCheckpoint(text, verifierKeyFor(origin), origin) : parseCheckpoint(body);
        published = { size: c.size, root: c.root };
      }
    }
    const r = await auditLog(store, { verifierKeyFor, published });
    if (options.json) io.stdout(`${JSON.stringify(r)}\n`);
    else {
      io.stdout(`${r.ok ? 'clean' : 'FINDINGS'}: log of ${r.tree_size} entries (root ${r.root_hash}), ${r.entries_checked} checked, ${r.queued} receipts queued for the log${published ? `, checked against a published checkpoint of ${published.size}` : ''}\n`);
      if (!hasKey) io.stdout('  (no note key recorded in the database or found in LOG_NOTE_KEY_FILE: the checkpoint signature was not checked)\n');
      for (const f of r.findings) io.stdout(`  - ${f.kind}${f.index !== undefined ? ` #${f.index}` : ''}${f.verification_id ? ` ${f.verification_id}` : ''}: ${f.detail}\n`);
    }
    return r.ok ? 0 : 1;
  } finally {
    await store.close();
  }
}

async function resign(io: CliIO, positionals: string[], values: Values): Promise<number> {
  if (positionals.length !== 0) return fail(io, 'usage: aov log resign [--data-dir <dir>] [--database-url <url>]');
  const config = await storeConfig(io, values);
  if (typeof config === 'number') return config;
  const { openStore } = await import('../store/index.js');
  const { formatCheckpoint, logOrigin, openCheckpoint, openNoteKey } = await import('../log/index.js');
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, schema: config.databaseSchema });
  try {
    await store.migrate();
    const origin = logOrigin(config.publicBaseUrl);
    const noteKey = await openNoteKey({ store, name: origin, file: config.logNoteKeyFile, kek: config.keyEncryptionKey, warn: (m) => io.stderr(`aov log: ${m}\n`) });
    // Only the log's recorded key may sign: re-signing with another would be the fork this command exists to end.
    if (noteKey.mismatch) return fail(io, noteKey.mismatch);
    const head = await store.logHead();
    const vkey = noteKey.signer.verifierKey;
    try {
      const c = openCheckpoint(head.note, vkey, origin);
      if (c.size === head.size && c.root.equals(head.root)) {
        io.stdout(`ok: the checkpoint of ${head.size} entries is already signed by ${vkey}\n`);
        return 0;
      }
    } catch {
      // Signed by another key (or under another origin): re-signed below.
    }
    const note = noteKey.signer.sign(formatCheckpoint({ origin, size: head.size, root: head.root }));
    // The same tree, a new signature: an append of nothing, which fails if the tree grew meanwhile.
    const ok = await store.logAppend({ expectedSize: head.size, entries: [], nodes: [], dequeue: [], head: { size: head.size, root: head.root, note } });
    if (!ok) return fail(io, 'the log grew while re-signing; run the command again');
    io.stdout(`ok: the checkpoint of ${head.size} entries is now signed by ${vkey}; give monitors this key\n`);
    return 0;
  } finally {
    await store.close();
  }
}
