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
 * - A receipt with its allowance unit (saveWithUnit): in the receipts' statement, whose
 *   first part takes the units of its flush by `allowance_take()` and whose INSERT keeps
 *   only the receipts whose unit was granted: one round trip and one commit for both.
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
  /**
   * Takes one unit of (clientKey, day) if fewer than `limit` (≥ 1) are used and stores the row with it, in one
   * statement: whether it was granted (the row is stored only then) and the count after. Rejects with neither.
   */
  saveWithUnit(row: unknown[], unit: { clientKey: string; day: string; limit: number }): Promise<{ allowed: boolean; used: number }>;
  /** Statements sent and rows committed so far (for tests and measurements). */
  stats(): { flushes: number; rows: number };
  /** Waits for every queued save to be settled; later saves are refused. */
  close(): Promise<void>;
}

interface PendingSave {
  rows: unknown[][];
  /** A unit to take with the (single) row: stored only if granted. */
  unit?: { clientKey: string; day: string; limit: number };
  resolve(outcome?: { allowed: boolean; used: number }): void;
  reject(err: unknown): void;
}

/** Callers of one (client, day, limit) in a flush, in arrival order: the first ones get what is left. */
interface UnitGroup<T> {
  clientKey: string;
  day: string;
  limit: number;
  callers: T[];
}

/**
 * Groups unit takers by (client, day, limit) in the order every instance locks counter rows (client, then day),
 * so two flushes, of the counter or the receipts, never deadlock.
 */
