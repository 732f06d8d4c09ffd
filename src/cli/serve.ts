/**
 * @module `aov serve`: run the HTTP + MCP service. Configuration comes from the
 * environment (src/config.ts), flags override it. A bad setting exits 2 with a
 * message naming it. SIGTERM/SIGINT shut down gracefully: new requests get 503,
 * in-flight ones finish, the store closes, exit 0.
 */
import type { CliIO } from './io.js';
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

/** Parse `--name value`, `--name=value` and bare boolean flags. Throws ConfigError for unknown ones. */
export function parseServeFlags(argv: string[]): ConfigFlags & { help?: boolean } {
  const out: ConfigFlags & { help?: boolean } = {};
  const known = new Map(CONFIG_FLAGS.map((f) => [f.flag as string, f]));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-h' || arg === '--help') {
      out.help = true;
      continue;
    }
    if (!arg.startsWith('--')) throw new ConfigError(arg, 'unexpected argument (see aov serve --help)');
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const spec = known.get(name);
    if (!spec) throw new ConfigError(`--${name}`, 'unknown option (see aov serve --help)');
    let value: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1);
    if (value === undefined) {
      const next = argv[i + 1];
      if (spec.boolean) {
        // --trust-proxy also takes a hop count or a list of proxy addresses.
        if (next !== undefined && (/^(true|false|1|0|yes|no|on|off)$/i.test(next) || (spec.flag === 'trust-proxy' && !next.startsWith('-')))) {
          value = next;
          i++;
        } else {
          value = 'true';
        }
      } else {
        if (next === undefined || next.startsWith('--')) throw new ConfigError(`--${name}`, 'needs a value');
        value = next;
        i++;
      }
    }
    out[spec.flag] = value;
  }
  return out;
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
    config = loadConfig(process.env, flags);
  } catch (e) {
    if (e instanceof ConfigError) {
      io.stderr(`aov serve: invalid configuration: ${e.message}\n`);
      return 2;
    }
    throw e;
  }

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
