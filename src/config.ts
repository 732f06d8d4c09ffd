/**
 * @module Service configuration: the only module that reads the environment.
 * Everything is parsed and validated once at start; a bad value is a ConfigError
 * naming the variable (or flag), so the operator knows what to fix before any
 * request is served. `aov serve` flags override the environment.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { boolSetting, ConfigError, intSetting } from './config-values.js';
import { parsePaymentConfig } from './payments/config.js';
import { parseKeyEncryptionKey } from './receipts/key-store.js';
import { openValidatorKey } from './erc8004/validator-key.js';
import type { PaymentConfig } from './payments/config.js';
import { MAX_PAGE_LIMIT } from './store/common.js';
import { DEFAULT_WORK_LIMITS, type WorkLimits } from './core/schema/engine.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface Config {
  host: string;
  port: number;
  /** Absolute path of the data directory (SQLite database, signing keys). */
  dataDir: string;
  /** Empty → embedded SQLite in dataDir; `postgres://…` → PostgreSQL. */
  databaseUrl: string;
  /** PostgreSQL schema holding the tables (default `public`). */
  databaseSchema: string;
  /** PostgreSQL connections per instance for queries and receipt writes (DATABASE_POOL_SIZE; the allowance counter has its own few). */
  databasePoolSize: number;
  serviceName: string;
  /** Public base URL without trailing slash, used in receipts, cards and docs. */
  publicBaseUrl: string;
  /** False when publicBaseUrl is only derived from HOST and PORT (PUBLIC_BASE_URL not set). */
  publicBaseUrlSet: boolean;
  freeAllowancePerDay: number;
  /**
   * Which proxies in front of the service are trusted to append to X-Forwarded-For
   * (Fastify's trustProxy semantics): false (none), a hop count, or addresses/CIDRs.
   * The client is the right-most address that is not a trusted proxy.
   */
  trustProxy: TrustProxy;
  bodyLimitBytes: number;
  /** Most outputs one POST /verify/batch may carry (BATCH_MAX_ITEMS). */
  batchMaxItems: number;
  /** Body limit of POST /verify/batch (BATCH_BODY_LIMIT_BYTES; default 8 × BODY_LIMIT_BYTES). */
  batchBodyLimitBytes: number;
  maxJsonDepth: number;
  listCap: number;
  schemaCacheSize: number;
  /** Estimated bytes the compiled-schema cache may hold (SCHEMA_CACHE_BYTES). */
  schemaCacheBytes: number;
  /** Work limits of every verification (SCHEMA_MAX_*; see docs/security.md). */
  workLimits: WorkLimits;
  /**
   * Most verification worker threads (VERIFY_WORKERS; 0 = verify on the HTTP thread); one runs from the start. Schemas are
   * programs from strangers: in workers, a slow one cannot stall other requests or /health.
   */
  verifyWorkers: number;
  /** Wall-clock limit of one verification task in a worker (VERIFY_DEADLINE_MS). */
  verifyDeadlineMs: number;
  /** Heap cap of each verification worker (VERIFY_WORKER_HEAP_MB). */
  verifyWorkerHeapMb: number;
  /**
   * How far V8 lets the heap grow past what survived the last full collection, in percent
   * (HEAP_GROWTH_PERCENT; 0 = V8's own choice). `aov serve` sets it for the whole process.
   */
  heapGrowthPercent: number;
  /**
   * The workers' fast path on the HTTP thread (src/service/fast-path.ts): small requests whose
   * schema is held compiled there run there under a step budget, everything else in the pool.
   */
  verifyFastPath: {
    /** Largest body tried on the HTTP thread (VERIFY_FAST_PATH_BYTES; 0 turns the fast path off). */
    maxBytes: number;
    /** Evaluation steps of one attempt there (VERIFY_FAST_PATH_STEPS; at most SCHEMA_MAX_EVALUATION_STEPS). */
    maxSteps: number;
    /** Largest compiled size of a schema compiled there (VERIFY_FAST_PATH_COMPILED_SIZE). */
    maxCompiledSize: number;
    /** Estimated bytes of the schemas held there (VERIFY_FAST_PATH_CACHE_BYTES). */
    cacheBytes: number;
  };
  /** SQLite durability: FULL survives power loss (default); NORMAL survives a process crash only. */
  sqliteSynchronous: 'FULL' | 'NORMAL';
  logLevel: LogLevel;
  /** PKCS#8 PEM file of the transparency log's note key (shared by every instance of one service). */
  logNoteKeyFile: string;
  /** Time between transparency-log integrations (ms). */
  logIntervalMs: number;
  /**
   * KEY_ENCRYPTION_KEY (32 bytes): when set, signing keys live in the database,
   * private keys encrypted with it, so instances share nothing but the database.
   * Never logged or echoed.
   */
  keyEncryptionKey: Buffer | null;
  /** CORS_ORIGINS: '*' (default), a list of allowed browser origins, or false (`none`). */
  corsOrigins: '*' | string[] | false;
  /** METRICS_TOKEN: when set, /metrics needs it as a bearer token. */
  metricsToken: string | null;
  /** Hostnames accepted in Host/Origin by the MCP endpoint (DNS-rebinding protection). */
  allowedHosts: string[];
  payments: PaymentConfig;
  /** ERC-8004 validator mode (docs/erc8004.md); off unless ERC8004_ENABLED is set. */
  erc8004: Erc8004Config;
}

