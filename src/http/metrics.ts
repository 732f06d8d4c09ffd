/**
 * @module Prometheus metrics (GET /metrics): requests by route and status, a
 * latency histogram, and verification verdicts. One registry per server so
 * several servers in one process (tests) do not share counters.
 *
 * The default process metrics include the event-loop delay, sampled by
 * perf_hooks.monitorEventLoopDelay: nodejs_eventloop_lag_{p50,p90,p99,max}_seconds
 * cover the time since the previous scrape (each scrape resets the histogram), so a
 * stall on the request path shows up as a max far above the p99.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DurationHistogram, StoreMetrics } from '../store/store.js';

export interface HttpMetrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  latency: Histogram<'method' | 'route'>;
  verifications: Counter<'result' | 'transport'>;
}

export function createHttpMetrics(options: { defaultMetrics?: boolean } = {}): HttpMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({
      name: 'aov_http_requests_total',
      help: 'HTTP requests by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'aov_http_request_duration_seconds',
      help: 'HTTP request latency by method and route pattern.',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    verifications: new Counter({
      name: 'aov_verifications_total',
      help: 'Signed verification receipts issued, by result and transport (rest, mcp, a2a, batch).',
      labelNames: ['result', 'transport'],
      registers: [registry],
    }),
  };
}

/** Where the worker pool's verifications ran (pool-runner.ts runs()); read only when /metrics is scraped. */
export interface RunCounts {
  pool: number;
  /** Verification worker threads running now (fewer while a stopped one is being replaced). */
  workers: number;
  fastPath: { fast: number; fallbacks: Record<string, number>; held: number; heldBytes: number } | null;
}

/** Counters of pool and fast-path runs, fast-path fallbacks by reason, and the schemas the HTTP thread holds. */
export function registerRunMetrics(registry: Registry, read: () => RunCounts): void {
  new Counter({
    name: 'aov_verify_runs_total',
    help: 'Verifications drafted, by where they ran: pool (a worker) or fast_path (the HTTP thread, under a step budget).',
    labelNames: ['where'],
    registers: [registry],
    collect() {
      const r = read();
      this.reset();
      this.inc({ where: 'pool' }, r.pool);
      this.inc({ where: 'fast_path' }, r.fastPath?.fast ?? 0);
    },
  });
  new Counter({
    name: 'aov_verify_fast_path_fallbacks_total',
    help: 'Small requests the fast path handed to the pool: schema not held on the HTTP thread, over the step budget, other.',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const f = read().fastPath;
      this.reset();
      if (f) for (const [reason, n] of Object.entries(f.fallbacks)) this.inc({ reason }, n);
    },
  });
  new Gauge({
    name: 'aov_verify_fast_path_schema_bytes',
    help: 'Estimated bytes of the compiled schemas the HTTP thread holds for the fast path.',
    registers: [registry],
    collect() {
      this.set(read().fastPath?.heldBytes ?? 0);
    },
  });
  new Gauge({
    name: 'aov_verify_workers',
    help: 'Verification worker threads running (one from the start, up to VERIFY_WORKERS when tasks overlap; fewer while a stopped worker is being replaced).',
    registers: [registry],
    collect() {
      this.set(read().workers);
    },
  });
}

/**
 * The store's histograms, read from the store when /metrics is scraped (cumulative buckets, sum, count):
 * - aov_store_wal_sync_seconds: the WAL syncs; every receipt waits for one;
 * - aov_store_wal_restart_seconds: how long each start-over of the WAL held every write back;
 * - aov_store_write_wait_seconds{write}: how long calls on the HTTP thread waited for the writer thread to answer, by
 *   what they wrote (a request's allowance unit and receipt, the log's appends).
 * Only the embedded store's writer and checkpointer threads keep them; a histogram a store does not keep is
 * empty (no buckets), and a metric with nothing but empty histograms is not registered.
 */
export function registerStoreMetrics(registry: Registry, store: StoreMetrics): void {
  const kept = (hs: DurationHistogram[]) => hs.some((h) => h.counts.length > 0);
  if (kept([store.walSyncs()])) {
    histogramMetric(registry, 'aov_store_wal_sync_seconds', 'Disk syncs of the SQLite WAL that make committed receipts durable (a receipt is answered after its sync).', () => [
      { labels: {}, h: store.walSyncs() },
    ]);
  }
  if (kept([store.walRestarts()])) {
    histogramMetric(
      registry,
      'aov_store_wal_restart_seconds',
      'Time each start-over of the SQLite WAL (a RESTART checkpoint, once the WAL is past its bound) held every write back.',
      () => [{ labels: {}, h: store.walRestarts() }],
    );
  }
  if (kept(Object.values(store.writeWaits()))) {
    histogramMetric(
      registry,
      'aov_store_write_wait_seconds',
      "Time a call on the HTTP thread waited for the SQLite writer thread's answer, by what it wrote: the batch in flight, the transaction and, for receipts, the WAL sync.",
      () => Object.entries(store.writeWaits()).map(([write, h]) => ({ labels: { write }, h })),
    );
  }
}

type SampleValue = { metricName: string; labels: Record<string, string | number>; value: number };

/** A histogram whose buckets are kept elsewhere (prom-client's Histogram takes observations, not ready counts). */
function histogramMetric(registry: Registry, name: string, help: string, read: () => Array<{ labels: Record<string, string>; h: DurationHistogram }>): void {
  registry.registerMetric({
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get() {
      const values: SampleValue[] = [];
      for (const { labels, h } of read()) {
        let cumulative = 0;
        h.counts.forEach((n, i) => {
          cumulative += n;
          values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: i < h.bounds.length ? (h.bounds[i] as number) : '+Inf' }, value: cumulative });
        });
        values.push({ metricName: `${name}_sum`, labels, value: h.sum });
        values.push({ metricName: `${name}_count`, labels, value: cumulative });
      }
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
  } as unknown as Parameters<Registry['registerMetric']>[0]);
}
