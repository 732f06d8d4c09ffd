/**
 * @module Backup and restore of the embedded store's data directory. The database is copied online with
 * SQLite's backup API in one step (one read transaction, so the copy is one consistent moment however hard the
 * server writes meanwhile); every other file of the directory (signing keys, encrypted or not, and the log's note
 * key) is copied byte for byte. A manifest names each file with its size and SHA-256, and what the copy holds
 * (row counts, the log's tree size and root), so a restore can refuse a damaged or tampered copy before it
 * replaces anything.
 */
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export const MANIFEST_FILE = 'manifest.json';
const DB_FILE = 'verifier.db';
const FORMAT = 'aov-backup/v1';

/** What a backup holds, written beside it as manifest.json. */
export interface BackupManifest {
  format: typeof FORMAT;
  created_at: string;
  /** The data directory the copy was taken from. */
  source: string;
  /** Every file of the backup but the manifest, paths relative to the backup, `/`-separated. */
  files: Array<{ path: string; bytes: number; sha256: string }>;
  counts: Record<BackupTable, number>;
  log: { tree_size: number; root_hash: string; checkpoint: string };
}

const TABLES = ['receipts', 'log_entries', 'log_queue', 'payments', 'pending_settlements', 'signing_keys'] as const;
type BackupTable = (typeof TABLES)[number];

interface SqliteDb {
  backup(file: string, options: { progress(): number }): Promise<unknown>;
  prepare(sql: string): { get(...params: unknown[]): unknown; pluck(): { get(...params: unknown[]): unknown } };
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  exec(sql: string): void;
  close(): void;
}
type SqliteCtor = new (file: string, options?: { readonly?: boolean; fileMustExist?: boolean; timeout?: number }) => SqliteDb;
const Database = createRequire(import.meta.url)('better-sqlite3') as SqliteCtor;

export class BackupError extends Error {}

export interface BackupOptions {
  dataDir: string;
  /** A directory that does not exist yet, or is empty. */
  dest: string;
  now?: () => Date;
}

