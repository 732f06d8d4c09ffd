import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHttpMetrics } from './metrics.js';

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