function unitGroups<T>(items: readonly T[], unitOf: (t: T) => { clientKey: string; day: string; limit: number }): UnitGroup<T>[] {
  const groups = new Map<string, UnitGroup<T>>();
  for (const t of items) {
    const u = unitOf(t);
    const k = JSON.stringify([u.clientKey, u.day, u.limit]);
    const g = groups.get(k);
    if (g) g.callers.push(t);
    else groups.set(k, { clientKey: u.clientKey, day: u.day, limit: u.limit, callers: [t] });
  }
  return [...groups.values()].sort((a, b) => (a.clientKey < b.clientKey ? -1 : a.clientKey > b.clientKey ? 1 : a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
}

/** Settles each group's callers from allowance_take()'s rows (idx is the group's 1-based position). */
function grantGroups<T>(
  list: readonly UnitGroup<T>[],
  rows: readonly { idx: number; granted: number; used: number }[],
  settle: (caller: T, outcome: { allowed: boolean; used: number } | Error) => void,
): void {
  const byIdx = new Map(rows.map((row) => [row.idx, row]));
  list.forEach((g, i) => {
    const row = byIdx.get(i + 1);
    if (!row) {
      for (const c of g.callers) settle(c, new Error('allowance_take returned no row for a group'));
      return;
    }
    const before = row.used - row.granted;
    g.callers.forEach((c, j) => settle(c, j < row.granted ? { allowed: true, used: before + j + 1 } : { allowed: false, used: row.used }));
  });
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
  // With units: allowance_take() for the flush's groups, then the rows of group 0 (no unit) and those whose rank in
  // their group is within what the group was granted. A CTE with a volatile function and a data-modifying CTE run
  // exactly once each, in one statement and transaction: the units and the receipts commit together or not at all.
  const n = RECEIPT_TYPES.length;
  const insertWithUnits = {
    name: 'aov_save_receipts_with_units',
    text:
      `WITH t AS (SELECT idx, granted, used FROM ${q}.allowance_take($${n + 1}::text[], $${n + 2}::text[], $${n + 3}::int[], $${n + 4}::int[])), ` +
      `ins AS (INSERT INTO ${q}.receipts (${RECEIPT_COLUMNS}) SELECT ${RECEIPT_COLUMNS} FROM unnest(${RECEIPT_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}, $${n + 5}::int[], $${n + 6}::int[]) ` +
      `AS r(${RECEIPT_COLUMNS}, grp, rnk) LEFT JOIN t ON t.idx = r.grp WHERE r.grp = 0 OR r.rnk <= t.granted RETURNING 1) ` +
      `SELECT idx, granted, used, (SELECT count(*) FROM ins)::int AS stored FROM t`,
  };
  let rowsWritten = 0;
  let closed = false;

  const columnsOf = (rows: unknown[][]): unknown[][] => {
    const columns: unknown[][] = RECEIPT_TYPES.map(() => new Array<unknown>(rows.length));
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r] as unknown[];
      for (let c = 0; c < RECEIPT_TYPES.length; c++) (columns[c] as unknown[])[r] = row[c];
    }
    return columns;
  };

  /** One statement for these saves; settles none of them (the caller does), throws with none stored. */
  const write = async (batch: readonly PendingSave[]): Promise<Array<{ allowed: boolean; used: number } | undefined>> => {
    const withUnit = batch.filter((p) => p.unit !== undefined);
    if (withUnit.length === 0) {
      const rows = batch.length === 1 ? (batch[0] as PendingSave).rows : batch.flatMap((p) => p.rows);
      await pool.query({ ...insert, values: columnsOf(rows) });
      rowsWritten += rows.length;
      return batch.map(() => undefined);
    }
    const list = unitGroups(withUnit, (p) => p.unit as NonNullable<PendingSave['unit']>);
    const place = new Map<PendingSave, { grp: number; rnk: number }>();
    list.forEach((g, i) => g.callers.forEach((p, j) => place.set(p, { grp: i + 1, rnk: j + 1 })));
    const rows: unknown[][] = [];
    const grp: number[] = [];
    const rnk: number[] = [];
    for (const p of batch) {
      const at = place.get(p) ?? { grp: 0, rnk: 0 };
      for (const row of p.rows) {
        rows.push(row);
        grp.push(at.grp);
        rnk.push(at.rnk);
      }
    }
    const r = await pool.query<{ idx: number; granted: number; used: number; stored: number }>({
      ...insertWithUnits,
      values: [...columnsOf(rows), list.map((g) => g.clientKey), list.map((g) => g.day), list.map((g) => g.limit), list.map((g) => g.callers.length), grp, rnk],
    });
    rowsWritten += r.rows[0]?.stored ?? 0;
    const outcomes = new Map<PendingSave, { allowed: boolean; used: number } | Error>();
    grantGroups(list, r.rows, (p, outcome) => outcomes.set(p, outcome));
    return batch.map((p) => {
      if (p.unit === undefined) return undefined;
      const o = outcomes.get(p);
      // Not possible (allowance_take answers every group); the whole statement is then refused rather than half-believed.
      if (o === undefined || o instanceof Error) throw o ?? new Error('no outcome for a receipt with its unit');
      return o;
    });
  };

  const queue = createFlushQueue<PendingSave>({
    maxInFlight: Math.max(1, options.maxInFlight ?? 2),
    maxWeight: Math.max(1, options.maxRows ?? 512),
    weight: (p) => p.rows.length,
    async flush(batch) {
      try {
        const outcomes = await write(batch);
        batch.forEach((p, i) => p.resolve(outcomes[i]));
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
          p.resolve((await write([p]))[0]);
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
      return new Promise<void>((resolve, reject) => queue.push({ rows, resolve: () => resolve(), reject }));
    },
    saveWithUnit(row, unit) {
      if (closed) return Promise.reject(new Error('the store is closed'));
      return new Promise((resolve, reject) =>
        queue.push({ rows: [row], unit, resolve: (o) => (o ? resolve(o) : reject(new Error('no outcome for a receipt with its unit'))), reject }),
      );
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
      const list = unitGroups(batch, (t) => t);
      try {
        const r = await pool.query<{ idx: number; granted: number; used: number }>({
          ...take,
          values: [list.map((g) => g.clientKey), list.map((g) => g.day), list.map((g) => g.limit), list.map((g) => g.callers.length)],
        });
        calls += batch.length;
        grantGroups(list, r.rows, (c, outcome) => (outcome instanceof Error ? c.reject(outcome) : c.resolve(outcome)));
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