/** Copies a data directory, live or not, to `dest` and writes its manifest. */
export async function backupDataDir(options: BackupOptions): Promise<BackupManifest> {
  const dataDir = path.resolve(options.dataDir);
  const dest = path.resolve(options.dest);
  const dbFile = path.join(dataDir, DB_FILE);
  if (!existsSync(dbFile)) throw new BackupError(`no embedded database at ${dbFile} (for PostgreSQL use pg_dump; see docs/operations.md)`);
  if (dest === dataDir || dest.startsWith(dataDir + path.sep)) throw new BackupError('the backup must not be inside the data directory');
  if (existsSync(dest) && readdirSync(dest).length > 0) throw new BackupError(`${dest} is not empty`);
  mkdirSync(dest, { recursive: true, mode: 0o700 });

  // The keys first: a key made after this moment signs receipts the database copy cannot hold, while a receipt
  // in the copy is always signed by a key that existed before it, so this order never leaves a receipt keyless.
  for (const rel of listFiles(dataDir)) {
    if (rel === DB_FILE || rel.startsWith(`${DB_FILE}-`) || rel.endsWith('.tmp')) continue;
    const to = path.join(dest, rel);
    mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
    copyFileSync(path.join(dataDir, rel), to);
    chmodSync(to, statSync(path.join(dataDir, rel)).mode & 0o777);
  }

  const source = new Database(dbFile, { fileMustExist: true, timeout: 10_000 });
  try {
    // A step of every page at once: one read transaction, so writes by the server (another connection, often
    // another process) never restart the copy and the copy is of one moment.
    await source.backup(path.join(dest, DB_FILE), { progress: () => 0x7fffffff });
  } finally {
    source.close();
  }
  const copy = new Database(path.join(dest, DB_FILE), { fileMustExist: true });
  let counts: BackupManifest['counts'];
  let log: BackupManifest['log'];
  try {
    // A self-contained file: no WAL beside it to lose on the way to where backups are kept.
    copy.pragma('journal_mode = DELETE');
    ({ counts, log } = describe(copy));
  } finally {
    copy.close();
  }
  chmodSync(path.join(dest, DB_FILE), 0o600);

  const manifest: BackupManifest = {
    format: FORMAT,
    created_at: (options.now ?? (() => new Date()))().toISOString(),
    source: dataDir,
    files: listFiles(dest).map((rel) => fileEntry(dest, rel)),
    counts,
    log,
  };
  writeFileSync(path.join(dest, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  return manifest;
}

export interface RestoreOptions {
  /** A directory written by backupDataDir. */
  src: string;
  dataDir: string;
  /** Replace a data directory that holds files (moved aside, never deleted); a live one is refused regardless. */
  force?: boolean;
  now?: () => Date;
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** Where the files that were in the data directory went, when `force` moved them. */
  movedAside: string | null;
}

/** Checks a backup against its manifest, then puts it in place of the data directory. */
export function restoreDataDir(options: RestoreOptions): RestoreResult {
  const src = path.resolve(options.src);
  const dataDir = path.resolve(options.dataDir);
  const manifest = checkBackup(src);

  if (existsSync(path.join(dataDir, DB_FILE)) && isDatabaseInUse(path.join(dataDir, DB_FILE))) {
    throw new BackupError(`${dataDir} is in use by a running server: stop it before restoring`);
  }
  const occupied = existsSync(dataDir) && readdirSync(dataDir).length > 0;
  if (occupied && !options.force) throw new BackupError(`${dataDir} is not empty: restore into an empty directory, or pass --force to move its files aside`);

  // Copied next to the target and renamed into place, so a restore cut short leaves no half-filled data directory.
  const stamp = (options.now ?? (() => new Date()))().toISOString().replace(/[:.]/g, '-');
  const staging = `${dataDir}.restoring-${process.pid}`;
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  for (const f of manifest.files) {
    const to = path.join(staging, f.path);
    mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
    copyFileSync(path.join(src, f.path), to);
    chmodSync(to, statSync(path.join(src, f.path)).mode & 0o777);
  }
  let movedAside: string | null = null;
  if (occupied) {
    movedAside = `${dataDir}.before-restore-${stamp}`;
    renameSync(dataDir, movedAside);
  } else if (existsSync(dataDir)) {
    rmdirSync(dataDir);
  }
  renameSync(staging, dataDir);
  return { manifest, movedAside };
}

/**
 * Reads a backup's manifest and checks every file against it and the database against its counts; throws a
 * BackupError naming the first thing that differs.
 */
export function checkBackup(src: string): BackupManifest {
  const manifestFile = path.join(src, MANIFEST_FILE);
  if (!existsSync(manifestFile)) throw new BackupError(`${src} has no ${MANIFEST_FILE}: not a backup made by aov backup`);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as BackupManifest;
  } catch (e) {
    throw new BackupError(`${MANIFEST_FILE} is not JSON: ${(e as Error).message}`);
  }
  if (manifest?.format !== FORMAT || !Array.isArray(manifest.files)) throw new BackupError(`${MANIFEST_FILE} is not an ${FORMAT} manifest`);
  const listed = new Set<string>();
  for (const f of manifest.files) {
    if (typeof f?.path !== 'string' || f.path.split('/').some((p) => p === '..' || p === '') || path.isAbsolute(f.path)) {
      throw new BackupError(`${MANIFEST_FILE} names a file outside the backup: ${JSON.stringify(f?.path)}`);
    }
    listed.add(f.path);
    const file = path.join(src, f.path);
    if (!existsSync(file)) throw new BackupError(`${f.path} is missing from the backup`);
    const actual = fileEntry(src, f.path);
    if (actual.bytes !== f.bytes || actual.sha256 !== f.sha256) throw new BackupError(`${f.path} differs from the manifest (sha256 ${actual.sha256}, expected ${f.sha256})`);
  }
  if (!listed.has(DB_FILE)) throw new BackupError(`the manifest lists no ${DB_FILE}`);
  const db = new Database(path.join(src, DB_FILE), { readonly: true, fileMustExist: true });
  try {
    const integrity = db.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new BackupError(`${DB_FILE} fails SQLite's integrity check: ${String(integrity)}`);
    const { counts, log } = describe(db);
    for (const t of TABLES) {
      if (counts[t] !== manifest.counts?.[t]) throw new BackupError(`${DB_FILE} holds ${counts[t]} rows of ${t}; the manifest says ${String(manifest.counts?.[t])}`);
    }
    if (log.tree_size !== manifest.log?.tree_size || log.root_hash !== manifest.log?.root_hash) {
      throw new BackupError(`the log in ${DB_FILE} (${log.tree_size} entries, root ${log.root_hash}) is not the manifest's (${manifest.log?.tree_size}, ${manifest.log?.root_hash})`);
    }
  } finally {
    db.close();
  }
  return manifest;
}

/**
 * True when another connection has the database open: SQLite refuses an exclusive lock then. A server in WAL
 * mode holds a shared lock for as long as it runs, idle or not.
 */
export function isDatabaseInUse(dbFile: string): boolean {
  let db: SqliteDb | undefined;
  try {
    db = new Database(dbFile, { fileMustExist: true, timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    return false;
  } catch (e) {
    if ((e as { code?: string }).code === 'SQLITE_BUSY') return true;
    throw e;
  } finally {
    db?.close();
  }
}

function describe(db: SqliteDb): Pick<BackupManifest, 'counts' | 'log'> {
  const counts = {} as BackupManifest['counts'];
  for (const t of TABLES) counts[t] = Number(db.prepare(`SELECT count(*) FROM ${t}`).pluck().get());
  const head = db.prepare('SELECT size, root, note FROM log_head WHERE id = 1').get() as { size: number; root: Buffer; note: string } | undefined;
  return {
    counts,
    log: { tree_size: Number(head?.size ?? 0), root_hash: head ? Buffer.from(head.root).toString('base64') : '', checkpoint: head?.note ?? '' },
  };
}

function fileEntry(dir: string, rel: string): BackupManifest['files'][number] {
  const bytes = readFileSync(path.join(dir, rel));
  return { path: rel, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Regular files below `dir`, relative and `/`-separated, sorted. */
function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(dir, rel));
    else if (entry.isFile()) out.push(rel);
  }
  return out.sort();
}
