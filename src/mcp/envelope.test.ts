/** @module Unit tests of the strict JSON-RPC body parsing and duplicate-key hand-over. */
import { describe, expect, it } from 'vitest';
import { isApiError } from '../errors.js';
import type { ParsedRequest } from '../core/types.js';
import { applyDuplicateKeys, parseEnvelope } from './envelope.js';

const call = (id: number | string, args: string) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":"verify_schema","arguments":${args}}}`;

describe('parseEnvelope', () => {
  it('keeps duplicate keys found in the arguments, per request id, relative to the arguments', () => {
    const p = parseEnvelope(call(7, '{"task_id":"t","submitted_output":{"a":1,"a":2,"b":[{"c":1,"c":1}]}}'));
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(p.findings.get(7)).toEqual([
      { segments: ['submitted_output'], key: 'a' },
      { segments: ['submitted_output', 'b', 0], key: 'c' },
    ]);
    expect((p.value as any).params.arguments.submitted_output.a).toBe(2);
  });

  it('handles batches and ignores duplicates outside tools/call arguments', () => {
    const batch = `[${call('x', '{"k":1,"k":2}')},{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"a":1,"a":1}}]`;
    const p = parseEnvelope(batch);
    expect(p.ok && [...p.findings.entries()]).toEqual([['x', [{ segments: [], key: 'k' }]]]);
  });

  it('collects each call\'s arguments by id, leaving out ids used twice', () => {
    const p = parseEnvelope(`[${call(1, '{"a":1}')},${call(2, '{"b":2}')},${call(2, '{"c":3}')}]`);
    expect(p.ok && [...p.argumentValues.entries()]).toEqual([[1, { a: 1 }]]);
  });

  it('keeps __proto__ an own key', () => {
    const p = parseEnvelope(call(1, '{"submitted_output":{"__proto__":{"x":1}}}'));
    expect(p.ok).toBe(true);
    const out = p.ok ? (p.value as any).params.arguments.submitted_output : null;
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('refuses invalid JSON but lets value-level problems through to the coded validator', () => {
    expect(parseEnvelope('{"jsonrpc":').ok).toBe(false);
    expect(parseEnvelope('').ok).toBe(false);
    const lone = parseEnvelope(call(1, '{"task_id":"\\ud800"}'));
    expect(lone.ok && (lone.value as any).params.arguments.task_id).toBe('\ud800');
  });
});

describe('applyDuplicateKeys', () => {
  const parsed = { integrity: { duplicateKeys: [], unsafeIntegers: [] } } as unknown as ParsedRequest;

  it('turns duplicates inside submitted_output into integrity findings', () => {
    const out = applyDuplicateKeys(parsed, [{ segments: ['submitted_output', 'b', 0], key: 'c' }]);
    expect(out.integrity.duplicateKeys).toEqual([{ path: '$.b[0]', key: 'c' }]);
    expect(parsed.integrity.duplicateKeys).toEqual([]);
  });

  it('refuses duplicates elsewhere with invalid_request naming the field', () => {
    try {
      applyDuplicateKeys(parsed, [{ segments: ['rules', 0], key: 'type' }]);
      expect.unreachable();
    } catch (e) {
      expect(isApiError(e) && e.toBody()).toMatchObject({ code: 'invalid_request', fields: [{ field: 'rules[0].type' }] });
    }
  });
});
