/**
 * @module The verification runner that keeps schemas (programs written by strangers) off
 * the HTTP thread: a small piscina pool of worker threads does the strict parse, the
 * compilation and the evaluation; the main thread only signs the finished draft (keys
 * never leave it). Each task runs under a wall-clock deadline and each worker under a
 * heap cap: a task past either has its worker terminated and replaced, and the request
 * gets `verification_aborted` (the pipeline releases the admission, so it is never
 * charged). The deterministic work limits stay the first line of defence; this is the
 * second, for whatever path they miss.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { ApiError, isApiError } from '../errors.js';
import type { Attestor } from '../receipts/v1/attestation.js';
import { createDraftBook, preparedOf, stampText } from './inline-runner.js';
import type { FastPath, FastPathStats } from './fast-path.js';
import { failedOf, isFailed, type Failed, type VerificationRunner } from './pipeline.js';
import { createTaskSlots, type VerifyTask, type VerifyTaskReply, type VerifyWorkerData } from './verify-task.js';

export interface PoolRunnerOptions {
  /** Most worker threads at once (at least 1; one runs from the start, see createPoolRunner). */
  threads: number;
  /** Wall-clock limit of one task, from the moment a worker starts it (ms). */
  deadlineMs: number;
  /** Old-generation heap cap of each worker (MiB). */
  heapMb: number;
  /** How long a worker beyond the first stays without work before it stops (ms; default 30 s). */
  idleMs?: number;
  /** Young-generation size of each worker (MiB; default YOUNG_GENERATION_MB). */
  youngMb?: number;
  /** How long the first worker's task runs before a task waiting behind it starts another worker (ms; default OVERFLOW_AFTER_MS). */
  overflowAfterMs?: number;
  /** Tasks that may wait for a free worker before requests are refused with 503 unavailable. */
  maxQueue?: number;
  worker: Omit<VerifyWorkerData, 'slots'>;
  /** Picks the key for a timestamp and signs; the workers only ever learn its version. */
  attestor: Pick<Attestor, 'signer'>;
  /** Small requests with a schema held on this thread run here, under a step budget (src/service/fast-path.ts). */
  fastPath?: FastPath;
}

export interface PoolRunner extends VerificationRunner {
  /** Tasks stopped by the deadline or the heap cap since start (each replaced its worker). */
  aborted(): { deadline: number; memory: number };
  /** Verifications drafted by the pool, and the fast path's counts (null when it is off). */
  runs(): { pool: number; fastPath: FastPathStats | null; workers: number };
}

