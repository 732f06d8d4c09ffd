/**
 * @module `aov verify`: verify outputs offline, for people and CI pipelines
 * (docs/protocol.md#command-line). Either full request bodies
 * (`aov verify a.request.json b.request.json`) or the parts as files
 * (`--schema S.json --output O.json [--output P.json | --output DIR] [--rules R.json] ...`).
 * Prints the response JSON (or with `--format text` one line per verdict);
 * exit 0 when every verdict passes, 1 when any fails, 2 for an invalid request
 * or a usage error.
 *
 * Built in steps so other flags can be layered on: argv → options
 * (parseVerifyArgs), options → inputs (one per verdict), input → parsed request
 * (loadRequest), parsed request → response (runVerification or the issuer).
 */
import { newVerificationId } from '../receipts/verification-id.js';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { CliIO } from './io.js';
import { configOrExit, lineColumn, optionsOrExit, parseCommandArgs, UsageError } from './args.js';
import { loadConfig, type Config } from '../config.js';
import { invalidRequest, isApiError, type ErrorBody } from '../errors.js';
import type { Detail, ParsedRequest } from '../core/types.js';
import { parseVerificationRequest } from '../core/request.js';
import { parseStrictJson, StrictJsonError } from '../core/strict-json.js';
import { schemaPointerField } from '../core/schema-problem.js';
import { warningText } from '../core/schema/unknown.js';
import { buildResponse, type VerificationResponse } from '../core/response.js';
import { computeHashes } from '../receipts/hashes.js';
import { rfc3339Seconds } from '../receipts/time.js';
import { createIssuer, type Issuer } from '../service/issuer.js';
import { VERSION } from '../version.js';

export { UsageError } from './args.js';

const VERIFY_USAGE = `usage: aov verify REQUEST.json [REQUEST.json | DIR ...]
       aov verify --schema S.json --output O.json [--output O2.json | --output DIR ...] [options]

Verify agent outputs offline. '-' reads standard input; a directory stands for every
*.json file in it. One verdict per request file or per output file.
Exit code: 0 every verdict passes, 1 any fails, 2 invalid request or usage error.

options:
  --schema FILE       the JSON Schema (expected_schema)
  --output FILE|DIR   an output to check (submitted_output); repeat for several
  --rules FILE        a JSON array of rules
  --bounds FILE       a JSON object of bounds, path -> {min, max, if_present}
  --enforce-rules     failed rules and bounds fail the result (otherwise they are warnings)
  --strict            add the strict content checks
  --strict-schema     exit 2 when the schema has an unknown keyword or format (a typo checks nothing)
  --detail compact    print the compact response
  --format json|text  json (default): the response, or {summary, results} for several inputs;
                      text: one line per verdict (result, file, check counts, blocking checks)
                      and a summary line on standard error
  --task-id ID        task_id (default 'local')
  --agent-id ID       agent_id (default none)
  --sign              sign each response like the service does (key ring in DATA_DIR/keys;
                      a new key is created, with a notice, when there is none)
  --data-dir DIR      with --sign: data directory holding keys/ (default DATA_DIR or ./data)
  --base-url URL      with --sign: public base URL in the verify block (default PUBLIC_BASE_URL)
  --service-name N    with --sign: service name in the verify block (default SERVICE_NAME)
  -h, --help          show this help
`;

const OPTIONS = {
  schema: { type: 'string' },
  output: { type: 'string', multiple: true },
  rules: { type: 'string' },
  bounds: { type: 'string' },
  'enforce-rules': { type: 'boolean' },
  strict: { type: 'boolean' },
  'strict-schema': { type: 'boolean' },
  detail: { type: 'string' },
  format: { type: 'string' },
  'task-id': { type: 'string' },
  'agent-id': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  sign: { type: 'boolean' },
  'data-dir': { type: 'string' },
  'base-url': { type: 'string' },
  'service-name': { type: 'string' },
} as const;

export type OutputFormat = 'json' | 'text';

export interface VerifyCliOptions {
  /** Full request body files (or directories of them); empty when the parts are given as flags. */
  requestFiles: string[];
  schema?: string;
  /** Output files (or directories of them) checked against `schema`. */
  outputs: string[];
  rules?: string;
  bounds?: string;
  enforceRules: boolean;
  strict: boolean;
  /** Unknown schema keywords and formats are a usage error (exit 2) instead of warnings. */
  strictSchema: boolean;
  detail?: Detail;
  format: OutputFormat;
  taskId?: string;
  agentId?: string;
  help: boolean;
  /** Sign each response with the key ring of the configured data directory. */
  sign: boolean;
  /** Overrides of the server configuration (DATA_DIR, PUBLIC_BASE_URL, SERVICE_NAME). */
  dataDir?: string;
  baseUrl?: string;
  serviceName?: string;
}