export interface Erc8004Config {
  enabled: boolean;
  /** The Validation Registry (ERC8004_VALIDATION_REGISTRY), lowercase 0x address. */
  registry: `0x${string}`;
  /** JSON-RPC endpoint of its chain (ERC8004_RPC_URL): the only remote the validator talks to. */
  rpcUrl: string;
  /**
   * The validator's private key, read from ERC8004_VALIDATOR_KEY_FILE (0x + 64 hex). Not enumerable:
   * never printed or logged with the configuration.
   */
  validatorKey: `0x${string}`;
  /** First block scanned when no scan is recorded yet (ERC8004_START_BLOCK); null: the chain head at that start. */
  startBlock: number | null;
  /** How often the chain is polled for requests and answers are worked on (ERC8004_POLL_MS). */
  pollMs: number;
  /** Blocks a request must be under before it is read (ERC8004_CONFIRMATIONS). */
  confirmations: number;
}

/** false: X-Forwarded-For is ignored; n: the n nearest hops are proxies; list: these addresses/CIDRs are. */
export type TrustProxy = false | number | string[];

export { ConfigError };

/** Command-line overrides (`aov serve --port 9000 …`), already split into name → value. */
export interface ConfigFlags {
  host?: string;
  port?: string;
  'data-dir'?: string;
  'database-url'?: string;
  'public-base-url'?: string;
  'free-allowance'?: string;
  'trust-proxy'?: string;
  'log-level'?: string;
}

export const CONFIG_FLAGS: ReadonlyArray<{ flag: keyof ConfigFlags; env: string; boolean?: boolean }> = [
  { flag: 'host', env: 'HOST' },
  { flag: 'port', env: 'PORT' },
  { flag: 'data-dir', env: 'DATA_DIR' },
  { flag: 'database-url', env: 'DATABASE_URL' },
  { flag: 'public-base-url', env: 'PUBLIC_BASE_URL' },
  { flag: 'free-allowance', env: 'FREE_ALLOWANCE_PER_DAY' },
  { flag: 'trust-proxy', env: 'TRUST_PROXY', boolean: true },
  { flag: 'log-level', env: 'LOG_LEVEL' },
];

type Env = Record<string, string | undefined>;

/** proxy-addr (Fastify's own dependency) validates addresses and CIDRs exactly as Fastify will use them. */
const compileTrust = createRequire(import.meta.url)('proxy-addr').compile as (list: string[]) => unknown;