/** The worker module beside this one: compiled JavaScript, or TypeScript through tsx when running from source. */
function workerModule(): { filename: string; execArgv: string[] } {
  const js = new URL('./verify-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(js))) return { filename: js.href, execArgv: [] };
  return { filename: new URL('./verify-worker.ts', import.meta.url).href, execArgv: ['--import', 'tsx'] };
}

/**
 * A worker's young generation (MiB): V8's semi-spaces, where a task's short-lived data is allocated. Left
 * to V8, a worker's grows with its first large allocations (the warm-up's scan of every code point is one)
 * and stays resident while the worker idles; capped, a large task costs a few more scavenges instead.
 */
export const YOUNG_GENERATION_MB = 6;

function isOutOfMemory(e: unknown): boolean {
  return e instanceof Error && (e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
}

/**
 * How long the first worker's task must have run before a task waiting behind it starts another worker (ms). A
 * burst of fast tasks (a new schema's first requests, a few ms each) drains through the warm first worker well
 * within it, so no thread is started for them and none holds its memory for the idle timeout after; a slow
 * task (a schema that takes seconds) is the case the other workers exist for, and waits this much longer.
 */
export const OVERFLOW_AFTER_MS = 100;

/** A task not yet given to a worker. */
interface Waiting {
  task: VerifyTask & { token: number };
  resolve(reply: VerifyTaskReply): void;
  reject(e: unknown): void;
}

export function createPoolRunner(options: PoolRunnerOptions): PoolRunner {
  const { filename, execArgv } = workerModule();
  const slots = createTaskSlots();
  const threads = Math.max(1, Math.floor(options.threads));
  const maxQueue = options.maxQueue ?? 1024;
  const overflowAfterMs = options.overflowAfterMs ?? OVERFLOW_AFTER_MS;
  const common = {
    filename,
    execArgv,
    concurrentTasksPerWorker: 1,
    resourceLimits: { maxOldGenerationSizeMb: options.heapMb, maxYoungGenerationSizeMb: options.youngMb ?? YOUNG_GENERATION_MB },
    workerData: { ...options.worker, slots: slots.buffer } satisfies VerifyWorkerData,
    recordTiming: false,
  };
  // One worker from the start and for good, warmed up before it takes a task. The others (the overflow) start
  // only when a task waits behind one that has run OVERFLOW_AFTER_MS, and stop after a while without work. Tasks
  // wait here, not in piscina's queue, so that none is stuck behind a slow task once another worker is free.
  const primary = new Piscina({ ...common, minThreads: 1, maxThreads: 1, maxQueue: 1 });
  const overflow = threads > 1 ? new Piscina({ ...common, minThreads: 0, maxThreads: threads - 1, maxQueue: threads, idleTimeout: options.idleMs ?? 30_000 }) : null;
  const pools = overflow === null ? [primary] : [primary, overflow];
  const counts = { deadline: 0, memory: 0 };

  // The deadline runs from the moment a worker starts a task, so time spent queued, or waiting for a
  // replaced worker to start, never counts against it. Workers say when they start a task through
  // shared memory, not a message: a slot per worker holds the running task's token and start time,
  // and a watchdog terminates the worker of a task past its deadline. (A message per task, or an
  // AbortSignal per task, measurably cost the HTTP thread more than the verification itself.)
  const deadlined = new Set<number>();
  for (const pool of pools) pool.on('workerDestroy', (worker: { id: number }) => slots.release(worker.id));
  const watchdog = setInterval(
    () => {
      for (const { threadId, token } of slots.overdue(Date.now() - options.deadlineMs)) {
        if (deadlined.has(token)) continue;
        deadlined.add(token);
        for (const pool of pools) void pool.threads.find((w) => w.threadId === threadId)?.terminate();
      }
    },
    Math.max(10, Math.min(100, Math.floor(options.deadlineMs / 5))),
  );
  watchdog.unref();
  let lastToken = 0;

  const waiting: Waiting[] = [];
  /** When the first worker was given its current task (null: it has none). */
  let primarySince: number | null = null;
  let overflowRunning = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;

  function give(pool: Piscina, w: Waiting, done: () => void): void {
    pool.run(w.task).then(
      (reply: VerifyTaskReply) => {
        done();
        w.resolve(reply);
      },
      (e: unknown) => {
        done();
        w.reject(e);
      },
    );
  }

  /** Gives waiting tasks to free workers: the first worker when it is free, else the overflow (see overflowAfterMs). */
  function dispatch(): void {
    while (waiting.length > 0) {
      if (primarySince === null) {
        primarySince = Date.now();
        give(primary, waiting.shift() as Waiting, () => {
          primarySince = null;
          dispatch();
        });
        continue;
      }
      if (overflow === null || overflowRunning >= threads - 1) break;
      // A started overflow worker without work costs nothing more to use; a new one only when the first is slow.
      const warm = overflow.threads.length > overflowRunning;
      if (!warm && Date.now() - primarySince < overflowAfterMs) {
        if (timer === null) {
          timer = setTimeout(
            () => {
              timer = null;
              dispatch();
            },
            Math.max(1, primarySince + overflowAfterMs - Date.now()),
          );
          timer.unref();
        }
        break;
      }
      overflowRunning++;
      give(overflow, waiting.shift() as Waiting, () => {
        overflowRunning--;
        dispatch();
      });
    }
  }

  function submit(task: VerifyTask & { token: number }): Promise<VerifyTaskReply> {
    if (waiting.length >= maxQueue) {
      return Promise.reject(new ApiError('unavailable', { message: 'Too many verifications are waiting; try again shortly.', retryAfter: 1 }));
    }
    return new Promise((resolve, reject) => {
      waiting.push({ task, resolve, reject });
      dispatch();
    });
  }

  /** The worker's reply, or the request's coded failure: stopped at a limit, refused by a full queue, or the worker's own. */
  async function call(task: VerifyTask): Promise<(VerifyTaskReply & { ok: true }) | Failed> {
    let reply: VerifyTaskReply;
    // Tokens stay positive 31-bit integers (0 marks an idle slot).
    lastToken = lastToken >= 0x7fffffff ? 1 : lastToken + 1;
    const token = lastToken;
    try {
      reply = await submit({ ...task, token });
    } catch (e) {
      if (deadlined.has(token)) {
        counts.deadline++;
        return failedOf(
          new ApiError('verification_aborted', {
            message: `The verification was stopped after ${options.deadlineMs} ms, the time limit of one request. Nothing was charged. Make the schema or the output smaller.`,
          }),
        );
      }
      if (isOutOfMemory(e)) {
        counts.memory++;
        return failedOf(
          new ApiError('verification_aborted', {
            message: `The verification was stopped at the memory limit of one request (${options.heapMb} MiB). Nothing was charged. Make the schema or the output smaller.`,
          }),
        );
      }
      // A full queue, or a task still waiting when the runner closes.
      if (isApiError(e)) return failedOf(e);
      throw e;
    } finally {
      deadlined.delete(token);
    }
    if (!reply.ok) return failedOf(new ApiError(reply.error.code, { message: reply.error.message, fields: reply.error.fields, retryAfter: reply.error.retryAfter }));
    return reply;
  }

  const book = createDraftBook();
  const fast = options.fastPath ?? null;
  let poolRuns = 0;
  return {
    async prepare(source, stamp) {
      const text = stampText(stamp);
      // The key is chosen before the work: the draft names it, and the same handle signs it.
      const signer = options.attestor.signer(text.verifiedAt);
      const small = fast !== null && fast.accepts(typeof source === 'string' ? Buffer.byteLength(source, 'utf8') : source.byteLength);
      if (small) {
        const draft = fast.draft(source, text, signer.keyVersion);
        if (draft !== null) return book.keep(preparedOf(source, draft), draft, signer);
      }
      const reply = await call({ kind: 'draft', source, ...text, keyVersion: signer.keyVersion, facts: small });
      if (isFailed(reply)) return reply;
      poolRuns++;
      if (small && reply.schema !== undefined) fast.learn(source, reply.schema);
      return book.keep(preparedOf(source, reply.draft), reply.draft, signer);
    },
    async run(prepared) {
      return book.sign(prepared);
    },
    unsigned: (prepared) => book.take(prepared),
    aborted: () => ({ ...counts }),
    runs: () => ({ pool: poolRuns, fastPath: fast === null ? null : fast.stats(), workers: pools.reduce((n, p) => n + p.threads.length, 0) }),
    async close() {
      clearInterval(watchdog);
      if (timer !== null) clearTimeout(timer);
      const stopped = new ApiError('unavailable', { message: 'The service is stopping; try again shortly.', retryAfter: 1 });
      for (const w of waiting.splice(0)) w.reject(stopped);
      await Promise.all(pools.map((p) => p.destroy()));
    },
  };
}
