/** @module Unit tests of reading the JSON-RPC body: the envelope value, and each call's arguments as their own source text. */
import { describe, expect, it } from 'vitest';
import { parseEnvelope } from './envelope.js';

const call = (id: number | string, args: string, extra = '') =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call"${extra},"params":{"name":"verify_schema","arguments":${args}}}`;

describe('parseEnvelope', () => {
  it('hands over the arguments exactly as written, duplicate keys included', () => {
    const args = '{"task_id":"t","submitted_output":{"a":1,"a":2,"b":[{"c":1,"c":1}]}}';
    const p = parseEnvelope(Buffer.from(call(7, args)));
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(p.argumentSources.get(7)).toBe(args);
  });

  it('is not disturbed by what the envelope holds outside the arguments', () => {
    const args = '{"approved": false, "amount": 5, "approved": true}';
    const deep = '['.repeat(600) + ']'.repeat(600);
    for (const extra of [',"x":"\\ud800"', ',"x":1e400', `,"x":${deep}`, ',"x":{"k":1,"k":2}']) {
      const p = parseEnvelope(Buffer.from(call(1, args, extra)));
      expect(p.ok && p.argumentSources.get(1)).toBe(args);
    }
  });

  it('takes the last of repeated params/arguments keys, as JSON.parse does', () => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1},"name":"x","arguments" : [ 2 , {"b":"}"} ] }}';
    const p = parseEnvelope(body);
    expect(p.ok && p.argumentSources.get(1)).toBe('[ 2 , {"b":"}"} ]');
    const noArgs = parseEnvelope('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1}},"params":{"name":"x"}}');
    expect(noArgs.ok && noArgs.argumentSources.get(1)).toBeUndefined();
  });

  it('reads batches by id and marks ids used twice as ambiguous', () => {
    const p = parseEnvelope(`[${call(1, '{"a":1}')}, ${call(2, '{"b":2}')},${call(2, '{"c":3}')},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`);
    expect(p.ok && [...p.argumentSources.entries()]).toEqual([
      [1, '{"a":1}'],
      [2, null],
    ]);
  });

  it('refuses invalid JSON and invalid UTF-8', () => {
    expect(parseEnvelope('{"jsonrpc":').ok).toBe(false);
    expect(parseEnvelope('').ok).toBe(false);
    expect(parseEnvelope(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])).ok).toBe(false);
  });
});
