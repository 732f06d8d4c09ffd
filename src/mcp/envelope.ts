/**
 * @module Parsing of the JSON-RPC body of `POST /mcp` with the core's strict
 * parser, so that MCP and REST judge the same output the same way: a key written
 * twice inside `submitted_output` must still fail `integrity:unique_keys` (SPEC
 * §2.2), although the JSON-RPC layer has long collapsed it to the last value by
 * the time the tool sees its arguments. The findings are kept per JSON-RPC
 * request id and applied to the parsed request by the tool handler.
 */
import { invalidRequest } from '../errors.js';
import type { ParsedRequest } from '../core/types.js';
import { requestField } from '../core/request.js';
import { formatSegments, parseStrictJson, StrictJsonError, type DuplicateKeyFinding } from '../core/strict-json.js';

/** Generous: the envelope adds three levels; the service enforces the configured depth on the arguments. */
const ENVELOPE_MAX_DEPTH = 512;

/** Duplicate keys found inside `params.arguments` of each tools/call, by JSON-RPC id; segments relative to the arguments. */
export type ArgumentFindings = Map<string | number, DuplicateKeyFinding[]>;

/**
 * The `params.arguments` of each tools/call exactly as strictly parsed, by JSON-RPC id.
 * The SDK re-parses arguments with a record schema that rebuilds the object and loses
 * an own `__proto__` key; the tool handler reads these instead. Ids used twice are left out.
 */
export type ArgumentValues = Map<string | number, unknown>;

export type EnvelopeParse =
  | { ok: true; value: unknown; findings: ArgumentFindings; argumentValues: ArgumentValues }
  | { ok: false };

function collectArguments(value: unknown): ArgumentValues {
  const out: ArgumentValues = new Map();
  const seen = new Set<string | number>();
  for (const message of Array.isArray(value) ? value : [value]) {
    const id = requestId(message);
    if (id === undefined) continue;
    if (seen.has(id)) {
      out.delete(id);
      continue;
    }
    seen.add(id);
    const params = (message as { params?: unknown }).params;
    if (typeof params === 'object' && params !== null && Object.prototype.hasOwnProperty.call(params, 'arguments')) {
      out.set(id, (params as { arguments: unknown }).arguments);
    }
  }
  return out;
}

function requestId(message: unknown): string | number | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { id, method } = message as { id?: unknown; method?: unknown };
  if (method !== 'tools/call') return undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

export function parseEnvelope(text: string): EnvelopeParse {
  let strict;
  try {
    strict = parseStrictJson(text, { maxDepth: ENVELOPE_MAX_DEPTH });
  } catch (e) {
    if (!(e instanceof StrictJsonError) || e.kind === 'invalid_json') return { ok: false };
    // Lone surrogates, non-finite numbers, extreme depth: the service's value checks report
    // those as coded 422s with the field, which beats a JSON-RPC parse error.
    try {
      const value = JSON.parse(text) as unknown;
      return { ok: true, value, findings: new Map(), argumentValues: collectArguments(value) };
    } catch {
      return { ok: false };
    }
  }
  const findings: ArgumentFindings = new Map();
  const batch = Array.isArray(strict.value);
  for (const d of strict.duplicateKeys) {
    const s = d.segments;
    const offset = batch ? 1 : 0;
    if (s[offset] !== 'params' || s[offset + 1] !== 'arguments') continue;
    const message = batch ? (strict.value as unknown[])[s[0] as number] : strict.value;
    const id = requestId(message);
    if (id === undefined) continue;
    const list = findings.get(id) ?? [];
    list.push({ segments: s.slice(offset + 2), key: d.key });
    findings.set(id, list);
  }
  return { ok: true, value: strict.value, findings, argumentValues: collectArguments(strict.value) };
}

/**
 * Apply what the JSON-RPC layer lost: inside `submitted_output` a duplicate key is an
 * integrity finding; elsewhere in the arguments it is a request error, as over REST.
 */
export function applyDuplicateKeys(parsed: ParsedRequest, duplicates: readonly DuplicateKeyFinding[]): ParsedRequest {
  if (duplicates.length === 0) return parsed;
  const outside = duplicates.filter((d) => d.segments[0] !== 'submitted_output');
  if (outside.length > 0) {
    throw invalidRequest(
      outside.map((d) => ({
        field: requestField([...d.segments, d.key]),
        problem: 'appears more than once in the same object',
        fix: 'Send each key once per object.',
      })),
    );
  }
  const inside = duplicates.map((d) => ({ path: formatSegments(d.segments.slice(1)), key: d.key }));
  return { ...parsed, integrity: { ...parsed.integrity, duplicateKeys: [...parsed.integrity.duplicateKeys, ...inside] } };
}
