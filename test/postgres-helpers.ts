/**
 * @module The PostgreSQL every PostgreSQL test uses (127.0.0.1:5432 db `test`,
 * trust auth), a throwaway schema per test file, and the reachability probe that
 * decides whether those tests run. The probe is a plain `pg` connection running
 * `SELECT 1`, never the production store: a bug in the store or its migrations
 * must fail the tests, not make them skip. Under REQUIRE_POSTGRES=1 (CI) an
 * unreachable server fails the test file instead of skipping it.
 */
import { createRequire } from 'node:module';
import { skipUnlessAvailable } from './requirements.js';

/** The part of the `pg` client API used here (the package ships no types). */
interface PgClient {
  connect(): Promise<void>;
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  end(): Promise<void>;
}
const pg = createRequire(import.meta.url)('pg') as {
  Client: new (config: { connectionString: string; connectionTimeoutMillis?: number }) => PgClient;
};

export const POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/test';

export interface PostgresTestTarget {
  url: string;
  /** Unique to this process and moment, so parallel test files never share tables. */
  schema: string;
  /** False when PostgreSQL cannot be reached; the caller skips its tests. */
  available: boolean;
  /** Drop `schema` (and everything in it). */
  dropSchema(): Promise<void>;
  /** Run one statement on a connection of its own (to `url`, by default the test database); its rows. */
  sql<R>(text: string, values?: unknown[], url?: string): Promise<R[]>;
}

/** Probe PostgreSQL once for a test file; skips visibly, or fails under REQUIRE_POSTGRES=1, when it is not reachable. */
export async function postgresTestTarget(label: string, schemaPrefix: string): Promise<PostgresTestTarget> {
  const schema = `${schemaPrefix}_${process.pid}_${Date.now().toString(36)}`;
  const probe = await reachable();
  skipUnlessAvailable(probe === true, 'REQUIRE_POSTGRES', `${label}: PostgreSQL not reachable at ${POSTGRES_URL} (${String(probe)})`);
  return {
    url: POSTGRES_URL,
    schema,
    available: probe === true,
    async dropSchema() {
      await withClient(async (c) => {
        await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      });
    },
    async sql<R>(text: string, values?: unknown[], url?: string) {
      return (await withClient((c) => c.query<R>(text, values), url)).rows;
    },
  };
}

async function withClient<T>(fn: (c: PgClient) => Promise<T>, url = POSTGRES_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** True, or the connection error's message (shown in the skip or failure). */
async function reachable(): Promise<true | string> {
  try {
    const r = await withClient((c) => c.query<{ one: number }>('SELECT 1 AS one'));
    return r.rows[0]?.one === 1 ? true : 'SELECT 1 returned no row';
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}
