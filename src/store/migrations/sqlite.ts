/**
 * @module SQLite schema migrations, in order. A migration is never edited once
 * released; a change is a new entry with the next version. Applied versions are
 * recorded in `schema_migrations`.
 */

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    sql: `
      CREATE TABLE receipts (
        verification_id TEXT PRIMARY KEY,
        agent_id        TEXT,
        task_id         TEXT NOT NULL,
        result          TEXT NOT NULL CHECK (result IN ('pass', 'fail')),
        overall_ratio   REAL NOT NULL,
        verified_at     TEXT NOT NULL,
        verified_ms     INTEGER NOT NULL,
        key_version     TEXT NOT NULL,
        receipt         TEXT NOT NULL
      );
      CREATE INDEX receipts_agent_history ON receipts (agent_id, verified_ms DESC, verification_id DESC);

      CREATE TABLE allowance (
        client_key TEXT NOT NULL,
        day        TEXT NOT NULL,
        used       INTEGER NOT NULL CHECK (used >= 0),
        PRIMARY KEY (client_key, day)
      ) WITHOUT ROWID;
      CREATE INDEX allowance_day ON allowance (day);

      CREATE TABLE payments (
        network    TEXT NOT NULL,
        payer      TEXT NOT NULL,
        nonce      TEXT NOT NULL,
        status     TEXT NOT NULL CHECK (status IN ('reserved', 'settled')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (network, payer, nonce)
      ) WITHOUT ROWID;

      CREATE TABLE payment_events (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
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
      CREATE INDEX payment_events_verification ON payment_events (verification_id);
      CREATE INDEX payment_events_key ON payment_events (network, payer, nonce);
    `,
  },
];
