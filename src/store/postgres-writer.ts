/**
 * @module Group commit of receipts for the PostgreSQL store. Receipts saved while
 * a flush is on its way to the server wait in a queue; the next flush writes all of
 * them as one multi-row INSERT (a single prepared statement over arrays, so one
 * round trip and one commit however many rows), on a connection whose
 * synchronous_commit is on. Each caller resolves only when the statement holding
 * its receipt has committed, so "answered ⇒ durable" is unchanged; what changes is
 * that one WAL flush and one round trip serve many receipts instead of one each.
 * A flush that fails for a reason of its own rows (e.g. a duplicate verification
 * id) is retried one save at a time, so only the offending save fails; a flush that
 * fails because the database is unavailable fails every save in it.
 */
import { RECEIPT_COLUMNS } from './common.js';
import { storeFaultReason } from './faults.js';

interface Queryable {
  query(config: { name?: string; text: string; values?: unknown[] }): Promise<unknown>;
}

export interface PostgresReceiptWriterOptions {
  /** Connections to run flushes on; their sessions must have synchronous_commit = on. */
  pool: Queryable;
  /** Quoted schema name. */
  q: string;
  /** Flushes allowed on the wire at once (default 2): one collects while another commits. */
  maxInFlight?: number;
  /** Rows per statement at most (default 512); a longer queue is split over several flushes. */
  maxRows?: number;
}

export interface PostgresReceiptWriter {
  /** Resolves once every row (in RECEIPT_COLUMNS order) is committed, all in one statement; rejects with none of them stored. */
  save(rows: unknown[][]): Promise<void>;
  /** Statements committed, rows written, statements on the wire, saves waiting (for tests and measurements). */
  stats(): { flushes: number; rows: number; inFlight: number; queued: number };
  /** Waits for every queued save to be settled; later saves are refused. */
  close(): Promise<void>;
}

interface Pending {
  rows: unknown[][];
  resolve(): void;
  reject(err: unknown): void;
}

/** Column types of the receipts table in RECEIPT_COLUMNS order, for unnest() of one array per column. */
const COLUMN_TYPES = ['text', 'text', 'text', 'text', 'float8', 'text', 'int8', 'text', 'text'] as const;

export function createPostgresReceiptWriter(options: PostgresReceiptWriterOptions): PostgresReceiptWriter {
  const { pool, q } = options;
  const maxInFlight = Math.max(1, options.maxInFlight ?? 2);
  const maxRows = Math.max(1, options.maxRows ?? 512);
  const arrays = COLUMN_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ');
  // One text whatever the row count: prepared once per connection (named), parsed and planned once.
  const insert = {
    name: 'aov_save_receipts',
    text: `INSERT INTO ${q}.receipts (${RECEIPT_COLUMNS}) SELECT * FROM unnest(${arrays})`,
  };
  let queue: Pending[] = [];
  let inFlight = 0;
  let flushes = 0;
  let rowsWritten = 0;
  let closed = false;
  let idle: (() => void) | null = null;

  const write = (rows: unknown[][]): Promise<unknown> => {
    const columns: unknown[][] = COLUMN_TYPES.map(() => new Array<unknown>(rows.length));
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r] as unknown[];
      for (let c = 0; c < COLUMN_TYPES.length; c++) (columns[c] as unknown[])[r] = row[c];
    }
    return pool.query({ ...insert, values: columns });
  };

  const take = (): Pending[] => {
    // Whole saves only: a save's rows are committed together or not at all.
    let n = 0;
    let count = 0;
    while (n < queue.length && (count === 0 || count + (queue[n] as Pending).rows.length <= maxRows)) count += (queue[n++] as Pending).rows.length;
    const batch = queue.slice(0, n);
    queue = queue.slice(n);
    return batch;
  };

  const pump = (): void => {
    while (inFlight < maxInFlight && queue.length > 0) {
      const batch = take();
      inFlight++;
      void flush(batch).finally(() => {
        inFlight--;
        pump();
        if (inFlight === 0 && queue.length === 0) idle?.();
      });
    }
  };

  async function flush(batch: Pending[]): Promise<void> {
    const rows = batch.length === 1 ? (batch[0] as Pending).rows : batch.flatMap((p) => p.rows);
    try {
      await write(rows);
      flushes++;
      rowsWritten += rows.length;
      for (const p of batch) p.resolve();
      return;
    } catch (err) {
      // The database is away (or the outcome of the commit is unknown): every save in it fails alike.
      if (batch.length === 1 || storeFaultReason(err) !== null) {
        for (const p of batch) p.reject(err);
        return;
      }
    }
    // Something in the rows themselves: one statement per save, so only the offending one fails.
    for (const p of batch) {
      try {
        await write(p.rows);
        flushes++;
        rowsWritten += p.rows.length;
        p.resolve();
      } catch (err) {
        p.reject(err);
      }
    }
  }

  return {
    save(rows) {
      if (closed) return Promise.reject(new Error('the store is closed'));
      if (rows.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        queue.push({ rows, resolve, reject });
        // Saves arriving in the same turn of the event loop go out together.
        if (queue.length === 1 && inFlight < maxInFlight) setImmediate(pump);
      });
    },
    stats: () => ({ flushes, rows: rowsWritten, inFlight, queued: queue.length }),
    async close() {
      closed = true;
      if (inFlight === 0 && queue.length === 0) return;
      await new Promise<void>((resolve) => {
        idle = resolve;
        pump();
      });
    },
  };
}