function trustProxySetting(name: string, raw: string | undefined): TrustProxy {
  const s = (raw ?? '').trim();
  if (s === '' || /^(0|false|no|off)$/i.test(s)) return false;
  // A bare "true" trusts only the nearest hop: trusting every hop would let a client pick its own address.
  if (/^(true|yes|on)$/i.test(s)) return 1;
  if (/^[0-9]+$/.test(s)) {
    const n = Number(s);
    if (!Number.isSafeInteger(n) || n > 100) throw new ConfigError(name, `hop count must be between 0 and 100, got ${s}`);
    return n === 0 ? false : n;
  }
  const list = s.split(',').map((x) => x.trim()).filter(Boolean);
  try {
    compileTrust(list);
  } catch (e) {
    throw new ConfigError(name, `must be true/false, a hop count, or a comma-separated list of proxy addresses/CIDRs (${e instanceof Error ? e.message : 'invalid'})`);
  }
  return list;
}

function hostOf(url: string): string {
  const h = new URL(url).hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/**
 * Build the configuration from an environment map and optional flags.
 * Flag names are reported as `--flag`, environment variables by name.
 */
export function loadConfig(env: Env = process.env, flags: ConfigFlags = {}): Config {
  // Merge: a flag wins over its variable; errors name whichever was used.
  const merged: Env = { ...env };
  const source: Record<string, string> = {};
  for (const { flag, env: name } of CONFIG_FLAGS) {
    source[name] = name;
    const v = flags[flag];
    if (v !== undefined) {
      merged[name] = v;
      source[name] = `--${flag}`;
    }
  }
  const get = (name: string): string | undefined => merged[name];
  const label = (name: string): string => source[name] ?? name;

  const host = (get('HOST') ?? '').trim() || '127.0.0.1';
  const port = intSetting(label('PORT'), get('PORT'), 8080, 0, 65535);
  const dataDir = path.resolve((get('DATA_DIR') ?? '').trim() || './data');
  const databaseUrl = (get('DATABASE_URL') ?? '').trim();
  if (databaseUrl !== '' && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(label('DATABASE_URL'), 'must be empty (embedded SQLite) or a postgres:// URL');
  }
  const databaseSchema = (get('DATABASE_SCHEMA') ?? '').trim() || 'public';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(databaseSchema)) {
    throw new ConfigError('DATABASE_SCHEMA', `must be a lowercase SQL identifier (letters, digits, _), got '${databaseSchema}'`);
  }
  const databasePoolSize = intSetting('DATABASE_POOL_SIZE', get('DATABASE_POOL_SIZE'), 10, 2, 1000);
  const serviceName = (get('SERVICE_NAME') ?? '').trim() || 'agent-output-verifier';

  const urlHost = host.includes(':') ? `[${host}]` : host;
  const publicBaseUrlSet = (get('PUBLIC_BASE_URL') ?? '').trim() !== '';
  const rawBase = (get('PUBLIC_BASE_URL') ?? '').trim() || `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : urlHost}:${port}`;
  let publicBaseUrl: string;
  try {
    const u = new URL(rawBase);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    if (u.search || u.hash) throw new Error('query');
    publicBaseUrl = u.toString().replace(/\/+$/, '');
  } catch {
    throw new ConfigError(label('PUBLIC_BASE_URL'), `must be an absolute http(s) URL without query, got '${rawBase}'`);
  }

  const freeAllowancePerDay = intSetting(label('FREE_ALLOWANCE_PER_DAY'), get('FREE_ALLOWANCE_PER_DAY'), 1000, 0, 1_000_000_000);
  const trustProxy = trustProxySetting(label('TRUST_PROXY'), get('TRUST_PROXY'));
  const bodyLimitBytes = intSetting('BODY_LIMIT_BYTES', get('BODY_LIMIT_BYTES'), 1024 * 1024, 1024, 100 * 1024 * 1024);
  const batchMaxItems = intSetting('BATCH_MAX_ITEMS', get('BATCH_MAX_ITEMS'), 100, 1, 10_000);
  const batchBodyLimitBytes = intSetting('BATCH_BODY_LIMIT_BYTES', get('BATCH_BODY_LIMIT_BYTES'), Math.min(8 * bodyLimitBytes, 100 * 1024 * 1024), 1024, 100 * 1024 * 1024);
  const maxJsonDepth = intSetting('MAX_JSON_DEPTH', get('MAX_JSON_DEPTH'), 64, 2, 10_000);
  // LIST_CAP is also the largest reputation page, so it cannot exceed what the stores accept.
  const listCap = intSetting('LIST_CAP', get('LIST_CAP'), 100, 1, MAX_PAGE_LIMIT);
  const schemaCacheSize = intSetting('SCHEMA_CACHE_SIZE', get('SCHEMA_CACHE_SIZE'), 500, 0, 1_000_000);
  const schemaCacheBytes = intSetting('SCHEMA_CACHE_BYTES', get('SCHEMA_CACHE_BYTES'), 64 * 1024 * 1024, 0, 64 * 1024 * 1024 * 1024);
  const workLimits: WorkLimits = {
    maxExpandedSchemaSize: intSetting('SCHEMA_MAX_EXPANDED_SIZE', get('SCHEMA_MAX_EXPANDED_SIZE'), DEFAULT_WORK_LIMITS.maxExpandedSchemaSize, 1, 1_000_000_000),
    maxPatternSize: intSetting('SCHEMA_MAX_PATTERN_SIZE', get('SCHEMA_MAX_PATTERN_SIZE'), DEFAULT_WORK_LIMITS.maxPatternSize, 1, 1_000_000_000),
    maxCompiledSize: intSetting('SCHEMA_MAX_COMPILED_SIZE', get('SCHEMA_MAX_COMPILED_SIZE'), DEFAULT_WORK_LIMITS.maxCompiledSize, 1, 1_000_000_000),
    maxEvaluationSteps: intSetting('SCHEMA_MAX_EVALUATION_STEPS', get('SCHEMA_MAX_EVALUATION_STEPS'), DEFAULT_WORK_LIMITS.maxEvaluationSteps, 1, 1_000_000_000_000),
    maxPropertyTables: intSetting('SCHEMA_MAX_PROPERTY_TABLES', get('SCHEMA_MAX_PROPERTY_TABLES'), DEFAULT_WORK_LIMITS.maxPropertyTables, 0, 10_000),
  };

  const verifyWorkers = intSetting('VERIFY_WORKERS', get('VERIFY_WORKERS'), 2, 0, 64);
  // Past the work limits' own bound (no request under them needs 250 ms of CPU), short of the 2 s a caller waits at most.
  const verifyDeadlineMs = intSetting('VERIFY_DEADLINE_MS', get('VERIFY_DEADLINE_MS'), 1500, 50, 600_000);
  const verifyWorkerHeapMb = intSetting('VERIFY_WORKER_HEAP_MB', get('VERIFY_WORKER_HEAP_MB'), 256, 32, 16_384);
  // V8 lets the heap grow to up to 4× what survived when collecting is cheap next to allocating, as it is
  // here (most of a request's garbage dies young). 100% (2×) cut the peak RSS under load by 30–35 MB at the
  // same throughput and p99; 30% cut 60 MB but its more frequent full collections added ~7 ms to the p99
  // at 1,000 req/s (docs/BENCHMARKS.md, "Memory").
  const heapGrowthPercent = intSetting('HEAP_GROWTH_PERCENT', get('HEAP_GROWTH_PERCENT'), 100, 0, 1000);
  // Defaults measured so one fast-path request costs the HTTP thread at most a few ms (docs/operations.md).
  const verifyFastPath = {
    maxBytes: intSetting('VERIFY_FAST_PATH_BYTES', get('VERIFY_FAST_PATH_BYTES'), 16 * 1024, 0, 1024 * 1024),
    maxSteps: Math.min(
      workLimits.maxEvaluationSteps,
      intSetting('VERIFY_FAST_PATH_STEPS', get('VERIFY_FAST_PATH_STEPS'), 25_000, 1, 100_000_000),
    ),
    maxCompiledSize: intSetting('VERIFY_FAST_PATH_COMPILED_SIZE', get('VERIFY_FAST_PATH_COMPILED_SIZE'), 4_000, 1, 1_000_000),
    cacheBytes: intSetting('VERIFY_FAST_PATH_CACHE_BYTES', get('VERIFY_FAST_PATH_CACHE_BYTES'), 16 * 1024 * 1024, 0, 1024 * 1024 * 1024),
  };

  const logNoteKeyFile = path.resolve((get('LOG_NOTE_KEY_FILE') ?? '').trim() || path.join(dataDir, 'log', 'note-key.pem'));
  // Under a second in all: a receipt must be covered by a published checkpoint within one second of its response.
  const logIntervalMs = intSetting('LOG_INTERVAL_MS', get('LOG_INTERVAL_MS'), 200, 10, 800);

  const rawSync = ((get('SQLITE_SYNCHRONOUS') ?? '').trim() || 'FULL').toUpperCase();
  if (rawSync !== 'FULL' && rawSync !== 'NORMAL') throw new ConfigError('SQLITE_SYNCHRONOUS', `must be FULL or NORMAL, got '${rawSync}'`);

  const rawLevel = ((get('LOG_LEVEL') ?? '').trim() || 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(rawLevel)) {
    throw new ConfigError(label('LOG_LEVEL'), `must be one of ${LOG_LEVELS.join(', ')}, got '${rawLevel}'`);
  }

  let keyEncryptionKey: Buffer | null = null;
  const rawKek = get('KEY_ENCRYPTION_KEY');
  if (rawKek !== undefined && rawKek.trim() !== '') {
    try {
      keyEncryptionKey = parseKeyEncryptionKey(rawKek);
    } catch (e) {
      throw new ConfigError('KEY_ENCRYPTION_KEY', e instanceof Error ? e.message : 'invalid');
    }
  }
  const rawCors = (get('CORS_ORIGINS') ?? '').trim();
  let corsOrigins: '*' | string[] | false = '*';
  if (/^(none|off|false)$/i.test(rawCors)) corsOrigins = false;
  else if (rawCors !== '' && rawCors !== '*') {
    corsOrigins = rawCors.split(',').map((o) => o.trim()).filter(Boolean);
    for (const o of corsOrigins) {
      let ok = false;
      try {
        const u = new URL(o);
        ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === o;
      } catch {
        ok = false;
      }
      if (!ok) throw new ConfigError('CORS_ORIGINS', `must be *, none, or comma-separated origins like https://app.example.com, got '${o}'`);
    }
  }
  const metricsToken = (get('METRICS_TOKEN') ?? '').trim() || null;
  if (metricsToken !== null && metricsToken.length < 16) throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters');
  const rawHosts = (get('ALLOWED_HOSTS') ?? '').trim();
  const allowedHosts = rawHosts
    ? rawHosts.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean)
    : ['localhost', '127.0.0.1', '::1'];
  const baseHost = hostOf(publicBaseUrl).toLowerCase();
  if (!allowedHosts.includes(baseHost)) allowedHosts.push(baseHost);

  // Throws ConfigError naming the X402_* variable.
  const payments = parsePaymentConfig(merged);
  const erc8004 = erc8004Settings(get, keyEncryptionKey);

  const config: Config = {
    host,
    port,
    dataDir,
    databaseUrl,
    databaseSchema,
    databasePoolSize,
    serviceName,
    publicBaseUrl,
    publicBaseUrlSet,
    freeAllowancePerDay,
    trustProxy,
    bodyLimitBytes,
    batchMaxItems,
    batchBodyLimitBytes,
    maxJsonDepth,
    listCap,
    schemaCacheSize,
    schemaCacheBytes,
    workLimits,
    verifyWorkers,
    verifyDeadlineMs,
    verifyWorkerHeapMb,
    heapGrowthPercent,
    verifyFastPath,
    sqliteSynchronous: rawSync,
    logLevel: rawLevel as LogLevel,
    logNoteKeyFile,
    logIntervalMs,
    keyEncryptionKey: null,
    corsOrigins,
    metricsToken: null,
    allowedHosts,
    payments,
    erc8004,
  };
  // Not enumerable: the key never shows up when the configuration is printed or logged.
  Object.defineProperty(config, 'keyEncryptionKey', { value: keyEncryptionKey, enumerable: false });
  Object.defineProperty(config, 'metricsToken', { value: metricsToken, enumerable: false });
  return config;
}

