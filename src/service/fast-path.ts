/**
 * @module The bounded fast path of the worker pool: small requests whose schema the HTTP
 * thread already holds compiled are verified there, under a small evaluation-step budget,
 * instead of paying a thread hand-over (structured clone, two wake-ups) that costs more
 * than the verification. Anything else goes to the pool, and so does every attempt that
 * does not finish cleanly within the budget, so the answer is always the pool's:
 *
 * - The HTTP thread never compiles a schema it has not been shown to be cheap: a schema
 *   is compiled here only after the pool verified requests with it (twice), and the worker
 *   reported deterministic facts: its compiled size (subschemas, keywords, patterns with
 *   counted repetition expanded) under a small threshold, and the evaluation steps of the
 *   request within the budget (an exponential `$ref` tower compiles small but evaluates
 *   in far more); and its text has no `\p{…}` class (the first one scans every code point,
 *   about 0.1 s of CPU: far over what one request may hold this thread).
 *   Compiles are also rate-limited in compiled-size units per second, so a stream of
 *   distinct cheap schemas cannot spend more than a few percent of the thread.
 * - Held schemas live in a byte-bounded cache (createSchemaCache) of their own.
 * - A request is parsed here only when the raw text of its schema has the fingerprint of a held
 *   schema's text (a light scan, no parse), so requests for schemas the pool keeps cost this
 *   thread next to nothing.
 * - A request runs here only when its body is at most `maxBytes` (parsing, hashing and the
 *   rules are linear in it) and the evaluation stays within `maxSteps`; over the budget the
 *   attempt is discarded (never a `too_complex` of its own) and the pool runs the request
 *   under the full limits.
 * - The verdict and receipt are those of the pool: the same parse, the same verifier
 *   configuration, the same draftReceipt and presigner code. Steps only decide whether an
 *   evaluation stops, never what it finds. One engine outcome depends on the thread's stack
 *   size (a reference chain so deep that V8's stack overflows is reported as endless
 *   recursion); such an attempt is discarded too.
 */
import * as nodeCrypto from 'node:crypto';
import { parseVerificationRequest } from '../core/request.js';
import { createSchemaCache, createSchemaEngine, type SchemaEngine } from '../core/schema/index.js';
import type { Json } from '../core/types.js';
import { createVerifier, type Verifier } from '../core/verify.js';
import { draftReceipt, type ReceiptDraft } from '../receipts/issue-receipt.js';
import type { Presigner } from '../receipts/v1/attestation.js';
import { withEvaluate, type VerifierConfig } from './issuer.js';

/** What a verification worker reports about the schema of a request it verified. */
export interface SchemaFacts {
  /** The schema's cache key (its schema_hash). */
  key: string;
  /** CompiledSchema.compiledSize of the worker's compile. */
  compiledSize: number;
  /** Evaluation steps the worker spent on this request's output. */
  steps: number;
}

export interface FastPathOptions {
  /** The verifier settings of the pool's workers (same limits, same list cap). */
  verifier: VerifierConfig;
  maxDepth: number;
  presigner: Presigner;
  verifierVersion: string;
  /** Largest request body (bytes) tried here. */
  maxBytes: number;
  /** Evaluation steps of one attempt here (below the engine's limit). */
  maxSteps: number;
  /** Largest compiled size of a schema compiled here. */
  maxCompiledSize: number;
  /** Estimated bytes of the schemas held here. */
  cacheBytes: number;
  /** Compiled-size units compiled here per second at most (default 4 × maxCompiledSize). */
  compileUnitsPerSecond?: number;
  /** Milliseconds, monotonic (tests). */
  now?: () => number;
  /** DraftOptions.input of every draft made here (false when the store signs; see ReceiptDraft.input). Default true. */
  signingInput?: boolean;
}

export type FallbackReason = 'schema' | 'budget' | 'other';

export interface FastPathStats {
  /** Requests answered here. */
  fast: number;
  /** Attempts discarded and handed to the pool, by reason (schema not held here, over the step budget, anything else). */
  fallbacks: Record<FallbackReason, number>;
  /** Schemas compiled here since start. */
  compiled: number;
  /** Schemas held now, and their estimated bytes. */
  held: number;
  heldBytes: number;
}

