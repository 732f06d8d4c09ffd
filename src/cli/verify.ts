/**
 * @module `aov verify`: verify an output offline (SPEC §7). Either a full
 * request body (`aov verify request.json`) or the parts as files
 * (`--schema S.json --output O.json [--rules R.json] [--bounds B.json] ...`).
 * Prints the response JSON; exit 0 pass, 1 fail, 2 invalid request or usage.
 *
 * Built in three steps so other flags can be layered on: argv → options
 * (parseVerifyArgs), options → parsed request (loadRequest), parsed request →
 * response (runVerification).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { CliIO } from './io.js';
import { invalidRequest, isApiError } from '../errors.js';
import type { Detail, ParsedRequest } from '../core/types.js';
import { parseVerificationRequest } from '../core/request.js';
import { parseStrictJson, StrictJsonError } from '../core/strict-json.js';
import { createVerifier, type Verifier } from '../core/verify.js';
import { buildResponse, type VerificationResponse } from '../core/response.js';
import { createSchemaEngine } from '../core/schema/index.js';
import { computeHashes } from '../receipts/hashes.js';
import { rfc3339Seconds } from '../receipts/time.js';
import { createKeyRing } from '../receipts/key-ring.js';
import { createAttestor } from '../receipts/v1/attestation.js';
import { createReceiptIssuer } from '../receipts/issue-receipt.js';
import { VERSION } from '../version.js';

export const VERIFY_USAGE = `usage: aov verify REQUEST.json
       aov verify --schema S.json --output O.json [options]

Verify an agent output offline. '-' reads standard input.
Prints the response JSON; exit code 0 pass, 1 fail, 2 invalid request or usage error.

options:
  --schema FILE       the JSON Schema (expected_schema)
  --output FILE       the output to check (submitted_output)
  --rules FILE        a JSON array of rules
  --bounds FILE       a JSON object of bounds, path -> {min, max, if_present}
  --enforce-rules     failed rules and bounds fail the result
  --strict            add the strict content checks
  --detail compact    print the compact response
  --task-id ID        task_id (default 'local')
  --agent-id ID       agent_id (default none)
  --sign              sign the response like the service does (prints the receipt text exactly)
  --data-dir DIR      with --sign: data directory holding keys/ (default ./data)
  --base-url URL      with --sign: public base URL in the verify block (default http://127.0.0.1:8080)
  --service-name N    with --sign: service name in the verify block (default agent-output-verifier)
  -h, --help          show this help
`;

const OPTIONS = {
  schema: { type: 'string' },
  output: { type: 'string' },
  rules: { type: 'string' },
  bounds: { type: 'string' },
  'enforce-rules': { type: 'boolean' },
  strict: { type: 'boolean' },
  detail: { type: 'string' },
  'task-id': { type: 'string' },
  'agent-id': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  sign: { type: 'boolean' },
  'data-dir': { type: 'string' },
  'base-url': { type: 'string' },
  'service-name': { type: 'string' },
} as const;

export interface VerifyCliOptions {
  /** A full request body file, or null when the parts are given as flags. */
  requestFile: string | null;
  schema?: string;
  output?: string;
  rules?: string;
  bounds?: string;
  enforceRules: boolean;
  strict: boolean;
  detail?: Detail;
  taskId?: string;
  agentId?: string;
  help: boolean;
  /** Sign the response with the key ring in `<dataDir>/keys`. */
  sign?: { dataDir: string; baseUrl: string; serviceName: string };
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** argv → options. Throws UsageError. */
export function parseVerifyArgs(argv: string[]): VerifyCliOptions {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  const { values, positionals } = parsed;
  const opts: VerifyCliOptions = {
    requestFile: positionals[0] ?? null,
    schema: values.schema,
    output: values.output,
    rules: values.rules,
    bounds: values.bounds,
    enforceRules: values['enforce-rules'] ?? false,
    strict: values.strict ?? false,
    taskId: values['task-id'],
    agentId: values['agent-id'],
    help: values.help ?? false,
  };
  if (opts.help) return opts;
  if (values.sign) {
    opts.sign = {
      dataDir: values['data-dir'] ?? './data',
      baseUrl: values['base-url'] ?? 'http://127.0.0.1:8080',
      serviceName: values['service-name'] ?? 'agent-output-verifier',
    };
  } else if (values['data-dir'] ?? values['base-url'] ?? values['service-name']) {
    throw new UsageError('--data-dir, --base-url and --service-name go with --sign');
  }
  if (values.detail !== undefined) {
    if (values.detail !== 'full' && values.detail !== 'compact') throw new UsageError("--detail must be 'full' or 'compact'");
    opts.detail = values.detail;
  }
  if (positionals.length > 1) throw new UsageError('give one request file');
  const partFlags = opts.schema ?? opts.output ?? opts.rules ?? opts.bounds ?? opts.taskId ?? opts.agentId;
  if (opts.requestFile !== null) {
    if (partFlags !== undefined || opts.enforceRules || opts.strict) {
      throw new UsageError('give either a request file or --schema/--output and their options, not both');
    }
  } else if (opts.schema === undefined || opts.output === undefined) {
    throw new UsageError('give a request file, or both --schema and --output');
  }
  return opts;
}

