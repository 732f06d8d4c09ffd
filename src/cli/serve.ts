/**
 * @module `aov serve`: run the HTTP + MCP service. Configuration comes from the
 * environment (src/config.ts), flags override it. A bad setting exits 2 with a
 * message naming it. SIGTERM/SIGINT shut down gracefully: new requests get 503,
 * in-flight ones finish, the store closes, exit 0.
 */
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import type { CliIO } from './io.js';
import { didYouMean } from './args.js';
import { CONFIG_FLAGS, ConfigError, loadConfig } from '../config.js';
import type { ConfigFlags } from '../config.js';

const HELP = `usage: aov serve [options]

Runs the verifier service. Every option can also be set by its environment variable
(the flag wins). See docs/operations.md for all settings.

options:
  --host <addr>             HOST                     listen address (127.0.0.1)
  --port <n>                PORT                     listen port (8080)
  --data-dir <dir>          DATA_DIR                 SQLite database and signing keys (./data)
  --database-url <url>      DATABASE_URL             postgres://… to use PostgreSQL (default: SQLite in the data dir)
  --public-base-url <url>   PUBLIC_BASE_URL          URL clients use (default http://HOST:PORT)
  --free-allowance <n>      FREE_ALLOWANCE_PER_DAY   free verifications per client per UTC day (1000)
  --trust-proxy [v]         TRUST_PROXY              trusted proxies: true (1 hop), a hop count, or addresses/CIDRs (false)
  --log-level <level>       LOG_LEVEL                fatal|error|warn|info|debug|trace|silent (info)
  -h, --help                this help
`;

/**
 * Parse `--name value`, `--name=value` and the boolean `--trust-proxy [bool]` with
 * node:util parseArgs. Throws ConfigError naming the flag (with a did-you-mean
 * for a misspelt one).
 */
export function parseServeFlags(argv: string[]): ConfigFlags & { help?: boolean } {
  // parseArgs has no optional values: give the boolean flag its value explicitly.
  const args: string[] = [];
  const booleans = new Set(CONFIG_FLAGS.filter((f) => f.boolean).map((f) => `--${f.flag}`));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (booleans.has(arg)) {
      const next = argv[i + 1];
      // --trust-proxy also takes a hop count or a list of proxy addresses.
      const explicit = next !== undefined && (/^(true|false|1|0|yes|no|on|off)$/i.test(next) || (arg === '--trust-proxy' && !next.startsWith('-')));
      args.push(`${arg}=${explicit ? next : 'true'}`);
      if (explicit) i++;
    } else {
      args.push(arg);
    }
  }
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const f of CONFIG_FLAGS) options[f.flag] = { type: 'string' };
  const { tokens } = parseArgs({ args, options, allowPositionals: true, strict: false, tokens: true });
  const out: ConfigFlags & { help?: boolean } = {};
  const names = CONFIG_FLAGS.map((f) => f.flag as string);
  for (const t of tokens) {
    if (t.kind === 'positional') throw new ConfigError(t.value, 'unexpected argument (see aov serve --help)');
    if (t.kind !== 'option') continue;
    if (t.name === 'help') {
      out.help = true;
      continue;
    }
    const spec = CONFIG_FLAGS.find((f) => f.flag === t.name);
    if (!spec) {
      const guess = didYouMean(t.name, names);
      throw new ConfigError(t.rawName, `unknown option${guess ? ` — did you mean --${guess}?` : ''} (see aov serve --help)`);
    }
    if (t.value === undefined || (t.inlineValue === false && t.value.startsWith('--'))) throw new ConfigError(`--${t.name}`, 'needs a value');
    out[spec.flag] = t.value;
  }
  return out;
}

/**
 * Caps how far V8 lets the heap grow past what survived the last full collection. A process-wide
 * V8 setting, so only `aov serve`, which owns its process, sets it (never the library's createApp);
 * V8 reads it at each collection, so setting it at start-up is enough.
 */
export function applyHeapGrowth(percent: number, setFlags: (flags: string) => void = setFlagsFromString): void {
  if (percent > 0) setFlags(`--heap-growing-percent=${percent}`);
}

/**
 * Turns off V8's allocation-site pretenuring for this process. Under steady load the server sometimes fell into a
 * slow mode: a full collection every ~0.45 s instead of every ~2.4 s, scavenges 2-4x longer, ~15% fewer requests
 * for the rest of the run. The likely mechanism: V8 judged a hot allocation site's objects long-lived (a request's
 * objects do outlive a scavenge while it waits for the store) and allocated them straight into the old generation.
 * Measured in 20 alternating pairs of 10-s runs (docs/BENCHMARKS.md): the slow mode in 5 runs with pretenuring, in
 * none without, and the same throughput otherwise. Process-wide like the heap growth, so only `aov serve` sets it.
 */
export function applyNoPretenuring(setFlags: (flags: string) => void = setFlagsFromString): void {
  setFlags('--no-allocation-site-pretenuring');
}

/** The first places to go, printed under the listening line; only routes this server has. */
export function whereToGo(base: string, hasGet: (url: string) => boolean): string {
  const lines: Array<[string, string]> = [];
  if (hasGet('/')) lines.push(['start page', `${base}/`]);
  lines.push(['API docs', `${base}/docs`]);
  lines.push(['MCP', `${base}/mcp   (npx add-mcp ${base}/mcp -n verifier)`]);
  lines.push(['agent card', `${base}/.well-known/agent-card.json`]);
  return lines.map(([what, where]) => `  ${what.padEnd(11)} ${where}\n`).join('');
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  let config;
  try {
    const flags = parseServeFlags(argv);
    if (flags.help) {
      io.stdout(HELP);
      return 0;
    }
    delete flags.help;
    config = loadConfig(undefined, flags);
  } catch (e) {
    if (e instanceof ConfigError) {
      io.stderr(`aov serve: invalid configuration: ${e.message}\n`);
      return 2;
    }
    throw e;
  }

  applyHeapGrowth(config.heapGrowthPercent);
  applyNoPretenuring();
  // Loaded here, not at the top, so `aov serve --help` and config errors stay instant.
  const { createApp } = await import('../app.js');
  const handle = await createApp(config);
  let address: string;
  try {
    address = await handle.app.listen({ host: config.host, port: config.port });
  } catch (e) {
    await handle.close().catch(() => undefined);
    io.stderr(`aov serve: cannot listen on ${config.host}:${config.port}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
  io.stdout(`aov: listening on ${address} (public URL ${config.publicBaseUrl}, data ${config.dataDir}${config.databaseUrl ? ', PostgreSQL' : ', SQLite'})\n`);
  // With --port 0 the configured URL cannot know the port the system picked.
  io.stdout(whereToGo(config.port === 0 ? address : config.publicBaseUrl, (url) => handle.app.hasRoute({ method: 'GET', url })));

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        // A second signal: the operator wants out now.
        io.stderr(`aov serve: ${signal} again, exiting immediately\n`);
        process.exit(1);
      }
      stopping = true;
      handle.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
      handle.close().then(
        () => {
          process.off('SIGTERM', stop);
          process.off('SIGINT', stop);
          resolve(0);
        },
        (err: unknown) => {
          io.stderr(`aov serve: shutdown error: ${err instanceof Error ? err.message : String(err)}\n`);
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