/** ERC8004_*: all checked when the mode is on; ignored (and the mode off) otherwise. */
function erc8004Settings(get: (name: string) => string | undefined, keyEncryptionKey: Buffer | null): Erc8004Config {
  const enabled = boolSetting('ERC8004_ENABLED', get('ERC8004_ENABLED'));
  const off: Erc8004Config = { enabled: false, registry: '0x0000000000000000000000000000000000000000', rpcUrl: '', validatorKey: '0x', startBlock: null, pollMs: 2000, confirmations: 0 };
  if (!enabled) return hideKey(off);
  const registry = (get('ERC8004_VALIDATION_REGISTRY') ?? '').trim().toLowerCase();
  if (!/^0x[0-9a-f]{40}$/.test(registry)) throw new ConfigError('ERC8004_VALIDATION_REGISTRY', `must be the registry's 0x address (40 hex digits), got '${registry}'`);
  const rpcUrl = (get('ERC8004_RPC_URL') ?? '').trim();
  try {
    const u = new URL(rpcUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new ConfigError('ERC8004_RPC_URL', 'must be the http(s) URL of a JSON-RPC endpoint');
  }
  const keyFile = (get('ERC8004_VALIDATOR_KEY_FILE') ?? '').trim();
  if (keyFile === '') throw new ConfigError('ERC8004_VALIDATOR_KEY_FILE', 'must name the file holding the validator key');
  let keyText: string;
  try {
    keyText = readFileSync(path.resolve(keyFile), 'utf8').trim();
  } catch (e) {
    throw new ConfigError('ERC8004_VALIDATOR_KEY_FILE', `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let validatorKey: `0x${string}`;
  try {
    validatorKey = openValidatorKey(keyText, keyEncryptionKey);
  } catch (e) {
    // The message never quotes the file: it holds a secret.
    throw new ConfigError('ERC8004_VALIDATOR_KEY_FILE', (e as Error).message);
  }
  const rawStart = (get('ERC8004_START_BLOCK') ?? '').trim();
  const startBlock = rawStart === '' ? null : intSetting('ERC8004_START_BLOCK', rawStart, 0, 0, Number.MAX_SAFE_INTEGER);
  const pollMs = intSetting('ERC8004_POLL_MS', get('ERC8004_POLL_MS'), 2000, 50, 600_000);
  const confirmations = intSetting('ERC8004_CONFIRMATIONS', get('ERC8004_CONFIRMATIONS'), 0, 0, 1000);
  return hideKey({ enabled, registry: registry as `0x${string}`, rpcUrl, validatorKey, startBlock, pollMs, confirmations });
}

function hideKey(c: Erc8004Config): Erc8004Config {
  Object.defineProperty(c, 'validatorKey', { value: c.validatorKey, enumerable: false });
  return c;
}
