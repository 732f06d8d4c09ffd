/**
 * @module The JSON-RPC body of `POST /mcp`, split into what the SDK needs and
 * what the verifier needs. The SDK gets the envelope as JSON.parse reads it
 * (method, id, tool name, `_meta`). The verifier gets each tools/call's
 * `params.arguments` as its own source text, which the pipeline parses strictly
 * exactly as REST parses a body: a key written twice inside `submitted_output`
 * fails `integrity:unique_keys`, whatever else the envelope holds (lone
 * surrogates, huge numbers or deep nesting elsewhere change nothing).
 */

import { JsonSourceScanner } from '../core/json-source.js';

/** The outcome of reading a body: the envelope value, and the arguments' source text by JSON-RPC id. */
export type EnvelopeParse =
  | {
      ok: true;
      value: unknown;
      /**
       * `params.arguments` source text of each tools/call by id: a string, undefined when
       * the call has no arguments, null when the id is used by more than one call (ambiguous).
       */
      argumentSources: Map<string | number, string | undefined | null>;
    }
  | { ok: false };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Finds the source text of `params.arguments` in each message of the envelope. */
class Scanner extends JsonSourceScanner {
  /**
   * In the object at pos, the source of the value at `path[level..]`, with the
   * last occurrence of a key winning (as in JSON.parse). Leaves pos after the object.
   */
  member(path: readonly string[], level: number): string | undefined {
    let found: string | undefined;
    this.members((key) => {
      if (key !== path[level]) return false;
      const start = this.pos;
      if (level === path.length - 1) {
        this.skipValue();
        found = this.text.slice(start, this.pos);
      } else if (this.text.charCodeAt(this.pos) === 0x7b) {
        found = this.member(path, level + 1);
      } else {
        this.skipValue();
        found = undefined;
      }
      return true;
    });
    return found;
  }
}

function toolCallId(message: unknown): string | number | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { id, method } = message as { id?: unknown; method?: unknown };
  if (method !== 'tools/call') return undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

const ARGUMENTS_PATH = ['params', 'arguments'] as const;

/** Decode (strict UTF-8) and read a `POST /mcp` body. Not JSON at all → `ok: false` (a JSON-RPC parse error). */
export function parseEnvelope(body: Uint8Array | string): EnvelopeParse {
  let text: string;
  try {
    text = typeof body === 'string' ? body : utf8.decode(body);
  } catch {
    return { ok: false };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false };
  }
  const messages = Array.isArray(value) ? value : [value];
  const scanner = new Scanner(text);
  scanner.ws();
  const sources: Array<string | undefined> = [];
  if (Array.isArray(value)) {
    scanner.elements(() => {
      if (scanner.peek() === 0x7b) sources.push(scanner.member(ARGUMENTS_PATH, 0));
      else {
        scanner.skipValue();
        sources.push(undefined);
      }
    });
  } else if (typeof value === 'object' && value !== null) {
    sources.push(scanner.member(ARGUMENTS_PATH, 0));
  }

  const argumentSources = new Map<string | number, string | undefined | null>();
  messages.forEach((message, i) => {
    const id = toolCallId(message);
    if (id === undefined) return;
    argumentSources.set(id, argumentSources.has(id) ? null : sources[i]);
  });
  return { ok: true, value, argumentSources };
}
