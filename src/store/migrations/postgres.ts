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
  {
    version: 2,
    name: 'transparency log',
    // The queue is filled by a trigger, so every write path that stores a receipt also queues it in the same
    // transaction. Sequence values are not commit order across sessions, which is why the sequencer takes
    // whatever is in the queue (and deletes it) instead of reading "after the last seq it saw".
    sql: (s) => `
      CREATE TABLE ${s}.log_queue (
        seq             BIGSERIAL PRIMARY KEY,
        verification_id TEXT COLLATE "C" NOT NULL
      );
      CREATE FUNCTION ${s}.log_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ${s}.log_queue (verification_id) VALUES (NEW.verification_id);
        RETURN NULL;
      END $$;
      CREATE TRIGGER receipts_log_enqueue AFTER INSERT ON ${s}.receipts FOR EACH ROW EXECUTE FUNCTION ${s}.log_enqueue();

      CREATE TABLE ${s}.log_entries (
        idx             BIGINT PRIMARY KEY,
        verification_id TEXT COLLATE "C" NOT NULL UNIQUE,
        entry           TEXT NOT NULL
      );
      CREATE TABLE ${s}.log_nodes (
        level SMALLINT NOT NULL,
        idx   BIGINT NOT NULL,
        hash  BYTEA NOT NULL,
        PRIMARY KEY (level, idx)
      );
      CREATE TABLE ${s}.log_head (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        size       BIGINT NOT NULL,
        root       BYTEA NOT NULL,
        note       TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
      );
      INSERT INTO ${s}.log_head (id, size, root, note) VALUES (1, 0, decode('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex'), '');

      CREATE FUNCTION ${s}.log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the transparency log is append-only';
      END $$;
      CREATE TRIGGER log_entries_append_only BEFORE UPDATE OR DELETE ON ${s}.log_entries FOR EACH ROW EXECUTE FUNCTION ${s}.log_append_only();
      CREATE TRIGGER log_nodes_append_only BEFORE UPDATE OR DELETE ON ${s}.log_nodes FOR EACH ROW EXECUTE FUNCTION ${s}.log_append_only();

      -- Receipts stored before the log existed join it first, oldest first.
      INSERT INTO ${s}.log_queue (verification_id) SELECT verification_id FROM ${s}.receipts ORDER BY verified_ms, verification_id;
    `,
  },
  {
    version: 3,
    name: 'pending settlements',
    // Paid receipts wait here, invisible, until their settlement is known (published or voided).
    sql: (s) => `
      CREATE TABLE ${s}.pending_settlements (
        network          TEXT NOT NULL,
        payer            TEXT NOT NULL,
        nonce            TEXT NOT NULL,
        route            TEXT NOT NULL,
        verification_id  TEXT COLLATE "C" UNIQUE,
        record           TEXT,
        payment          TEXT NOT NULL,
        transaction_hash TEXT,
        created_at       TEXT NOT NULL,
        state            TEXT NOT NULL CHECK (state IN ('pending', 'settled')),
        PRIMARY KEY (network, payer, nonce)
      );
      CREATE INDEX pending_settlements_state ON ${s}.pending_settlements (state, created_at);
    `,
  },
  {
    version: 4,
    name: 'signing keys',
    // Every key that ever signed, so the agent card never loses one; private_key only when keys are kept in the database (encrypted).
    sql: (s) => `
      CREATE TABLE ${s}.signing_keys (
        key_version TEXT COLLATE "C" PRIMARY KEY,
        public_key  TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('active', 'retired')),
        not_before  TEXT NOT NULL,
        not_after   TEXT,
        created_at  TEXT NOT NULL,
        private_key TEXT
      );
    `,
  },
  {
    version: 5,
    name: 'group commit',
    // Receipts are group-committed as one multi-row INSERT (src/store/postgres-writer.ts): one trigger call per
    // statement queues all its rows (in insertion order) instead of one plpgsql call and one INSERT per row. Still a
    // trigger, so every write path that stores a receipt queues it in the same transaction.
    // allowance_take() decides a whole flush of allowance calls in one statement: for each (client, day) group, in
    // the order given (callers sort them, so concurrent flushes lock rows in one order and never deadlock), lock the
    // counter row (creating it when missing) and grant min(units, limit - used) on its latest version.
    sql: (s) => `
      DROP TRIGGER receipts_log_enqueue ON ${s}.receipts;
      DROP FUNCTION ${s}.log_enqueue();
      CREATE FUNCTION ${s}.log_enqueue_rows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ${s}.log_queue (verification_id) SELECT verification_id FROM new_receipts;
        RETURN NULL;
      END $$;
      CREATE TRIGGER receipts_log_enqueue AFTER INSERT ON ${s}.receipts REFERENCING NEW TABLE AS new_receipts
        FOR EACH STATEMENT EXECUTE FUNCTION ${s}.log_enqueue_rows();

      CREATE FUNCTION ${s}.allowance_take(keys TEXT[], days TEXT[], limits INTEGER[], units INTEGER[])
      RETURNS TABLE (idx INTEGER, granted INTEGER, used INTEGER) LANGUAGE plpgsql AS $$
      DECLARE
        cur INTEGER;
      BEGIN
        FOR i IN 1 .. coalesce(array_length(keys, 1), 0) LOOP
          idx := i;
          SELECT a.used INTO cur FROM ${s}.allowance a WHERE a.client_key = keys[i] AND a.day = days[i] FOR UPDATE;
          IF NOT FOUND THEN
            granted := greatest(0, least(units[i], limits[i]));
            INSERT INTO ${s}.allowance AS a (client_key, day, used) VALUES (keys[i], days[i], granted) ON CONFLICT DO NOTHING;
            IF FOUND THEN
              used := granted;
              RETURN NEXT;
              CONTINUE;
            END IF;
            -- Created by another session meanwhile: decide on its row like on any other.
            SELECT a.used INTO cur FROM ${s}.allowance a WHERE a.client_key = keys[i] AND a.day = days[i] FOR UPDATE;
          END IF;
          granted := greatest(0, least(units[i], limits[i] - cur));
          IF granted > 0 THEN
            UPDATE ${s}.allowance a SET used = a.used + granted WHERE a.client_key = keys[i] AND a.day = days[i];
          END IF;
          used := cur + granted;
          RETURN NEXT;
        END LOOP;
      END $$;
    `,
  },
  {
    version: 6,
    name: 'payments bound to their request',
    // See the SQLite migration of the same version: the request a payment key was reserved for, and once settled the
    // receipts it bought (a JSON array of verification ids) and its transaction. Rows from before have no binding (NULL).
    sql: (s) => `
      ALTER TABLE ${s}.payments ADD COLUMN request_hash TEXT;
      ALTER TABLE ${s}.payments ADD COLUMN verification_ids TEXT;
      ALTER TABLE ${s}.payments ADD COLUMN transaction_hash TEXT;
    `,
  },
  {
    version: 7,
    name: 'log note keys',
    // The transparency log's note key, one per log origin (the public host + /log, which is also the key's name), so every
    // instance on the database signs checkpoints with the same key. private_key is encrypted like the signing keys' (only
    // with KEY_ENCRYPTION_KEY); without it the key stays in LOG_NOTE_KEY_FILE and the row holds its public half, so an
    // instance with another file is noticed. A row is never replaced: the first instance to record one wins.
    sql: (s) => `
      CREATE TABLE ${s}.log_note_keys (
        name        TEXT COLLATE "C" PRIMARY KEY,
        public_key  TEXT NOT NULL,
        private_key TEXT,
        source      TEXT NOT NULL CHECK (source IN ('generated', 'file')),
        created_at  TEXT NOT NULL
      );
    `,
  },
  {
    version: 8,
    name: 'erc8004 validations',
    // See the SQLite migration of the same version. Instances share the queue: a row is claimed with FOR UPDATE SKIP
    // LOCKED and a lease, a sender's nonce counter is one row locked while a nonce is taken.
    sql: (s) => `
      CREATE TABLE ${s}.erc8004_validations (
        registry        TEXT COLLATE "C" NOT NULL,
        request_hash    TEXT COLLATE "C" NOT NULL,
        agent_id        TEXT NOT NULL,
        request_block   BIGINT NOT NULL,
        request_tx      TEXT NOT NULL,
        state           TEXT NOT NULL CHECK (state IN ('new', 'waiting', 'queued', 'nonced', 'signed', 'confirmed', 'skipped', 'failed')),
        reason          TEXT,
        verification_id TEXT COLLATE "C",
        response        INTEGER,
        response_uri    TEXT,
        response_hash   TEXT,
        tag             TEXT,
        sender          TEXT COLLATE "C",
        nonce           BIGINT,
        raw_tx          TEXT,
        tx_hash         TEXT,
        answer_block    BIGINT,
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_ms BIGINT NOT NULL,
        lease_owner     TEXT,
        lease_until_ms  BIGINT NOT NULL DEFAULT 0,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL,
        PRIMARY KEY (registry, request_hash)
      );
      CREATE INDEX erc8004_validations_work ON ${s}.erc8004_validations (state, next_attempt_ms);
      CREATE INDEX erc8004_validations_receipt ON ${s}.erc8004_validations (verification_id);
      CREATE UNIQUE INDEX erc8004_validations_nonce ON ${s}.erc8004_validations (sender, nonce);
      CREATE TABLE ${s}.erc8004_senders (
        address    TEXT COLLATE "C" PRIMARY KEY,
        next_nonce BIGINT NOT NULL
      );
      CREATE TABLE ${s}.erc8004_cursors (
        key        TEXT COLLATE "C" PRIMARY KEY,
        next_block BIGINT NOT NULL
      );
    `,
  },
];