function readInput(io: CliIO, file: string): string {
  try {
    return io.readFile(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${file === '-' ? 'standard input' : `'${file}'`}${code ? ` (${code})` : ''}`);
  }
}

/**
 * Check a part file on its own, so its content can only ever become the value
 * of its own field (never inject fields), and errors name the flag.
 */
function partJson(io: CliIO, file: string, field: string, flag: string): string {
  const text = readInput(io, file);
  try {
    parseStrictJson(text);
  } catch (e) {
    if (e instanceof StrictJsonError && e.kind === 'invalid_json') {
      throw invalidRequest([{ field, problem: `is not valid JSON (${e.message}, in the ${flag} file)`, fix: `Make the ${flag} file one well-formed JSON value.` }]);
    }
    // Other strict-parse problems are reported with their location by the full request parse below.
  }
  return text;
}

/** Options → parsed request, exactly as the service would parse it. Throws ApiError or UsageError. */
export function loadRequest(opts: VerifyCliOptions, io: CliIO): { parsed: ParsedRequest; detail: Detail } {
  if (opts.requestFile !== null) {
    const parsed = parseVerificationRequest(readInput(io, opts.requestFile));
    return { parsed, detail: opts.detail ?? parsed.request.detail };
  }
  // Assemble the body as text so strict parsing (duplicate keys, big integers) sees the files' own bytes.
  const parts: string[] = [
    `"task_id":${JSON.stringify(opts.taskId ?? 'local')}`,
    `"expected_schema":${partJson(io, opts.schema as string, 'expected_schema', '--schema')}`,
    `"submitted_output":${partJson(io, opts.output as string, 'submitted_output', '--output')}`,
  ];
  if (opts.agentId !== undefined) parts.push(`"agent_id":${JSON.stringify(opts.agentId)}`);
  if (opts.rules !== undefined) parts.push(`"rules":${partJson(io, opts.rules, 'rules', '--rules')}`);
  if (opts.bounds !== undefined) parts.push(`"bounds":${partJson(io, opts.bounds, 'bounds', '--bounds')}`);
  if (opts.enforceRules) parts.push('"enforce_rules":true');
  if (opts.strict) parts.push('"strict_content_check":true');
  const parsed = parseVerificationRequest(`{${parts.join(',\n')}}`);
  return { parsed, detail: opts.detail ?? 'full' };
}

let sharedVerifier: Verifier | undefined;

/** One verifier (and schema engine) per process, shared by plain and signed runs. */
function verifier(): Verifier {
  sharedVerifier ??= createVerifier({ engine: createSchemaEngine() });
  return sharedVerifier;
}

/** Parsed request → response object (without signature blocks). */
export function runVerification(parsed: ParsedRequest, detail: Detail, now: Date = new Date()): VerificationResponse {
  const hashes = computeHashes(parsed);
  const verdict = verifier().verify(parsed, { schemaKey: hashes.schema_hash });
  return buildResponse(
    verdict,
    {
      verification_id: randomUUID(),
      ...hashes,
      verified_at: rfc3339Seconds(now),
      verifier_version: VERSION,
    },
    detail,
  );
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  let opts: VerifyCliOptions;
  try {
    opts = parseVerifyArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr(`aov verify: ${e.message}\n\n${VERIFY_USAGE}`);
    return 2;
  }
  if (opts.help) {
    io.stdout(VERIFY_USAGE);
    return 0;
  }
  try {
    const { parsed, detail } = loadRequest(opts, io);
    if (opts.sign) return signAndPrint(opts.sign, { ...parsed, request: { ...parsed.request, detail } }, io);
    const response = runVerification(parsed, detail);
    io.stdout(`${JSON.stringify(response, null, 2)}\n`);
    return response.result === 'pass' ? 0 : 1;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`aov verify: ${e.message}\n`);
      return 2;
    }
    if (isApiError(e)) {
      io.stdout(`${JSON.stringify(e.toBody(), null, 2)}\n`);
      io.stderr(`aov verify: invalid request (${e.fields.map((f) => f.field).join(', ') || e.code})\n`);
      return 2;
    }
    throw e;
  }
}

/** `--sign`: issue the receipt exactly as the service would and print its text. */
function signAndPrint(sign: NonNullable<VerifyCliOptions['sign']>, parsed: ParsedRequest, io: CliIO): number {
  let issuer;
  try {
    const keyRing = createKeyRing({ dir: path.join(sign.dataDir, 'keys') });
    keyRing.signer();
    const attestor = createAttestor({ keyRing, serviceName: sign.serviceName, baseUrl: sign.baseUrl });
    issuer = createReceiptIssuer({ verifier: verifier(), attestor, clock: () => new Date(), newId: randomUUID, verifierVersion: VERSION });
  } catch (e) {
    throw new UsageError(`cannot use the signing key: ${e instanceof Error ? e.message : String(e)}`);
  }
  const issued = issuer.issue(parsed);
  io.stdout(`${issued.text}\n`);
  return issued.response.result === 'pass' ? 0 : 1;
}
