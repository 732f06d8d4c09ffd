/**
 * @module `aov repair REQUEST.json`: verify a request offline, apply the
 * repairs its verdict carries (docs/repair.md), and verify the repaired output
 * again with the same core. Determined repairs only, unless `--apply candidates`
 * also takes the first option of each candidate. Prints the repaired output and
 * both verdicts (text, or one JSON object with `--json`); exit 0 only when the
 * repaired output passes, 1 when it still fails, 2 for an invalid request or a
 * usage error.
 */
import { writeFileSync } from 'node:fs';
import type { CliIO } from './io.js';
import { configOrExit, optionsOrExit, parseCommandArgs, UsageError } from './args.js';
import { loadConfig } from '../config.js';
import { isApiError } from '../errors.js';
import { parseVerificationRequest } from '../core/request.js';
import type { VerificationResponse } from '../core/response.js';
import { createIssuer } from '../service/issuer.js';
import { applyRepairs, RepairError, type RepairRecord, type RepairResult } from '../repair/apply-repairs.js';
import { parseRequestText, readInput, runVerification } from './verify.js';

const REPAIR_USAGE = `usage: aov repair REQUEST.json [options]

Verify a request offline, apply the repairs its verdict carries (JSON Patch against
submitted_output), and verify the repaired output again. '-' reads standard input.
Exit code: 0 the repaired output passes, 1 it still fails, 2 invalid request or usage error.

options:
  --apply determined|candidates
                      determined (default): only the repairs that are the one fix of their check;
                      candidates: also the first option of each candidate repair (several fixes
                      were possible: check the result)
  --json              print {before, repairs, request, after} as one JSON object
  --write FILE        write the repaired request to FILE (for 'aov verify' or the service)
  -h, --help          show this help
`;

const OPTIONS = {
  apply: { type: 'string' },
  json: { type: 'boolean' },
  write: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

interface RepairCliOptions {
  file: string;
  candidates: boolean;
  json: boolean;
  write?: string;
  help: boolean;
}

function parseRepairArgs(argv: string[]): RepairCliOptions {
  const { values, positionals } = parseCommandArgs(argv, OPTIONS);
  if (values.help) return { file: '', candidates: false, json: false, help: true };
  if (positionals.length !== 1) throw new UsageError('give exactly one request file');
  const apply = values.apply ?? 'determined';
  if (apply !== 'determined' && apply !== 'candidates') throw new UsageError("--apply must be 'determined' or 'candidates'");
  return { file: positionals[0], candidates: apply === 'candidates', json: values.json ?? false, write: values.write, help: false };
}

type Shown = VerificationResponse & { result: 'pass' | 'fail'; summary: { blocking_checks: string[] }; hints?: Array<{ check: string; path: string; expected: string; found: string }> };

function verdictLine(label: string, r: Shown): string {
  const blocking = r.summary.blocking_checks.length > 0 ? `  blocking ${r.summary.blocking_checks.join(',')}` : '';
  return `${label.padEnd(8)}${r.result}${blocking}\n`;
}

function recordLine(r: RepairRecord): string {
  const why =
    r.reason === undefined
      ? 'applied '
      : r.reason === 'candidate'
        ? 'skipped (candidate; --apply candidates takes its first option)'
        : r.reason === 'duplicate'
          ? 'skipped (same patch as an earlier repair)'
          : `skipped (does not apply: ${r.detail ?? ''})`;
  return `  ${why} ${r.check} at '${r.path}'${r.note ? `: ${r.note}` : ''}\n`;
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const opts = optionsOrExit(io, 'repair', REPAIR_USAGE, () => parseRepairArgs(argv));
  if (typeof opts === 'number') return opts;
  // The server's configuration: MAX_JSON_DEPTH, LIST_CAP, and BODY_LIMIT_BYTES, which no repaired request may exceed.
  const config = configOrExit(io, 'repair', () => loadConfig());
  if (typeof config === 'number') return config;

  const issuer = createIssuer(config);
  let before: Shown;
  let raw: { submitted_output: unknown };
  try {
    const text = readInput(io, opts.file);
    const parsed = parseRequestText(text, opts.file, config.maxJsonDepth);
    // Repairs need the hints, which only the full form carries.
    before = runVerification(issuer, parsed, 'full') as Shown;
    // Patched as the caller wrote it (their detail and options kept), so the repaired file reads like the original.
    raw = JSON.parse(text) as { submitted_output: unknown };
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`aov repair: ${e.message}\n`);
      return 2;
    }
    if (!isApiError(e)) throw e;
    const body = e.toBody();
    io.stdout(`${JSON.stringify(body, null, 2)}\n`);
    io.stderr(`aov repair: invalid request (${body.fields.map((f) => f.field).join(', ') || body.code})\n`);
    return 2;
  }

  let repaired: RepairResult<typeof raw> | undefined;
  let after: Shown | undefined;
  let failure: string | undefined;
  if (before.result === 'fail') {
    try {
      repaired = applyRepairs(raw, before, { candidates: opts.candidates, maxBodyBytes: config.bodyLimitBytes });
      if (repaired.applied.length > 0) {
        after = runVerification(issuer, parseVerificationRequest(JSON.stringify(repaired.request), { maxDepth: config.maxJsonDepth }), 'full') as Shown;
      } else {
        failure = 'no repair applies: fix the output by hand (see the hints) or regenerate it';
      }
    } catch (e) {
      if (e instanceof RepairError) failure = e.message;
      else if (isApiError(e)) failure = `the repaired request is invalid: ${e.message}`;
      else throw e;
    }
  }
  const final = after ?? before;
  const request = repaired?.request ?? raw;

  if (opts.write !== undefined && after !== undefined) {
    try {
      writeFileSync(opts.write, `${JSON.stringify(request, null, 2)}\n`);
    } catch (e) {
      io.stderr(`aov repair: cannot write '${opts.write}' (${(e as NodeJS.ErrnoException).code ?? String(e)})\n`);
      return 2;
    }
  }

  if (opts.json) {
    const out = {
      before,
      repairs: { applied: repaired?.applied ?? [], skipped: repaired?.skipped ?? [], hints_omitted: repaired?.hintsOmitted ?? 0 },
      request,
      after: after ?? null,
      ...(failure !== undefined ? { error: failure } : {}),
    };
    io.stdout(`${JSON.stringify(out, null, 2)}\n`);
  } else {
    let shown = verdictLine('before', before);
    if (before.result === 'pass') shown += 'the output already passes: nothing to repair\n';
    if (repaired) {
      shown += `repairs ${repaired.applied.length} applied, ${repaired.skipped.length} skipped\n`;
      for (const r of [...repaired.applied, ...repaired.skipped]) shown += recordLine(r);
      if (repaired.hintsOmitted > 0) shown += `  (${repaired.hintsOmitted} hints were cut by the list cap; run again to see their repairs)\n`;
    }
    if (after) {
      shown += verdictLine('after', after);
      for (const h of after.hints ?? []) shown += `  hint ${h.check} at '${h.path}': expected ${h.expected}, found ${h.found}\n`;
    }
    shown += `${after ? 'repaired output' : 'output (unchanged)'}:\n${JSON.stringify(request.submitted_output, null, 2)}\n`;
    io.stdout(shown);
  }
  if (failure !== undefined) io.stderr(`aov repair: ${failure}\n`);
  return final.result === 'pass' ? 0 : 1;
}