export interface FastPath {
  /** Whether a body of this size is tried here at all. */
  accepts(bodyBytes: number): boolean;
  /** The draft of `source`, or null when the pool must run it (nothing here is kept then). */
  draft(source: string | Uint8Array, stamp: { verificationId: string; verifiedAt: string }, keyVersion: string): ReceiptDraft | null;
  /** What the pool learned about the schema of `source`, after verifying it. */
  learn(source: string | Uint8Array, facts: SchemaFacts): void;
  /** Whether the schema with this key is held (compiled) here. */
  holds(key: string): boolean;
  stats(): FastPathStats;
}

/** Thrown inside an attempt that must go to the pool; never leaves this module. */
class Fallback extends Error {
  constructor(readonly reason: FallbackReason) {
    super(`fast path: ${reason}`);
  }
}
const NOT_HELD = new Fallback('schema');
const STACK_DEPENDENT = new Fallback('other');

/** The engine's way of reporting a reference chain that overflowed V8's stack (see the module comment). */
function endlessRecursion(failures: readonly { keyword: string; found: string }[]): boolean {
  const last = failures[failures.length - 1];
  return last !== undefined && last.keyword === '$ref' && last.found === 'endless recursion';
}

/** `\p{…}` or `\P{…}` anywhere in the schema (keys included: patternProperties names are patterns). Conservative. */
function hasPropertyClass(schema: Json): boolean {
  return /\\\\[pP]\{/.test(JSON.stringify(schema));
}

const MAX_SIGHTINGS = 4096;
const MAX_PRINTS = 4096;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const KEY = Buffer.from('"expected_schema"');

/**
 * A fingerprint of the raw text of the request's `expected_schema` value, found by a light scan
 * (the first `"expected_schema"` key, then its value by bracket and string matching; nothing is
 * validated), or null. It only decides whether a fast-path attempt is worth a strict parse: a wrong
 * one (the key inside a string, a schema written differently) sends the request to the pool, and a
 * match still has to name a held schema once parsed and hashed, so it never decides a verdict.
 */
export function fingerprint(source: string | Uint8Array): string | null {
  const buf = typeof source === 'string' ? Buffer.from(source, 'utf8') : Buffer.from(source.buffer, source.byteOffset, source.byteLength);
  let i = buf.indexOf(KEY);
  if (i < 0) return null;
  i += KEY.length;
  while (i < buf.length && isSpace(buf[i])) i++;
  if (buf[i] !== 0x3a) return null;
  i++;
  while (i < buf.length && isSpace(buf[i])) i++;
  const start = i;
  let depth = 0;
  for (; i < buf.length; i++) {
    const c = buf[i];
    if (c === QUOTE) {
      for (i++; i < buf.length && buf[i] !== QUOTE; i++) if (buf[i] === BACKSLASH) i++;
      if (depth === 0) {
        i++;
        break;
      }
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) break;
      if (--depth === 0) {
        i++;
        break;
      }
    } else if (depth === 0 && (c === 0x2c || isSpace(c))) break;
  }
  if (i <= start || i > buf.length) return null;
  return sha1(buf.subarray(start, i));
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

// crypto.hash (Node ≥ 20.12) skips the Hash object.
const oneShot = (nodeCrypto as { hash?: typeof nodeCrypto.hash }).hash;
function sha1(bytes: Buffer): string {
  return oneShot ? oneShot('sha1', bytes, 'base64') : nodeCrypto.createHash('sha1').update(bytes).digest('base64');
}

export function createFastPath(options: FastPathOptions): FastPath {
  const now = options.now ?? (() => performance.now());
  const engine = createSchemaEngine({ limits: options.verifier.workLimits });
  // The cache compiles only inside learn(); a miss anywhere else is a fallback, never a compile.
  let admitting = false;
  const guarded: SchemaEngine = {
    compile(schema, compileOptions) {
      if (!admitting) throw NOT_HELD;
      const compiled = engine.compile(schema, compileOptions);
      return withEvaluate(compiled, (instance, evalOptions) => {
        const r = compiled.evaluate(instance, evalOptions);
        if (!r.valid && endlessRecursion(r.failures)) throw STACK_DEPENDENT;
        return r;
      });
    },
  };
  const cache = createSchemaCache({ engine: guarded, maxBytes: options.cacheBytes });
  const verifier: Verifier = createVerifier({ engine: cache, listCap: options.verifier.listCap });
  const budgeted: Pick<Verifier, 'evaluate'> = {
    evaluate: (parsed, opts) => verifier.evaluate(parsed, { schemaKey: opts?.schemaKey, maxSteps: options.maxSteps }),
  };
  const draftOptions = { verifier: budgeted, presigner: options.presigner, verifierVersion: options.verifierVersion, input: options.signingInput };

  // Keys the pool reported as cheap once: the second report compiles (a schema used once never costs a compile here).
  const sightings = new Set<string>();
  // Keys whose schema was read and refused here (a `\p{…}` class): not read again.
  const refused = new Set<string>();
  const refuse = (key: string): void => {
    if (refused.size >= MAX_SIGHTINGS) refused.clear();
    refused.add(key);
  };
  // Token bucket of compiled-size units.
  const rate = options.compileUnitsPerSecond ?? 4 * options.maxCompiledSize;
  let tokens = rate;
  let refilledAt = now();

  const stats = { fast: 0, fallbacks: { schema: 0, budget: 0, other: 0 } as Record<FallbackReason, number>, compiled: 0 };

  // Fingerprints of the schema texts of requests whose schema is held (see fingerprint()).
  const prints = new Set<string>();
  function remember(source: string | Uint8Array): void {
    const print = fingerprint(source);
    if (print === null) return;
    if (prints.size >= MAX_PRINTS) prints.clear();
    prints.add(print);
  }

  function holds(key: string): boolean {
    try {
      cache.get(key, null);
      return true;
    } catch {
      return false;
    }
  }

  return {
    accepts: (bodyBytes) => bodyBytes <= options.maxBytes,

    draft(source, stamp, keyVersion) {
      // A schema text not seen with a held schema: no strict parse and hashing that could only end in a
      // fallback (they cost 25 µs for a 1 kB request, 300 µs for 15 kB). Only decides where the request runs.
      const print = fingerprint(source);
      if (print === null || !prints.has(print)) {
        stats.fallbacks.schema++;
        return null;
      }
      try {
        const parsed = parseVerificationRequest(source, { maxDepth: options.maxDepth });
        const draft = draftReceipt(parsed, stamp, keyVersion, draftOptions);
        stats.fast++;
        return draft;
      } catch (e) {
        // A schema not held, the budget, or anything else (a malformed request included): the pool
        // answers, so every error the client sees comes from where it always came from.
        const reason: FallbackReason = e instanceof Fallback ? e.reason : isTooComplex(e) ? 'budget' : 'other';
        stats.fallbacks[reason]++;
        // The schema behind this text was dropped from the cache (or the text names another schema), or its
        // outputs outgrow the budget: the pool takes this text until a request with it fits again.
        if (reason !== 'other') prints.delete(print);
        return null;
      }
    },

    learn(source, facts) {
      const bodyBytes = typeof source === 'string' ? Buffer.byteLength(source, 'utf8') : source.byteLength;
      if (bodyBytes > options.maxBytes) return;
      if (holds(facts.key)) {
        // The same schema written another way (spacing, key order), or a text forgotten after an attempt
        // over the budget: it leads here again once a request with it fits the budget.
        if (facts.steps <= options.maxSteps) remember(source);
        return;
      }
      // Cheap to compile (compiled size) and cheap to evaluate within the budget (steps): an exponential
      // $ref tower compiles small but evaluates in far more steps, and is never compiled here.
      if (facts.compiledSize > options.maxCompiledSize || facts.steps > options.maxSteps || refused.has(facts.key)) return;
      if (!sightings.has(facts.key)) {
        if (sightings.size >= MAX_SIGHTINGS) sightings.clear();
        sightings.add(facts.key);
        return;
      }
      const t = now();
      tokens = Math.min(rate, tokens + ((t - refilledAt) / 1000) * rate);
      refilledAt = t;
      if (tokens < facts.compiledSize) return;
      let schema: Json;
      try {
        schema = parseVerificationRequest(source, { maxDepth: options.maxDepth }).request.expected_schema;
      } catch {
        return;
      }
      sightings.delete(facts.key);
      if (hasPropertyClass(schema)) {
        refuse(facts.key);
        return;
      }
      tokens -= facts.compiledSize;
      admitting = true;
      try {
        cache.get(facts.key, schema);
        stats.compiled++;
        remember(source);
      } catch {
        // The worker compiled it, so this does not happen; if it does, the schema simply stays with the pool.
        refuse(facts.key);
      } finally {
        admitting = false;
      }
    },

    holds,

    stats: () => ({ fast: stats.fast, fallbacks: { ...stats.fallbacks }, compiled: stats.compiled, held: cache.size, heldBytes: cache.bytes }),
  };
}

function isTooComplex(e: unknown): boolean {
  return e instanceof Error && (e as { code?: string }).code === 'too_complex';
}
