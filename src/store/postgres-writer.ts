/**
 * @module Group commit for the PostgreSQL store's two hot writes. Calls made
 * while a flush is on its way to the server wait in a queue; the next flush sends
 * all of them as one statement — one round trip and one commit however many calls.
 *
 * - Receipts: one multi-row INSERT (a single prepared statement over one array per
 *   column), on a connection whose synchronous_commit is on. Each caller resolves
 *   only when the statement holding its receipt has committed, so "answered ⇒
 *   durable" is unchanged; one WAL flush now serves many receipts. A flush that fails
 *   for a reason of its own rows (e.g. a duplicate verification id) is retried one
 *   save at a time, so only the offending save fails; a flush that fails because the
 *   database is unavailable fails every save in it.
 * - Allowance units: the calls of one flush, grouped by client and day, go to
 *   `allowance_take()` (migration 5), which locks each counter row in a fixed order
 *   and grants each group what is left of its limit, first come first served. The
 *   decision is as exact as one statement per call (the row lock, across instances
 *   too); a hot counter row is updated once per flush instead of once per call.
 */
import { RECEIPT_COLUMNS } from './common.js';
import { storeFaultReason } from './faults.js';

interface Queryable {
  query<R = Record<string, unknown>>(config: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: R[] }>;
}

interface FlushQueueOptions<T> {
  /** Flushes on the wire at once: while they are, new calls gather for the next one. */
  maxInFlight: number;
  /** Weight (e.g. rows) of one flush at most; a longer queue is split. */
  maxWeight: number;
  weight(item: T): number;
  flush(items: T[]): Promise<void>;
}

interface FlushQueue<T> {
  push(item: T): void;
  counts(): { flushes: number; inFlight: number; queued: number };
  /** Resolves once nothing is queued or in flight. */
  drained(): Promise<void>;
}

function createFlushQueue<T>(options: FlushQueueOptions<T>): FlushQueue<T> {
  let queue: T[] = [];
  let inFlight = 0;
  let flushes = 0;
  let scheduled = false;
  const idle: Array<() => void> = [];

  const take = (): T[] => {
    let n = 0;
    let w = 0;
    while (n < queue.length && (n === 0 || w + options.weight(queue[n] as T) <= options.maxWeight)) w += options.weight(queue[n++] as T);
    const items = queue.slice(0, n);
    queue = queue.slice(n);
    return items;
  };
  const pump = (): void => {
    scheduled = false;
    while (inFlight < options.maxInFlight && queue.length > 0) {
      const items = take();
      inFlight++;
      flushes++;
      // flush() settles every item itself and never rejects.
      void options.flush(items).finally(() => {
        inFlight--;
        pump();
        if (inFlight === 0 && queue.length === 0) for (const f of idle.splice(0)) f();
      });
    }
  };
  return {
    push(item) {
      queue.push(item);
      // Calls made in the same turn of the event loop go out together.
      if (!scheduled && inFlight < options.maxInFlight) {
        scheduled = true;
        setImmediate(pump);
      }
    },
    counts: () => ({ flushes, inFlight, queued: queue.length }),
    drained: () => (inFlight === 0 && queue.length === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve))),
  };
}

export interface PostgresReceiptWriterOptions {
  /** Connections to run flushes on; their sessions must have synchronous_commit = on. */
  pool: Queryable;
  /** Quoted schema name. */
  q: string;
  /** Flushes on the wire at once (default 2): one gathers while another commits. */
  maxInFlight?: number;
  /** Rows per statement at most (default 512). */
  maxRows?: number;
}

export interface PostgresReceiptWriter {
  /** Resolves once every row (in RECEIPT_COLUMNS order) is committed, all in one statement; rejects with none of them stored. */
  save(rows: unknown[][]): Promise<void>;
  /** Statements sent and rows committed so far (for tests and measurements). */
  stats(): { flushes: number; rows: number };
  /** Waits for every queued save to be settled; later saves are refused. */
  close(): Promise<void>;
}

interface PendingSave {
  rows: unknown[][];
  resolve(): void;
  reject(err: unknown): void;
}

/** Column types of the receipts table in RECEIPT_COLUMNS order, for unnest() of one array per column. */
const RECEIPT_TYPES = ['text', 'text', 'text', 'text', 'float8', 'text', 'int8', 'text', 'text'] as const;

