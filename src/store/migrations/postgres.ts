/**
 * @module PostgreSQL schema migrations, in order, for a given schema name. A
 * migration is never edited once released; a change is a new entry with the
 * next version. Applied versions are recorded in `<schema>.schema_migrations`.
 */

export interface PgMigration {
  version: number;
  name: string;
  /** SQL for the schema `s` (an already quoted identifier). */
  sql: (s: string) => string;
}

export const POSTGRES_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: 'initial',
    sql: (s) => `
      CREATE TABLE ${s}.receipts (
        verification_id TEXT COLLATE "C" PRIMARY KEY,
        agent_id        TEXT,
        task_id         TEXT NOT NULL,
        result          TEXT NOT NULL CHECK (result IN ('pass', 'fail')),
        overall_ratio   DOUBLE PRECISION NOT NULL,
        verified_at     TEXT NOT NULL,
        verified_ms     BIGINT NOT NULL,
        key_version     TEXT NOT NULL,
        receipt         TEXT NOT NULL
      );
      CREATE INDEX receipts_agent_history ON ${s}.receipts (agent_id, verified_ms DESC, verification_id DESC);

      CREATE TABLE ${s}.allowance (
        client_key TEXT NOT NULL,
        day        TEXT NOT NULL,
        used       INTEGER NOT NULL CHECK (used >= 0),
        PRIMARY KEY (client_key, day)
      );
      CREATE INDEX allowance_day ON ${s}.allowance (day);

      CREATE TABLE ${s}.payments (
        network    TEXT NOT NULL,
        payer      TEXT NOT NULL,
        nonce      TEXT NOT NULL,
        status     TEXT NOT NULL CHECK (status IN ('reserved', 'settled')),
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (network, payer, nonce)
      );

      CREATE TABLE ${s}.payment_events (
        id              BIGSERIAL PRIMARY KEY,
        network         TEXT NOT NULL,
        payer           TEXT NOT NULL,
        nonce           TEXT NOT NULL,
        kind            TEXT NOT NULL,
        route           TEXT NOT NULL,
        amount          TEXT NOT NULL,
        verification_id TEXT,
        at              TEXT NOT NULL,
        detail          TEXT
      );
      CREATE INDEX payment_events_verification ON ${s}.payment_events (verification_id);
      CREATE INDEX payment_events_key ON ${s}.payment_events (network, payer, nonce);
    `,
  },
];
