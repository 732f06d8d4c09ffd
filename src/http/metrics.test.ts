import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { NO_STORE_METRICS } from '../store/store.js';
import { createHttpMetrics, registerStoreMetrics } from './metrics.js';

function gauge(text: string, name: string): number {
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
  if (!m) throw new Error(`${name} missing from the metrics`);
  return Number(m[1]);
}

describe('metrics: event-loop delay', () => {
  it('a stall of the event loop shows in the delay gauges, measured since the previous scrape', async () => {
    const metrics = createHttpMetrics();
    // First scrape resets the monitor's histogram (start-up work of the test process is not counted).
    await metrics.registry.metrics();
    await sleep(50);
    const stallMs = 80;
    const until = performance.now() + stallMs;
    while (performance.now() < until) {
      // Busy wait: nothing else can run, as with a synchronous call on the request path.
    }
    await sleep(50);
    const text = await metrics.registry.metrics();
    expect(gauge(text, 'nodejs_eventloop_lag_max_seconds')).toBeGreaterThanOrEqual((stallMs * 0.6) / 1000);
    expect(gauge(text, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0);

  });
});

describe('metrics: the store\'s WAL syncs', () => {
  it('are a Prometheus histogram: cumulative buckets, the last one +Inf, with sum and count', async () => {
    const metrics = createHttpMetrics({ defaultMetrics: false });
    let stats = { bounds: [0.001, 0.01], counts: [3, 2, 1], sum: 0.5 };
    registerStoreMetrics(metrics.registry, { ...NO_STORE_METRICS, walSyncs: () => stats });
    const text = await metrics.registry.metrics();
    expect(text).toContain('# TYPE aov_store_wal_sync_seconds histogram');
    expect(text).toContain('aov_store_wal_sync_seconds_bucket{le="0.001"} 3\n');
    expect(text).toContain('aov_store_wal_sync_seconds_bucket{le="0.01"} 5\n');
    expect(text).toContain('aov_store_wal_sync_seconds_bucket{le="+Inf"} 6\n');
    expect(text).toContain('aov_store_wal_sync_seconds_sum 0.5\n');
    expect(text).toContain('aov_store_wal_sync_seconds_count 6\n');
    // Read at each scrape, not copied once.
    stats = { bounds: [0.001, 0.01], counts: [4, 2, 1], sum: 0.6 };
    expect(await metrics.registry.metrics()).toContain('aov_store_wal_sync_seconds_count 7\n');
  });

  it('have the WAL restarts beside them, in a histogram of their own', async () => {
    const metrics = createHttpMetrics({ defaultMetrics: false });
    const syncs = { bounds: [0.001, 0.01], counts: [3, 2, 1], sum: 0.5 };
    const restarts = { bounds: [0.001, 0.01], counts: [0, 1, 1], sum: 0.025 };
    registerStoreMetrics(metrics.registry, { ...NO_STORE_METRICS, walSyncs: () => syncs, walRestarts: () => restarts });
    const lines = (await metrics.registry.metrics()).split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        '# TYPE aov_store_wal_restart_seconds histogram',
        'aov_store_wal_restart_seconds_bucket{le="0.001"} 0',
        'aov_store_wal_restart_seconds_bucket{le="0.01"} 1',
        'aov_store_wal_restart_seconds_bucket{le="+Inf"} 2',
        'aov_store_wal_restart_seconds_sum 0.025',
        'aov_store_wal_restart_seconds_count 2',
        'aov_store_wal_sync_seconds_count 6',
      ]),
    );
  });
});

describe("metrics: the store's write waits", () => {
  it('are one histogram labelled by what was written, each with its own buckets, sum and count', async () => {
    const metrics = createHttpMetrics({ defaultMetrics: false });
    const bounds = [0.001, 0.01];
    let waits = {
      allowance: { bounds, counts: [5, 1, 0], sum: 0.004 },
      receipt: { bounds, counts: [0, 4, 2], sum: 0.2 },
      log: { bounds, counts: [0, 0, 0], sum: 0 },
    };
    registerStoreMetrics(metrics.registry, { ...NO_STORE_METRICS, writeWaits: () => waits });
    const lines = (await metrics.registry.metrics()).split('\n');
    // One series per label, each cumulative up to its own +Inf, with its own sum and count.
    expect(lines).toEqual(
      expect.arrayContaining([
        '# TYPE aov_store_write_wait_seconds histogram',
        'aov_store_write_wait_seconds_bucket{write="allowance",le="0.001"} 5',
        'aov_store_write_wait_seconds_bucket{write="allowance",le="+Inf"} 6',
        'aov_store_write_wait_seconds_bucket{write="receipt",le="0.01"} 4',
        'aov_store_write_wait_seconds_bucket{write="receipt",le="+Inf"} 6',
        'aov_store_write_wait_seconds_sum{write="receipt"} 0.2',
        'aov_store_write_wait_seconds_count{write="log"} 0',
      ]),
    );
    // The WAL sync histogram is empty (not kept), so none is printed.
    expect(lines.some((l) => l.includes('aov_store_wal_sync_seconds'))).toBe(false);
    waits = { ...waits, receipt: { bounds, counts: [0, 4, 3], sum: 0.3 } };
    expect(await metrics.registry.metrics()).toContain('aov_store_write_wait_seconds_count{write="receipt"} 7\n');
  });
});

describe("metrics: a store that keeps no histograms (PostgreSQL)", () => {
  it('prints none of the store metrics', async () => {
    const metrics = createHttpMetrics({ defaultMetrics: false });
    registerStoreMetrics(metrics.registry, NO_STORE_METRICS);
    expect(await metrics.registry.metrics()).not.toContain('aov_store_');
  });
});
