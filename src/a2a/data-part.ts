/**
 * @module Finds the source text of the verification request inside an A2A
 * JSON-RPC body: the value of `data` in the first part of `params.message.parts`
 * that has one. The SDK reads the envelope with JSON.parse, which keeps only the
 * last of two equal keys; the verifier must see the request's own bytes, so that
 * a key written twice inside `submitted_output` still fails
 * `integrity:unique_keys`, exactly as over REST.
 *
 * Only called on text JSON.parse accepted, so it only has to find where values
 * start and end. A key written twice on the path itself (two `params`,
 * `message`, `parts` or `data`) makes the body ambiguous and is refused, because
 * the SDK and this reader could otherwise pick different values.
 */

import { JsonSourceScanner } from '../core/json-source.js';

export type DataPartSource =
  /** `source` is the first part's `data` text (null when no part carries `data`); `count` how many parts carry it. */
  | { ok: true; source: string | null; count: number }
  | { ok: false; problem: string };

class Ambiguous extends Error {}

/** The `data` source text of the first data part of `params.message.parts` (text must be valid JSON). */
export function dataPartSource(text: string): DataPartSource {
  const r = new JsonSourceScanner(text);
  let source: string | null = null;
  let count = 0;
  const once = (seen: Set<string>, key: string, where: string): void => {
    if (seen.has(key)) throw new Ambiguous(`'${key}' appears twice in ${where}`);
    seen.add(key);
  };
  try {
    if (r.peek() !== 0x7b) return { ok: true, source: null, count: 0 };
    const top = new Set<string>();
    r.members((key) => {
      if (key !== 'params') return false;
      once(top, key, 'the request');
      if (r.peek() !== 0x7b) return false;
      const inParams = new Set<string>();
      r.members((k) => {
        if (k !== 'message') return false;
        once(inParams, k, 'params');
        if (r.peek() !== 0x7b) return false;
        const inMessage = new Set<string>();
        r.members((m) => {
          if (m !== 'parts') return false;
          once(inMessage, m, 'params.message');
          if (r.peek() !== 0x5b) return false;
          r.elements((i) => {
            if (r.peek() !== 0x7b) return r.skipValue();
            const inPart = new Set<string>();
            r.members((p) => {
              if (p !== 'data') return false;
              once(inPart, p, `params.message.parts[${i}]`);
              r.ws();
              const start = r.pos;
              r.skipValue();
              if (count++ === 0) source = text.slice(start, r.pos);
              return true;
            });
          });
          return true;
        });
        return true;
      });
      return true;
    });
  } catch (e) {
    if (e instanceof Ambiguous) return { ok: false, problem: e.message };
    throw e;
  }
  return { ok: true, source, count };
}
