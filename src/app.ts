/**
 * @module Composition root: from a Config to a running-ready service. Opens the
 * store, the key ring (first start generates a key), the schema engine and its
 * cache, the verifier, the receipt issuer and the application service, and
 * builds the HTTP server on top. `close()` stops taking requests, lets in-flight
 * ones finish, then closes the store.
 */
import { newVerificationId } from './receipts/verification-id.js';
import type { FastifyInstance, FastifyPluginAsync, FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import { computeTrustScore, isTestAgent } from './core/trust-score.js';
import { createHttpServer } from './http/server.js';
import { createTransparencyLog, logOrigin, openNoteKey } from './log/index.js';
import type { TransparencyLog } from './log/index.js';
import type { HttpServer } from './http/server.js';
import { attestationExtension } from './receipts/index.js';
import { openSigningKeys, type SigningKeys } from './service/signing-keys.js';
import { createHttpMetrics, registerRunMetrics, registerStoreMetrics } from './http/metrics.js';
import { createInlineRunner } from './service/inline-runner.js';
import { createPoolRunner } from './service/pool-runner.js';
import { createFastPath } from './service/fast-path.js';
import { createIssuer } from './service/issuer.js';
import { createAllowancePolicy, createPipeline, type AdmissionPolicy, type Pipeline, type VerificationRunner } from './service/pipeline.js';
import { createVerifierService } from './service/verifier-service.js';
import type { VerifierService } from './service/types.js';
import { openStore, signsOnWriterThread, type OpenStoreOptions } from './store/index.js';
import type { Erc8004Mode } from './erc8004/index.js';
import type { Payments, PaymentsOptions } from './payments/index.js';
import { loadWithPaymentPeers } from './payments/peer-modules.js';
import type { PaymentEncoding } from './payments/transport.js';
import type { Store } from './store/store.js';
import { VERSION } from './version.js';

export interface CreateAppOptions {
  /** Fastify logger setting (tests pass false). Default: pino at config.logLevel. */
  logger?: FastifyServerOptions['logger'];
  /** Injected clock (tests). */
  clock?: () => Date;
  /** x402: override the facilitator or the built-in facilitator's chain signers (tests, custom wallets). */
  payments?: Pick<PaymentsOptions, 'evmSigner' | 'svmSigner' | 'facilitator' | 'transactionStatus'>;
  /** How often pending settlements are reconciled with the chain (ms; default 15 s). */
  reconcileIntervalMs?: number;
  /**
   * False: the log's sequencer is not started, so receipts stay queued and no checkpoint moves. Only
   * for measuring what the log costs (`npm run bench:log`); no setting exposes it, since a service
   * that does not log its receipts would break the log's promise.
   */
  sequencer?: boolean;
}

export interface App {
  app: FastifyInstance;
  server: HttpServer;
  service: VerifierService;
  /** The admission pipeline every transport goes through. */
  pipeline: Pipeline;
  /** Where the pipeline runs verifications. */
  runner: VerificationRunner;
  store: Store;
  config: Config;
  /** x402 payments when on (gate and, in local mode, the built-in facilitator). */
  payments: Payments | null;
  /** The transparency log of every stored receipt (its sequencer runs while the app is open). */
  log: TransparencyLog;
  /** Graceful: new requests get 503, in-flight ones finish, then the store closes. Idempotent. */
  close(): Promise<void>;
}

export async function createApp(config: Config, options: CreateAppOptions = {}): Promise<App> {
  const clock = options.clock ?? (() => new Date());
  const version = VERSION;

  // SQLite: allowance and receipt writes are committed on a worker thread, in groups (one WAL sync for all
  // writes that arrived meanwhile), so disk syncs never stall the event loop.
  // The HTTP logger exists only once the server does; store faults and payment warnings go to it from then on.
  const log: { current?: FastifyInstance['log'] } = {};
  const storeOptions: OpenStoreOptions = {
    onFault: (reason, err) => log.current?.error({ err }, `store fault: ${reason}`),
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    schema: config.databaseSchema,
    poolSize: config.databasePoolSize,
    writer: 'worker',
    synchronous: config.sqliteSynchronous,
  };
  const store = await openStore(storeOptions);
  let signingKeys: SigningKeys | undefined;
  try {
    await store.migrate();
    // Files in the data directory, or the database when KEY_ENCRYPTION_KEY is set; fails closed (see signing-keys.ts).
    signingKeys = await openSigningKeys({
      store,
      dataDir: config.dataDir,
      keyEncryptionKey: config.keyEncryptionKey,
      clock,
      warn: (obj, msg) => log.current?.warn(obj, msg),
    });
    const keys = signingKeys;
    const keyRing = keys.keyRing;

    const { verifier, attestor } = createIssuer(config, { clock, keyRing });

    // The transparency log: its own note key, named after the public host and recorded in the database (so every
    // instance signs as one log), and a sequencer on every instance.
    const noteKey = await openNoteKey({
      store,
      name: logOrigin(config.publicBaseUrl),
      file: config.logNoteKeyFile,
      kek: config.keyEncryptionKey,
      clock,
      warn: (msg) => log.current?.warn(msg),
    });
    const transparencyLog = createTransparencyLog({
      store,
      signer: noteKey.signer,
      recordedVerifierKey: noteKey.recordedVerifierKey,
      keyMismatch: noteKey.mismatch,
      publicBaseUrl: config.publicBaseUrl,
      intervalMs: config.logIntervalMs,
      onError: (err) => log.current?.error({ err }, 'transparency log: integration failed (retried on the next tick)'),
      // Without PUBLIC_BASE_URL the log is named after the address it listens on: a restart elsewhere renames it.
      adoptAtStart: !config.publicBaseUrlSet,
      onAdopt: (previous) =>
        log.current?.warn(
          `transparency log: the newest checkpoint (${previous.slice(0, previous.indexOf('\n'))}) was signed by another key; re-signed as ${logOrigin(config.publicBaseUrl)} because PUBLIC_BASE_URL is not set (set it to keep the log's name and key)`,
        ),
      onStatus: (status) =>
        status
          ? log.current?.error({ code: status.code }, `transparency log: this instance signs no checkpoint: ${status.problem}`)
          : log.current?.info('transparency log: this instance signs checkpoints again'),
    });

    const service = createVerifierService({
      store,
      attestor,
      computeTrustScore,
      isTestAgent,
      clock,
      freeAllowance: config.freeAllowancePerDay,
      listCap: config.listCap,
      checkpoint: () => transparencyLog.checkpointNow(),
    });
    // The embedded store's writer thread derives each signing input there, from the receipt's text, as it signs;
    // a store that signs on this thread takes the one drafted with the verdict (off this thread, in a worker).
    const signingInput = !signsOnWriterThread(storeOptions);
    const workerVerifier = { schemaCacheSize: config.schemaCacheSize, schemaCacheBytes: config.schemaCacheBytes, listCap: config.listCap, workLimits: config.workLimits };
    const fast = config.verifyFastPath;
    const pool =
      config.verifyWorkers > 0
        ? createPoolRunner({
            threads: config.verifyWorkers,
            deadlineMs: config.verifyDeadlineMs,
            heapMb: config.verifyWorkerHeapMb,
            attestor,
            worker: {
              verifier: workerVerifier,
              maxDepth: config.maxJsonDepth,
              serviceName: config.serviceName,
              baseUrl: config.publicBaseUrl,
              verifierVersion: version,
              signingInput,
            },
            // The workers' own verifier settings, so a verdict is the same whichever thread drafts it.
            fastPath:
              fast.maxBytes > 0 && fast.cacheBytes > 0
                ? createFastPath({
                    verifier: workerVerifier,
                    maxDepth: config.maxJsonDepth,
                    presigner: attestor,
                    verifierVersion: version,
                    maxBytes: fast.maxBytes,
                    maxSteps: fast.maxSteps,
                    maxCompiledSize: fast.maxCompiledSize,
                    cacheBytes: fast.cacheBytes,
                    signingInput,
                  })
                : undefined,
          })
        : null;
    const runner: VerificationRunner = pool ?? createInlineRunner({ verifier, attestor, verifierVersion: version, maxDepth: config.maxJsonDepth, signingInput });

    const paymentLog = log;
    // Imported only when payments are on: the x402 client stack is slow to load and large in memory.
    const payments = config.payments.enabled
      ? (await loadWithPaymentPeers('X402_ENABLED', () => import('./payments/index.js'))).createPayments({
          config: config.payments,
          store,
          serviceName: config.serviceName,
          keyEncryptionKey: config.keyEncryptionKey,
          log: {
            warn: (obj, msg) => paymentLog.current?.warn(obj as object, msg),
            error: (obj, msg) => paymentLog.current?.error(obj as object, msg),
          },
          ...options.payments,
        })
      : null;
    // Fetch the facilitator's supported kinds now; when it is unreachable the gate retries on first use.
    const paymentsInitError: unknown = payments ? await payments.gate.initialize().then(() => null, (e: unknown) => e) : null;

    // With payments on, the x402 policy decides who pays; the transports only encode its answers.
    let policy: AdmissionPolicy = createAllowancePolicy(service);
    let paymentEncoding: PaymentEncoding | null = null;
    const plugins: FastifyPluginAsync[] = [];
    if (payments) {
      const [{ createPaymentPolicy }, transport] = await Promise.all([import('./payments/admission.js'), import('./payments/transport.js')]);
      policy = createPaymentPolicy({ gate: payments.gate, service });
      paymentEncoding = transport.createPaymentEncoding({
        mcpUrl: `${config.publicBaseUrl}/mcp`,
        client: config.trustProxy ? 'ip address (X-Forwarded-For from the trusted proxy)' : 'ip address',
      });
      const local = payments.localFacilitator;
      const facilitatorToken = config.payments.facilitator.mode === 'local' ? config.payments.facilitator.routesToken : null;
      if (local && facilitatorToken) {
        // Off unless the operator turns them on with a token: they make the settlement key pay gas.
        // Loaded only when used: the facilitator pulls in the EVM client stack (slow to import, ~45 MiB).
        const { registerFacilitatorRoutes } = await import('./payments/local-facilitator.js');
        plugins.push(async (scope) => registerFacilitatorRoutes(scope, local, { prefix: '/facilitator', token: facilitatorToken }));
      }
    }
    // ERC-8004 validator mode (off by default): answers validation requests addressed to it from its receipts.
    let erc8004: Erc8004Mode | null = null;
    if (config.erc8004.enabled) {
      const { createErc8004Mode } = await loadWithPaymentPeers('ERC8004_ENABLED', () => import('./erc8004/index.js'));
      erc8004 = await createErc8004Mode({
        config: config.erc8004,
        queue: store.erc8004,
        publicBaseUrl: config.publicBaseUrl,
        listCap: config.listCap,
        log: {
          info: (obj, msg) => log.current?.info(obj, msg),
          warn: (obj, msg) => log.current?.warn(obj, msg),
          error: (obj, msg) => log.current?.error(obj, msg),
        },
      });
      plugins.push(erc8004.routes);
    }
    const metrics = createHttpMetrics();
    if (pool) registerRunMetrics(metrics.registry, () => pool.runs());
    registerStoreMetrics(metrics.registry, store);
    const pipeline = createPipeline({
      runner,
      service,
      policy,
      clock,
      newId: () => newVerificationId(),
      onVerified: (e) => metrics.verifications.inc({ result: e.result, transport: e.transport }),
    });

    const server = await createHttpServer({
      config,
      pipeline,
      metrics,
      payments: paymentEncoding,
      plugins,
      version,
      logger: options.logger,
      attestationExtension: () => {
        // The card lists every key of the ring and every key recorded in the database.
        const ext = attestationExtension({ ...keyRing, list: () => keys.cardKeys() });
        // The checkpoint key sits beside the receipt keys, so one document tells a client every key to trust.
        return { ...ext, params: { ...ext.params, transparencyLog: { origin: transparencyLog.origin, verifierKey: transparencyLog.verifierKey, url: `${config.publicBaseUrl}/log` } } } as unknown as Record<string, unknown>;
      },
      log: { log: transparencyLog, receiptExists: async (id) => (await store.getReceipt(id)) !== null },
      async readiness() {
        const key = keys.readiness();
        const databaseProblem = await store.readiness();
        const logStatus = transparencyLog.sequencer.status();
        return {
          database: databaseProblem === null,
          signingKey: key.problem === null,
          databaseProblem: databaseProblem ?? undefined,
          signingKeyProblem: key.problem ?? undefined,
          warnings: [...key.warnings, ...(logStatus ? [`transparency log (${logStatus.code}): ${logStatus.problem}`] : [])],
          transparencyLog: logStatus ?? undefined,
        };
      },
    });

    paymentLog.current = server.app.log;
    const logStatus = transparencyLog.sequencer.status();
    if (logStatus) server.app.log.error({ code: logStatus.code }, `transparency log: this instance signs no checkpoint: ${logStatus.problem}`);
    // The first checkpoint is published before the first request is answered.
    await transparencyLog.sequencer.integrate();
    if (options.sequencer !== false) transparencyLog.start();
    if (paymentsInitError) {
      server.app.log.warn({ err: paymentsInitError }, 'x402: the facilitator is not ready; paid routes answer 503 until it is (retried on each paid request)');
    }

    // Paid receipts left pending (settlement outcome unknown, or a crash mid-settlement) are settled
    // from the chain: at start-up, then periodically. One pass at a time; never blocks requests.
    let reconciling: Promise<unknown> | null = null;
    const reconcile = () => {
      if (!payments || reconciling) return;
      reconciling = payments.gate.reconcileAll().finally(() => (reconciling = null));
    };
    reconcile();
    const reconcileTimer = payments ? setInterval(reconcile, options.reconcileIntervalMs ?? 15_000) : null;
    reconcileTimer?.unref();
    // Requests left half-answered by a crash are taken up by the first pass (their rows are still due).
    erc8004?.validator.start();

    // Allowance rows are needed for today only (and yesterday, around midnight): older ones are pruned hourly.
    const prune = () => {
      const before = new Date(clock().getTime() - 2 * 86_400_000).toISOString().slice(0, 10);
      store.pruneAllowance(before).catch((err: unknown) => log.current?.warn({ err }, 'allowance pruning failed'));
    };
    prune();
    const pruneTimer = setInterval(prune, 3_600_000);
    pruneTimer.unref();

    let closed: Promise<void> | undefined;
    return {
      app: server.app,
      server,
      service,
      pipeline,
      runner,
      store,
      config,
      payments,
      log: transparencyLog,
      close() {
        closed ??= (async () => {
          if (reconcileTimer) clearInterval(reconcileTimer);
          try {
            await erc8004?.validator.stop();
            await server.close();
            await reconciling?.catch(() => undefined);
          } finally {
            keys.close();
            clearInterval(pruneTimer);
            // Whatever was stored is integrated now, or by the next start: the queue survives.
            await transparencyLog.sequencer.integrate().catch(() => undefined);
            await transparencyLog.stop();
            await runner.close().catch(() => undefined);
            await store.close();
          }
        })();
        return closed;
      },
    };
  } catch (err) {
    signingKeys?.close();
    await store.close().catch(() => undefined);
    throw err;
  }
}
