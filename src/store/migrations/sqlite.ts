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
  {
    version: 2,
    name: 'transparency log',
    // The queue is filled by a trigger, so every write path that stores a receipt also queues it, atomically.
    // Entries and nodes refuse UPDATE and DELETE: the tree is append-only (a guard against mistakes; an
    // operator who edits the file directly is what the published checkpoints catch).
    sql: `
      CREATE TABLE log_queue (
        seq             INTEGER PRIMARY KEY AUTOINCREMENT,
        verification_id TEXT NOT NULL
      );
      CREATE TRIGGER receipts_log_enqueue AFTER INSERT ON receipts
      BEGIN
        INSERT INTO log_queue (verification_id) VALUES (NEW.verification_id);
      END;

      CREATE TABLE log_entries (
        idx             INTEGER PRIMARY KEY,
        verification_id TEXT NOT NULL UNIQUE,
        entry           TEXT NOT NULL
      );
      CREATE TABLE log_nodes (
        level INTEGER NOT NULL,
        idx   INTEGER NOT NULL,
        hash  BLOB NOT NULL,
        PRIMARY KEY (level, idx)
      ) WITHOUT ROWID;
      CREATE TABLE log_head (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        size       INTEGER NOT NULL,
        root       BLOB NOT NULL,
        note       TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      INSERT INTO log_head (id, size, root, note, updated_at)
        VALUES (1, 0, x'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', '', '');

      CREATE TRIGGER log_entries_no_update BEFORE UPDATE ON log_entries BEGIN SELECT RAISE(ABORT, 'the transparency log is append-only'); END;
      CREATE TRIGGER log_entries_no_delete BEFORE DELETE ON log_entries BEGIN SELECT RAISE(ABORT, 'the transparency log is append-only'); END;
      CREATE TRIGGER log_nodes_no_update BEFORE UPDATE ON log_nodes BEGIN SELECT RAISE(ABORT, 'the transparency log is append-only'); END;
      CREATE TRIGGER log_nodes_no_delete BEFORE DELETE ON log_nodes BEGIN SELECT RAISE(ABORT, 'the transparency log is append-only'); END;

      -- Receipts stored before the log existed join it first, in the order they were stored.
      INSERT INTO log_queue (verification_id) SELECT verification_id FROM receipts ORDER BY rowid;
    `,
  },
  {
    version: 3,
    name: 'pending settlements',
    // Paid receipts wait here, invisible, until their settlement is known (published or voided).
    sql: `
      CREATE TABLE pending_settlements (
        network          TEXT NOT NULL,
        payer            TEXT NOT NULL,
        nonce            TEXT NOT NULL,
        route            TEXT NOT NULL,
        verification_id  TEXT UNIQUE,
        record           TEXT,
        payment          TEXT NOT NULL,
        transaction_hash TEXT,
        created_at       TEXT NOT NULL,
        state            TEXT NOT NULL CHECK (state IN ('pending', 'settled')),
        PRIMARY KEY (network, payer, nonce)
      ) WITHOUT ROWID;
      CREATE INDEX pending_settlements_state ON pending_settlements (state, created_at);
    `,
  },
  {
    version: 4,
    name: 'signing keys',
    // Every key that ever signed, so the agent card never loses one; private_key only when keys are kept in the database (encrypted).
    sql: `
      CREATE TABLE signing_keys (
        key_version TEXT PRIMARY KEY,
        public_key  TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('active', 'retired')),
        not_before  TEXT NOT NULL,
        not_after   TEXT,
        created_at  TEXT NOT NULL,
        private_key TEXT
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 5,
    name: 'leaner receipt writes',
    // Pages written per stored receipt (one commit each, at a moderate rate): 8.3 -> 6.7, measured by reading
    // the WAL back (docs/BENCHMARKS.md). An agent's newest receipt now lands at the end of its range of the
    // history index instead of the front, where every insert split the same page; SQLite reads the index
    // backwards for newest-first pages just as well. The log queue drops AUTOINCREMENT, whose counter row
    // in sqlite_sequence was one more page per commit: a new row still takes the highest seq plus one, so
    // the queue stays in storage order; a seq can come back only once the queue is empty, and a sequencer
    // that read a row another one has since taken never deletes by that seq (the head's size check fails
    // first, in the same transaction).
    sql: `
      DROP INDEX receipts_agent_history;
      CREATE INDEX receipts_agent_history ON receipts (agent_id, verified_ms, verification_id);

      DROP TRIGGER receipts_log_enqueue;
      CREATE TABLE log_queue_next (
        seq             INTEGER PRIMARY KEY,
        verification_id TEXT NOT NULL
      );
      INSERT INTO log_queue_next (seq, verification_id) SELECT seq, verification_id FROM log_queue ORDER BY seq;
      DROP TABLE log_queue;
      ALTER TABLE log_queue_next RENAME TO log_queue;
      CREATE TRIGGER receipts_log_enqueue AFTER INSERT ON receipts
      BEGIN
        INSERT INTO log_queue (verification_id) VALUES (NEW.verification_id);
      END;
    `,
  },
  {
    version: 6,
    name: 'payments bound to their request',
    // A payment key is bound to the request it was reserved for (request_hash; a batch or a score has a hash of its
    // own, src/payments/admission.ts), so the same payment sent with another request is refused, and once settled it
    // names the receipts it bought and its transaction, so a retry with the same request gets them back. Rows from
    // before have no binding (NULL).
    sql: `
      ALTER TABLE payments ADD COLUMN request_hash TEXT;
      ALTER TABLE payments ADD COLUMN verification_ids TEXT;
      ALTER TABLE payments ADD COLUMN transaction_hash TEXT;
    `,
  },
  {
    version: 7,
    name: 'log note keys',
    // The transparency log's note key, one per log origin (see the PostgreSQL migration of the same version): kept in the
    // database, encrypted, with KEY_ENCRYPTION_KEY; otherwise its public half, beside LOG_NOTE_KEY_FILE.
    sql: `
      CREATE TABLE log_note_keys (
        name        TEXT PRIMARY KEY,
        public_key  TEXT NOT NULL,
        private_key TEXT,
        source      TEXT NOT NULL CHECK (source IN ('generated', 'file')),
        created_at  TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 8,
    name: 'erc8004 validations',
    // The ERC-8004 validator's queue (src/erc8004/queue-store.ts): one row per ValidationRequest addressed to it, the
    // answer decided and the transaction carrying it; a nonce belongs to one row only; one nonce counter per sender
    // address; how far each watched registry was scanned. Empty unless ERC8004_ENABLED is set.
    sql: `
      CREATE TABLE erc8004_validations (
        registry        TEXT NOT NULL,
        request_hash    TEXT NOT NULL,
        agent_id        TEXT NOT NULL,
        request_block   INTEGER NOT NULL,
        request_tx      TEXT NOT NULL,
        state           TEXT NOT NULL CHECK (state IN ('new', 'waiting', 'queued', 'nonced', 'signed', 'confirmed', 'skipped', 'failed')),
        reason          TEXT,
        verification_id TEXT,
        response        INTEGER,
        response_uri    TEXT,
        response_hash   TEXT,
        tag             TEXT,
        sender          TEXT,
        nonce           INTEGER,
        raw_tx          TEXT,
        tx_hash         TEXT,
        answer_block    INTEGER,
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_ms INTEGER NOT NULL,
        lease_owner     TEXT,
        lease_until_ms  INTEGER NOT NULL DEFAULT 0,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL,
        PRIMARY KEY (registry, request_hash)
      ) WITHOUT ROWID;
      CREATE INDEX erc8004_validations_work ON erc8004_validations (state, next_attempt_ms);
      CREATE INDEX erc8004_validations_receipt ON erc8004_validations (verification_id);
      CREATE UNIQUE INDEX erc8004_validations_nonce ON erc8004_validations (sender, nonce);
      CREATE TABLE erc8004_senders (
        address    TEXT PRIMARY KEY,
        next_nonce INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE erc8004_cursors (
        key        TEXT PRIMARY KEY,
        next_block INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
];
