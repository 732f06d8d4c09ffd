/**
 * @module Operations routes: /health (liveness and readiness: database
 * reachable, signing key loaded, not shutting down), /metrics (Prometheus) and
 * /openapi.json (the interactive docs at /docs are registered with the OpenAPI plugin).
 */
import type { FastifyInstance } from 'fastify';
import { errorBody } from '../errors.js';
import type { HttpMetrics } from './metrics.js';

export interface Readiness {
  database: boolean;
  signingKey: boolean;
  /** Why the database is not ready (e.g. `disk full`), named in the 503. */
  databaseProblem?: string;
  /** Why no signing key is usable. */
  signingKeyProblem?: string;
  /** Serving, but something needs the operator (e.g. key files missing while the loaded key still signs). */
  warnings?: string[];
  /** Why this instance signs no transparency-log checkpoint (a coded reason), when it does not. */
  transparencyLog?: { code: string; problem: string };
}

export interface OperationsRoutesOptions {
  version: string;
  metrics: HttpMetrics;
  readiness(): Promise<Readiness>;
  /** True once the server is shutting down. */
  closing(): boolean;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export async function operationsRoutes(app: FastifyInstance, options: OperationsRoutesOptions): Promise<void> {
  const hidden = { schema: { hide: true } };
  app.get('/health', { schema: { summary: 'Liveness and readiness (database reachable, signing key loaded)', tags: ['operations'] } }, async (_req, reply) => {
    let ready: Readiness;
    try {
      ready = await options.readiness();
    } catch {
      ready = { database: false, signingKey: false };
    }
    const closing = options.closing();
    if (closing || !ready.database || !ready.signingKey) {
      // Each component that is not ready is named, with the reason, in fields[] (and in the message).
      const fields = closing
        ? [{ field: 'service', problem: 'shutting down', fix: 'send requests to another instance' }]
        : [
            ...(ready.database ? [] : [{ field: 'database', problem: ready.databaseProblem ?? 'unreachable', fix: 'restore the database (reachable, writable, with free space)' }]),
            ...(ready.signingKey ? [] : [{ field: 'signing_key', problem: ready.signingKeyProblem ?? 'no usable signing key', fix: 'restore the signing keys (see docs/operations.md)' }]),
          ];
      const why = fields.map((f) => `${f.field}: ${f.problem}`).join('; ');
      const body = errorBody('unavailable', { message: `Not ready: ${why}.`, fields });
      if (body.retry_after !== undefined) reply.header('Retry-After', String(body.retry_after));
      return reply.code(body.status).type(JSON_TYPE).send(JSON.stringify(body));
    }
    const warnings = ready.warnings ?? [];
    // Receipts are still stored and queued, but this instance signs no checkpoint: still 200 (another instance may).
    const logProblem = ready.transparencyLog;
    return reply.type(JSON_TYPE).send(
      JSON.stringify({
        status: warnings.length > 0 || logProblem ? 'degraded' : 'ok',
        database: 'ok',
        signing_key: 'ok',
        transparency_log: logProblem ? { status: 'not_signing', code: logProblem.code, problem: logProblem.problem, fix: 'give every instance the log\'s note key (see docs/transparency.md)' } : 'ok',
        ...(warnings.length > 0 ? { warnings } : {}),
        version: options.version,
      }),
    );
  });
  app.get('/metrics', hidden, async (_req, reply) => reply.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics()));
  app.get('/openapi.json', hidden, async (_req, reply) => reply.type(JSON_TYPE).send(JSON.stringify(app.swagger())));
}
