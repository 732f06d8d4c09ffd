/**
 * @module The verifier and the receipt issuer as the configuration describes
 * them: the schema engine with its work limits and its byte-bounded
 * compiled-schema cache, the verifier, the attestor over a key ring, and the
 * issuer. One factory for the server, its verification workers and the command
 * line, so all of them verify and sign the same way.
 */
import { newVerificationId } from '../receipts/verification-id.js';
import path from 'node:path';
import type { Config } from '../config.js';
import { createSchemaCache, createSchemaEngine, type CompiledSchema, type SchemaEngine, type SchemaEvaluation } from '../core/schema/index.js';
import { createVerifier, type Verifier } from '../core/verify.js';
import { createAttestor, type Attestor } from '../receipts/v1/attestation.js';
import { createReceiptIssuer, type ReceiptIssuer } from '../receipts/issue-receipt.js';
import { createKeyRing, type KeyRing } from '../receipts/key-ring.js';
import { VERSION } from '../version.js';

/** The settings a verifier needs (a subset of Config, so workers can be handed just these). */
export type VerifierConfig = Pick<Config, 'schemaCacheSize' | 'schemaCacheBytes' | 'listCap' | 'workLimits'>;

/** The settings an issuer needs. */
export type IssuerConfig = VerifierConfig & Pick<Config, 'dataDir' | 'serviceName' | 'publicBaseUrl'>;

export interface IssuerOptions {
  clock?: () => Date;
  /** The signing keys; default: the key files in `<dataDir>/keys`. */
  keyRing?: KeyRing;
}

export interface Issuer {
  keyRing: KeyRing;
  verifier: Verifier;
  attestor: Attestor;
  issuer: ReceiptIssuer;
}

/** The schema engine under the configured work limits, behind its cache, and the verifier on top. */
export function createConfiguredVerifier(config: VerifierConfig, hooks: { onEvaluated?: (evaluation: SchemaEvaluation) => void } = {}): Verifier {
  const base = createSchemaEngine({ limits: config.workLimits });
  const engine = hooks.onEvaluated ? observed(base, hooks.onEvaluated) : base;
  // Compiling a schema costs far more than evaluating it; repeat callers send the same schema.
  // The cache is bounded in (estimated) bytes, so many large schemas cannot grow the heap.
  const schemas =
    config.schemaCacheSize > 0 && config.schemaCacheBytes > 0
      ? createSchemaCache({ engine, max: config.schemaCacheSize, maxBytes: config.schemaCacheBytes })
      : engine;
  return createVerifier({ engine: schemas, listCap: config.listCap });
}

/** The same compiled schema with another `evaluate` (to observe or refuse its results). */
export function withEvaluate(compiled: CompiledSchema, evaluate: CompiledSchema['evaluate']): CompiledSchema {
  return { dialect: compiled.dialect, compiledSize: compiled.compiledSize, warnings: compiled.warnings, evaluate };
}

/** The engine, telling `onEvaluated` about every evaluation that finished (the verification workers report its steps). */
function observed(engine: SchemaEngine, onEvaluated: (evaluation: SchemaEvaluation) => void): SchemaEngine {
  return {
    compile(schema, options) {
      const compiled = engine.compile(schema, options);
      return withEvaluate(compiled, (instance, evalOptions) => {
        const evaluation = compiled.evaluate(instance, evalOptions);
        onEvaluated(evaluation);
        return evaluation;
      });
    },
  };
}

export function createIssuer(config: IssuerConfig, options: IssuerOptions = {}): Issuer {
  const clock = options.clock ?? (() => new Date());
  const keyRing = options.keyRing ?? createKeyRing({ dir: path.join(config.dataDir, 'keys'), clock });
  const verifier = createConfiguredVerifier(config);
  const attestor = createAttestor({ keyRing, serviceName: config.serviceName, baseUrl: config.publicBaseUrl });
  const issuer = createReceiptIssuer({ verifier, attestor, clock, newId: () => newVerificationId(), verifierVersion: VERSION });
  return { keyRing, verifier, attestor, issuer };
}
