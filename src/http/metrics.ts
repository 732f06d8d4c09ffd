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
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
