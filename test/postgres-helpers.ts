/**
 * @module The PostgreSQL every PostgreSQL test uses (127.0.0.1:5432 db `test`,
 * trust auth), a throwaway schema per test file, and the reachability probe that
 * decides whether those tests run or are skipped with a message.
 */
import { createPostgresStore } from '../src/store/postgres.js';

export const POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/test';

export interface PostgresTestTarget {
  url: string;
  /** Unique to this process and moment, so parallel test files never share tables. */
  schema: string;
  /** False when PostgreSQL cannot be reached; the caller skips its tests. */
  available: boolean;
  /** Drop `schema` (and everything in it). */
  dropSchema(): Promise<void>;
}

/** Probe PostgreSQL once for a test file; warns under `label` when it is not reachable. */
export async function postgresTestTarget(label: string, schemaPrefix: string): Promise<PostgresTestTarget> {
  const schema = `${schemaPrefix}_${process.pid}_${Date.now().toString(36)}`;
  const available = await reachable(`${schema}_probe`);
  if (!available) console.warn(`${label} tests skipped: PostgreSQL not reachable at ${POSTGRES_URL}`);
  return {
    url: POSTGRES_URL,
    schema,
    available,
    async dropSchema() {
      const s = await createPostgresStore({ connectionString: POSTGRES_URL, schema, poolSize: 1 });
      try {
        await s.dropSchema();
      } finally {
        await s.close();
      }
    },
  };
}

async function reachable(probeSchema: string): Promise<boolean> {
  try {
    const probe = await createPostgresStore({ connectionString: POSTGRES_URL, schema: probeSchema, poolSize: 1 });
    await probe.dropSchema();
    await probe.close();
    return true;
  } catch {
    return false;
  }
}
