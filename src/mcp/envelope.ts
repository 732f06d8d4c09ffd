/**
 * @module The JSON-RPC body of `POST /mcp`, split into what the SDK needs and
 * what the verifier needs. The SDK gets the envelope as JSON.parse reads it
 * (method, id, tool name, `_meta`). The verifier gets each tools/call's
 * `params.arguments` as its own source text, which the pipeline parses strictly
 * exactly as REST parses a body: a key written twice inside `submitted_output`
 * fails `integrity:unique_keys`, whatever else the envelope holds (lone
 * surrogates, huge numbers or deep nesting elsewhere change nothing).
 */

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

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/**
 * A scanner over text that is already known to be valid JSON (JSON.parse accepted
 * it): it only finds where values start and end, iteratively, so no nesting depth
 * can overflow it.
 */
class Scanner {
  pos = 0;
  constructor(readonly text: string) {}

  ws(): void {
    while (this.pos < this.text.length && isSpace(this.text.charCodeAt(this.pos))) this.pos++;
  }

  /** Skip a string token; pos must be on its opening quote. */
  skipString(): void {
    const t = this.text;
    let i = this.pos + 1;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x5c) i += 2;
      else if (c === 0x22) break;
      else i++;
    }
    this.pos = i + 1;
  }

  /** Read a string token's value (keys on the path are short). */
  readString(): string {
    const start = this.pos;
    this.skipString();
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  /** Skip any value. */
  skipValue(): void {
    const t = this.text;
    const c = t.charCodeAt(this.pos);
    if (c === 0x22) return this.skipString();
    if (c !== 0x7b && c !== 0x5b) {
      while (this.pos < t.length) {
        const d = t.charCodeAt(this.pos);
        if (d === 0x2c || d === 0x7d || d === 0x5d || isSpace(d)) break;
        this.pos++;
      }
      return;
    }
    let depth = 0;
    while (this.pos < t.length) {
      const d = t.charCodeAt(this.pos);
      if (d === 0x22) {
        this.skipString();
        continue;
      }
      this.pos++;
      if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return;
    }
  }

  /**
   * In the object at pos, the source of the value at `path[level..]`, with the
   * last occurrence of a key winning (as in JSON.parse). Leaves pos after the object.
   */
  member(path: readonly string[], level: number): string | undefined {
    let found: string | undefined;
    this.pos++; // {
    this.ws();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return undefined;
    }
    for (;;) {
      this.ws();
      const key = this.readString();
      this.ws();
      this.pos++; // :
      this.ws();
      const start = this.pos;
      if (key === path[level]) {
        if (level === path.length - 1) {
          this.skipValue();
          found = this.text.slice(start, this.pos);
        } else if (this.text.charCodeAt(this.pos) === 0x7b) {
          found = this.member(path, level + 1);
        } else {
          this.skipValue();
          found = undefined;
        }
      } else {
        this.skipValue();
      }
      this.ws();
      if (this.text.charCodeAt(this.pos++) === 0x7d) return found;
    }
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
    scanner.pos++; // [
    for (let i = 0; i < value.length; i++) {
      scanner.ws();
      if (scanner.text.charCodeAt(scanner.pos) === 0x7b) sources.push(scanner.member(ARGUMENTS_PATH, 0));
      else {
        scanner.skipValue();
        sources.push(undefined);
      }
      scanner.ws();
      scanner.pos++; // , or ]
    }
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
