/**
 * @module `aov backup DEST` and `aov restore SRC`: an online, consistent copy of the embedded store's data
 * directory with a manifest, and a restore that checks the copy against its manifest, refuses to replace a
 * live data directory, and then audits what it restored against its transparency log (the restore proves
 * itself). PostgreSQL deployments use PostgreSQL's own tools (docs/operations.md).
 */
import type { CliIO } from './io.js';
import { configOrExit, optionsOrExit, parseCommandArgs } from './args.js';
import { loadConfig, type Config } from '../config.js';
import { BackupError, backupDataDir, restoreDataDir } from '../store/sqlite-backup.js';
import { auditStore } from './log.js';

const BACKUP_HELP = `usage: aov backup <dest> [--data-dir DIR] [--json]

  Copies the data directory (default DATA_DIR, else ./data) to <dest>, a new or empty
  directory, while the server keeps serving: the SQLite database through SQLite's online
  backup API (one consistent moment), the signing keys and the log's note key as they are
  (encrypted keys stay encrypted), and manifest.json (each file's size and SHA-256, row
  counts, the log's tree size and root). Keep <dest> as private as the data directory.
`;

const RESTORE_HELP = `usage: aov restore <src> [--data-dir DIR] [--force] [--checkpoint FILE] [--json]

  Checks the backup in <src> against its manifest (every file's SHA-256, SQLite's
  integrity check, the row counts and the log's head), puts it in place of the data
  directory, then audits the restored store against its transparency log.
  Refuses a data directory a running server uses, and one that holds files unless
  --force (its files are moved aside to DIR.before-restore-<time>, never deleted).
  --checkpoint FILE: the newest checkpoint the service published (GET /log/checkpoint,
  or a monitor's state file); receipts logged after the backup are reported missing.
  Exit 0: restored and the audit is clean; 1: restored with findings; 2: not restored.
`;

const OPTIONS = {
  'data-dir': { type: 'string' },
  force: { type: 'boolean' },
  checkpoint: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Parsed = { positionals: string[]; values: { 'data-dir'?: string; force?: boolean; checkpoint?: string; json?: boolean; help?: boolean }; config: Config };

function parse(argv: string[], io: CliIO, command: string, help: string): Parsed | number {
  const parsed = optionsOrExit(io, command, help, () => {
    const { values, positionals } = parseCommandArgs(argv, OPTIONS);
    return { values, positionals, help: values.help === true };
  });
  if (typeof parsed === 'number') return parsed;
  if (parsed.positionals.length !== 1) {
    io.stderr(help);
    return 2;
  }
  const config = configOrExit(io, command, () => loadConfig(undefined, { 'data-dir': parsed.values['data-dir'] }));
  if (typeof config === 'number') return config;
  if (config.databaseUrl) {
    io.stderr(`aov ${command}: DATABASE_URL is set: back up PostgreSQL with pg_dump or point-in-time recovery (docs/operations.md)\n`);
    return 2;
  }
  return { positionals: parsed.positionals, values: parsed.values, config };
}

export async function runBackup(argv: string[], io: CliIO): Promise<number> {
  const p = parse(argv, io, 'backup', BACKUP_HELP);
  if (typeof p === 'number') return p;
  try {
    const m = await backupDataDir({ dataDir: p.config.dataDir, dest: p.positionals[0] as string });
    if (p.values.json) io.stdout(`${JSON.stringify(m)}\n`);
    else {
      io.stdout(`backed up ${m.source} to ${p.positionals[0]}: ${m.counts.receipts} receipts, a log of ${m.log.tree_size} entries (root ${m.log.root_hash}), ${m.files.length} files\n`);
    }
    return 0;
  } catch (e) {
    if (!(e instanceof BackupError) && !(e as NodeJS.ErrnoException).code) throw e;
    io.stderr(`aov backup: ${(e as Error).message}\n`);
    return 2;
  }
}

export async function runRestore(argv: string[], io: CliIO): Promise<number> {
  const p = parse(argv, io, 'restore', RESTORE_HELP);
  if (typeof p === 'number') return p;
  const published = p.values.checkpoint === undefined ? undefined : io.readFile(p.values.checkpoint);
  try {
    const r = restoreDataDir({ src: p.positionals[0] as string, dataDir: p.config.dataDir, force: p.values.force });
    if (!p.values.json) {
      io.stdout(`restored ${p.positionals[0]} (taken ${r.manifest.created_at}) into ${p.config.dataDir}: ${r.manifest.counts.receipts} receipts, a log of ${r.manifest.log.tree_size} entries\n`);
      if (r.movedAside) io.stdout(`  the files that were there are in ${r.movedAside}\n`);
    }
  } catch (e) {
    if (!(e instanceof BackupError) && !(e as NodeJS.ErrnoException).code) throw e;
    io.stderr(`aov restore: not restored: ${(e as Error).message}\n`);
    return 2;
  }
  return auditStore(io, p.config, { published, json: p.values.json });
}