/** argv → options. Throws UsageError. */
function parseVerifyArgs(argv: string[]): VerifyCliOptions {
  const { values, positionals } = parseCommandArgs(argv, OPTIONS);
  const opts: VerifyCliOptions = {
    requestFiles: positionals,
    schema: values.schema,
    outputs: values.output ?? [],
    rules: values.rules,
    bounds: values.bounds,
    enforceRules: values['enforce-rules'] ?? false,
    strict: values.strict ?? false,
    strictSchema: values['strict-schema'] ?? false,
    format: 'json',
    taskId: values['task-id'],
    agentId: values['agent-id'],
    help: values.help ?? false,
    sign: values.sign ?? false,
    dataDir: values['data-dir'],
    baseUrl: values['base-url'],
    serviceName: values['service-name'],
  };
  if (opts.help) return opts;
  if (!opts.sign && (opts.dataDir ?? opts.baseUrl ?? opts.serviceName) !== undefined) {
    throw new UsageError('--data-dir, --base-url and --service-name go with --sign');
  }
  if (values.detail !== undefined) {
    if (values.detail !== 'full' && values.detail !== 'compact') throw new UsageError("--detail must be 'full' or 'compact'");
    opts.detail = values.detail;
  }
  if (values.format !== undefined) {
    if (values.format !== 'json' && values.format !== 'text') throw new UsageError("--format must be 'json' or 'text'");
    opts.format = values.format;
  }
  const partFlags = opts.schema ?? opts.rules ?? opts.bounds ?? opts.taskId ?? opts.agentId;
  if (opts.requestFiles.length > 0) {
    if (partFlags !== undefined || opts.outputs.length > 0 || opts.enforceRules || opts.strict) {
      throw new UsageError('give either request files or --schema/--output and their options, not both');
    }
  } else if (opts.schema === undefined || opts.outputs.length === 0) {
    throw new UsageError('give a request file, or both --schema and --output');
  }
  const stdin = [...opts.requestFiles, ...opts.outputs, opts.schema, opts.rules, opts.bounds].filter((f) => f === '-').length;
  if (stdin > 1) throw new UsageError('only one file can be read from standard input');
  return opts;
}

/** Files named on the command line, with each directory replaced by its *.json files (sorted). */
function expandInputs(names: string[]): string[] {
  const out: string[] = [];
  for (const name of names) {
    let isDir = false;
    try {
      isDir = name !== '-' && statSync(name).isDirectory();
    } catch {
      // Not there (or not statable): reading it reports the problem with the file's name.
    }
    if (!isDir) {
      out.push(name);
      continue;
    }
    const files = readdirSync(name, { withFileTypes: true })
      .filter((d) => d.isFile() && d.name.endsWith('.json'))
      .map((d) => path.join(name, d.name))
      .sort();
    if (files.length === 0) throw new UsageError(`the directory '${name}' holds no *.json file`);
    out.push(...files);
  }
  return out;
}