export function createPostgresReceiptWriter(options: PostgresReceiptWriterOptions): PostgresReceiptWriter {
  const { pool, q } = options;
  // One text whatever the row count: prepared once per connection (named), parsed and planned once.
  const insert = {
    name: 'aov_save_receipts',
    text: `INSERT INTO ${q}.receipts (${RECEIPT_COLUMNS}) SELECT * FROM unnest(${RECEIPT_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`,
  };
  let rowsWritten = 0;
  let closed = false;

  const write = async (rows: unknown[][]): Promise<void> => {
    const columns: unknown[][] = RECEIPT_TYPES.map(() => new Array<unknown>(rows.length));
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r] as unknown[];
      for (let c = 0; c < RECEIPT_TYPES.length; c++) (columns[c] as unknown[])[r] = row[c];
    }
    await pool.query({ ...insert, values: columns });
    rowsWritten += rows.length;
  };

  const queue = createFlushQueue<PendingSave>({
    maxInFlight: Math.max(1, options.maxInFlight ?? 2),
    maxWeight: Math.max(1, options.maxRows ?? 512),
    weight: (p) => p.rows.length,
    async flush(batch) {
      try {
        await write(batch.length === 1 ? (batch[0] as PendingSave).rows : batch.flatMap((p) => p.rows));
        for (const p of batch) p.resolve();
        return;
      } catch (err) {
        // The database is away (or the commit's outcome is unknown): every save in it fails alike.
        if (batch.length === 1 || storeFaultReason(err) !== null) {
          for (const p of batch) p.reject(err);
          return;
        }
      }
      // Something in the rows themselves: one statement per save, so only the offending one fails.
      for (const p of batch) {
        try {
          await write(p.rows);
          p.resolve();
        } catch (err) {
          p.reject(err);
        }
      }
    },
  });

  return {
    save(rows) {
      if (closed) return Promise.reject(new Error('the store is closed'));
      if (rows.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => queue.push({ rows, resolve, reject }));
    },
    stats: () => ({ flushes: queue.counts().flushes, rows: rowsWritten }),
    async close() {
      closed = true;
      await queue.drained();
    },
  };
}

export interface PostgresAllowanceCounterOptions {
  /** Connections for the counter (synchronous_commit may be off: see postgres.ts). */
  pool: Queryable;
  /** Quoted schema name. */
  q: string;
  /** Flushes on the wire at once (default 2). */
  maxInFlight?: number;
  /** Calls per statement at most (default 1024). */
  maxCalls?: number;
}

export interface PostgresAllowanceCounter {
  /** Take one unit of (clientKey, day) if fewer than `limit` (≥ 1) are used: whether it was granted and the count after. */
  consume(clientKey: string, day: string, limit: number): Promise<{ allowed: boolean; used: number }>;
  stats(): { flushes: number; calls: number };
  close(): Promise<void>;
}

interface PendingTake {
  clientKey: string;
  day: string;
  limit: number;
  resolve(v: { allowed: boolean; used: number }): void;
  reject(err: unknown): void;
}

export function createPostgresAllowanceCounter(options: PostgresAllowanceCounterOptions): PostgresAllowanceCounter {
  const { pool, q } = options;
  const take = {
    name: 'aov_allowance_take',
    text: `SELECT idx, granted, used FROM ${q}.allowance_take($1::text[], $2::text[], $3::int[], $4::int[])`,
  };
  let calls = 0;
  let closed = false;

  const queue = createFlushQueue<PendingTake>({
    maxInFlight: Math.max(1, options.maxInFlight ?? 2),
    maxWeight: Math.max(1, options.maxCalls ?? 1024),
    weight: () => 1,
    async flush(batch) {
      // One group per (client, day, limit), callers in arrival order: the first ones get what is left.
      const groups = new Map<string, { clientKey: string; day: string; limit: number; callers: PendingTake[] }>();
      for (const t of batch) {
        const k = JSON.stringify([t.clientKey, t.day, t.limit]);
        const g = groups.get(k);
        if (g) g.callers.push(t);
        else groups.set(k, { clientKey: t.clientKey, day: t.day, limit: t.limit, callers: [t] });
      }
      // Every instance locks counter rows in the same order, so two flushes can never deadlock.
      const list = [...groups.values()].sort((a, b) => (a.clientKey < b.clientKey ? -1 : a.clientKey > b.clientKey ? 1 : a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
      try {
        const r = await pool.query<{ idx: number; granted: number; used: number }>({
          ...take,
          values: [list.map((g) => g.clientKey), list.map((g) => g.day), list.map((g) => g.limit), list.map((g) => g.callers.length)],
        });
        calls += batch.length;
        const byIdx = new Map(r.rows.map((row) => [row.idx, row]));
        list.forEach((g, i) => {
          const row = byIdx.get(i + 1);
          if (!row) {
            for (const c of g.callers) c.reject(new Error('allowance_take returned no row for a group'));
            return;
          }
          const before = row.used - row.granted;
          g.callers.forEach((c, j) => c.resolve(j < row.granted ? { allowed: true, used: before + j + 1 } : { allowed: false, used: row.used }));
        });
      } catch (err) {
        for (const t of batch) t.reject(err);
      }
    },
  });

  return {
    consume(clientKey, day, limit) {
      if (closed) return Promise.reject(new Error('the store is closed'));
      return new Promise((resolve, reject) => queue.push({ clientKey, day, limit, resolve, reject }));
    },
    stats: () => ({ flushes: queue.counts().flushes, calls }),
    async close() {
      closed = true;
      await queue.drained();
    },
  };
}
