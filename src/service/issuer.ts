/**
 * @module The receipt issuer as the configuration describes it: the key ring in
 * `<dataDir>/keys`, the schema engine with its compiled-schema cache, the
 * verifier and the attestor. One factory for the server, its verification
 * workers and the command line, so all of them sign with the same keys the same way.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../config.js';
import { createSchemaCache, createSchemaEngine } from '../core/schema/index.js';
import { createVerifier, type Verifier } from '../core/verify.js';
import { createAttestor, type Attestor } from '../receipts/v1/attestation.js';
import { createReceiptIssuer, type ReceiptIssuer } from '../receipts/issue-receipt.js';
import { createKeyRing, type KeyRing } from '../receipts/key-ring.js';
import { VERSION } from '../version.js';

/** The settings an issuer needs (a subset of Config, so workers can be handed just these). */
export type IssuerConfig = Pick<Config, 'dataDir' | 'serviceName' | 'publicBaseUrl' | 'schemaCacheSize' | 'listCap'> &
  Partial<Pick<Config, 'schemaCacheBytes' | 'workLimits'>>;

export interface IssuerOptions {
  clock?: () => Date;
}

export interface Issuer {
  keyRing: KeyRing;
  verifier: Verifier;
  attestor: Attestor;
  issuer: ReceiptIssuer;
}

export function createIssuer(config: IssuerConfig, options: IssuerOptions = {}): Issuer {
  const clock = options.clock ?? (() => new Date());
  const keyRing = createKeyRing({ dir: path.join(config.dataDir, 'keys'), clock });
  // the work limits of every verification (defaults when a caller hands none)
  const engine = createSchemaEngine({ limits: config.workLimits });
  // Compiling a schema costs far more than evaluating it; repeat callers send the same schema.
  // The cache is bounded in (estimated) bytes, so many large schemas cannot grow the heap.
  const schemas =
    config.schemaCacheSize > 0 && config.schemaCacheBytes !== 0
      ? createSchemaCache({ engine, max: config.schemaCacheSize, maxBytes: config.schemaCacheBytes })
      : engine;
  const verifier = createVerifier({ engine: schemas, listCap: config.listCap });
  const attestor = createAttestor({ keyRing, serviceName: config.serviceName, baseUrl: config.publicBaseUrl });
  const issuer = createReceiptIssuer({ verifier, attestor, clock, newId: randomUUID, verifierVersion: VERSION });
  return { keyRing, verifier, attestor, issuer };
}