export function readInput(io: CliIO, file: string): string {
  try {
    return io.readFile(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${file === '-' ? 'standard input' : `'${file}'`}${code ? ` (${code})` : ''}`);
  }
}

function displayName(file: string): string {
  return file === '-' ? 'standard input' : file;
}

/**
 * Check that a file holds well-formed JSON; a syntax error becomes a 422 naming
 * `field` with the line and column in that file, where an editor can jump to it.
 * Other strict-parse problems (duplicate keys, big integers, lone surrogates) are
 * left to the full request parse, which names their location in the value.
 */
function checkSyntax(text: string, file: string, field: string, fix: string, maxDepth: number): void {
  try {
    parseStrictJson(text, { maxDepth });
  } catch (e) {
    if (!(e instanceof StrictJsonError) || e.kind !== 'invalid_json') return;
    const { line, column } = lineColumn(text, e.offset);
    const what = e.message.replace(/ at offset \d+$/, '');
    throw invalidRequest([{ field, problem: `is not valid JSON (${what} at line ${line}, column ${column} of ${displayName(file)})`, fix }]);
  }
}

/** One request file → parsed request, exactly as the service would parse it. Throws ApiError or UsageError. */
export function loadRequestFile(file: string, io: CliIO, maxDepth: number): ParsedRequest {
  return parseRequestText(readInput(io, file), file, maxDepth);
}

/** A request file's text → parsed request, syntax errors located in `file`. Throws ApiError. */
export function parseRequestText(text: string, file: string, maxDepth: number): ParsedRequest {
  checkSyntax(text, file, 'body', 'Make the request file a single well-formed JSON object (RFC 8259), UTF-8 encoded.', maxDepth);
  return parseVerificationRequest(text, { maxDepth });
}

/** The part files (read once) with one output file → parsed request. Throws ApiError or UsageError. */
function loadPartsRequest(opts: VerifyCliOptions, outputFile: string, io: CliIO, maxDepth: number, cache = new Map<string, string>()): ParsedRequest {
  const part = (file: string, field: string, flag: string): string => {
    let text = cache.get(file);
    if (text === undefined) {
      text = readInput(io, file);
      checkSyntax(text, file, field, `Make the ${flag} file one well-formed JSON value.`, maxDepth);
      // The output changes per input; the schema, rules and bounds are read once.
      if (flag !== '--output') cache.set(file, text);
    }
    return text;
  };
  // Assemble the body as text so strict parsing (duplicate keys, big integers) sees the files' own bytes;
  // each file was checked on its own, so its content can only ever become the value of its own field.
  const parts: string[] = [
    `"task_id":${JSON.stringify(opts.taskId ?? 'local')}`,
    `"expected_schema":${part(opts.schema as string, 'expected_schema', '--schema')}`,
    `"submitted_output":${part(outputFile, 'submitted_output', '--output')}`,
  ];
  if (opts.agentId !== undefined) parts.push(`"agent_id":${JSON.stringify(opts.agentId)}`);
  if (opts.rules !== undefined) parts.push(`"rules":${part(opts.rules, 'rules', '--rules')}`);
  if (opts.bounds !== undefined) parts.push(`"bounds":${part(opts.bounds, 'bounds', '--bounds')}`);
  if (opts.enforceRules) parts.push('"enforce_rules":true');
  if (opts.strict) parts.push('"strict_content_check":true');
  return parseVerificationRequest(`{${parts.join(',\n')}}`, { maxDepth });
}

/** Parsed request → response object (without signature blocks). */
export function runVerification(issuer: Issuer, parsed: ParsedRequest, detail: Detail, now: Date = new Date()): VerificationResponse {
  const hashes = computeHashes(parsed);
  const verdict = issuer.verifier.evaluate(parsed, { schemaKey: hashes.schema_hash });
  return buildResponse(verdict, { verification_id: newVerificationId(now.getTime()), ...hashes, verified_at: rfc3339Seconds(now), verifier_version: VERSION }, detail);
}

/** The verdict (or error) of one input. */
interface Outcome {
  file: string;
  /** 0 pass, 1 fail, 2 invalid request. */
  code: 0 | 1 | 2;
  response?: VerificationResponse;
  /** The exact signed text, with --sign. */
  text?: string;
  error?: ErrorBody;
}

interface Score {
  passed: number;
  total: number;
}

/** One line per verdict: result, file, counts, blocking checks (and warnings, which must not hide). */
function textLine(o: Outcome): string {
  if (o.error) {
    const fields = o.error.fields.map((f) => `${f.field} ${f.problem}`).join('; ');
    return `error ${o.file}: ${o.error.code}${fields ? `: ${fields}` : `: ${o.error.message}`}`;
  }
  const r = o.response as VerificationResponse & {
    result: string;
    summary: { blocking_checks: string[] };
    schema_compliance?: Score;
    integrity_checks?: Score;
    overall?: Score;
    flags?: Array<{ severity: string }>;
  };
  const counts = (['schema_compliance', 'integrity_checks', 'overall'] as const)
    .filter((k) => r[k] !== undefined)
    .map((k) => `${k === 'schema_compliance' ? 'schema' : k === 'integrity_checks' ? 'integrity' : 'overall'} ${r[k]?.passed}/${r[k]?.total}`);
  const parts = [`${r.result.padEnd(4)} ${o.file}`, ...counts];
  if (r.summary.blocking_checks.length > 0) parts.push(`blocking ${r.summary.blocking_checks.join(',')}`);
  const warnings = (r.summary as { warnings?: number }).warnings ?? r.flags?.filter((f) => f.severity === 'warning').length ?? 0;
  if (warnings > 0) parts.push(`warnings ${warnings}`);
  return parts.join('  ');
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const opts = optionsOrExit(io, 'verify', VERIFY_USAGE, () => parseVerifyArgs(argv));
  if (typeof opts === 'number') return opts;

  // The same configuration as the server: DATA_DIR, PUBLIC_BASE_URL, SERVICE_NAME, MAX_JSON_DEPTH, LIST_CAP.
  const config = configOrExit(io, 'verify', () => {
    const loaded = loadConfig(undefined, { 'data-dir': opts.dataDir, 'public-base-url': opts.baseUrl });
    return opts.serviceName === undefined ? loaded : { ...loaded, serviceName: opts.serviceName };
  });
  if (typeof config === 'number') return config;

  try {
    const byRequest = opts.requestFiles.length > 0;
    const files = expandInputs(byRequest ? opts.requestFiles : opts.outputs);
    const issuer = createIssuer(config);
    if (opts.sign) prepareSigningKey(issuer, config, io);
    const parts = new Map<string, string>();
    const outcomes: Outcome[] = [];
    for (const file of files) {
      try {
        const parsed = byRequest ? loadRequestFile(file, io, config.maxJsonDepth) : loadPartsRequest(opts, file, io, config.maxJsonDepth, parts);
        const detail = opts.detail ?? parsed.request.detail;
        if (opts.strictSchema) {
          // a schema typo checks nothing: with --strict-schema it is an error, not a warning
          const warnings = issuer.verifier.compile(parsed.request.expected_schema).warnings;
          if (warnings.length > 0) {
            for (const w of warnings) io.stderr(`aov verify: --strict-schema: ${schemaPointerField(w.schemaPath)}: ${warningText(w)}\n`);
            return 2;
          }
        }
        if (opts.sign) {
          const issued = issuer.issuer.issue({ ...parsed, request: { ...parsed.request, detail } });
          outcomes.push({ file: displayName(file), code: issued.response.result === 'pass' ? 0 : 1, response: issued.response, text: issued.text });
        } else {
          const response = runVerification(issuer, parsed, detail);
          outcomes.push({ file: displayName(file), code: response.result === 'pass' ? 0 : 1, response });
        }
      } catch (e) {
        if (!isApiError(e)) throw e;
        outcomes.push({ file: displayName(file), code: 2, error: e.toBody() });
      }
    }
    return report(outcomes, opts.format, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`aov verify: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

/** With --sign: load the active key, creating the first one (and saying so) when the data directory has none. */
function prepareSigningKey(issuer: Issuer, config: Config, io: CliIO): void {
  const dir = path.join(config.dataDir, 'keys');
  try {
    const existed = issuer.keyRing.list().length > 0;
    const key = issuer.keyRing.signer();
    if (!existed) {
      io.stderr(
        `aov verify: created a new signing key ${key.keyVersion} in ${dir}; receipts signed with it verify only against this key ` +
          `('aov keys list' prints it). Use --data-dir or DATA_DIR to sign with your service's keys.\n`,
      );
    }
  } catch (e) {
    throw new UsageError(`cannot use the signing key in ${dir}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function report(outcomes: Outcome[], format: OutputFormat, io: CliIO): number {
  const code = Math.max(0, ...outcomes.map((o) => o.code));
  const pass = outcomes.filter((o) => o.code === 0).length;
  const fail = outcomes.filter((o) => o.code === 1).length;
  const invalid = outcomes.filter((o) => o.code === 2).length;

  if (format === 'text') {
    io.stdout(outcomes.map((o) => `${textLine(o)}\n`).join(''));
    io.stderr(`aov verify: ${outcomes.length} verified: ${pass} pass, ${fail} fail${invalid ? `, ${invalid} invalid` : ''}\n`);
    return code;
  }
  if (outcomes.length === 1) {
    const [o] = outcomes;
    if (o.error) {
      io.stdout(`${JSON.stringify(o.error, null, 2)}\n`);
      io.stderr(`aov verify: invalid request (${o.error.fields.map((f) => f.field).join(', ') || o.error.code})\n`);
    } else {
      // A signed receipt is printed as its exact text: those bytes are what was signed and what the service would send.
      io.stdout(o.text !== undefined ? `${o.text}\n` : `${JSON.stringify(o.response, null, 2)}\n`);
    }
    return code;
  }
  const results = outcomes.map((o) => (o.error ? { file: o.file, error: o.error } : { file: o.file, response: o.response }));
  io.stdout(`${JSON.stringify({ summary: { verified: outcomes.length, pass, fail, invalid }, results }, null, 2)}\n`);
  io.stderr(`aov verify: ${outcomes.length} verified: ${pass} pass, ${fail} fail${invalid ? `, ${invalid} invalid` : ''}\n`);
  return code;
}
