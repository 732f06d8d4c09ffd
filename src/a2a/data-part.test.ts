/** @module The data part's own source text is found in A2A bodies, whatever else the envelope holds. */
import { describe, expect, it } from 'vitest';
import { dataPartSource } from './data-part.js';

const body = (parts: string, extra = '') => `{"jsonrpc":"2.0","id":1,"method":"SendMessage",${extra}"params":{"message":{"messageId":"m","role":"ROLE_USER","parts":${parts}}}}`;

describe('dataPartSource', () => {
  it('returns the exact text of the data value, duplicate keys and big numbers included', () => {
    const data = '{"task_id":"t","submitted_output":{"a":1,"a":2,"n":9007199254740993}}';
    expect(dataPartSource(body(`[{"data": ${data} ,"mediaType":"application/json"}]`))).toEqual({ ok: true, source: data, count: 1 });
  });

  it('finds the data part among other parts and counts them', () => {
    expect(dataPartSource(body('[{"text":"hi"},{"kind":"data","data":[1,{"x":"]}"}]}]'))).toEqual({ ok: true, source: '[1,{"x":"]}"}]', count: 1 });
    expect(dataPartSource(body('[{"data":1},{"data":2}]'))).toEqual({ ok: true, source: '1', count: 2 });
    expect(dataPartSource(body('[{"text":"no data"}]'))).toEqual({ ok: true, source: null, count: 0 });
    expect(dataPartSource('{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}')).toEqual({ ok: true, source: null, count: 0 });
    expect(dataPartSource('[1,2]')).toEqual({ ok: true, source: null, count: 0 });
  });

  it('skips deep nesting and escaped quotes elsewhere without recursion', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(dataPartSource(body('[{"data":"ok"}]', `"metadata":{"k":"\\"}","deep":${deep}},`))).toEqual({ ok: true, source: '"ok"', count: 1 });
  });

  it('refuses a body where a key on the path is written twice (the SDK and the verifier could read different values)', () => {
    expect(dataPartSource(`{"params":{"message":{"parts":[{"data":1}]}},"params":{}}`)).toMatchObject({ ok: false });
    expect(dataPartSource(`{"params":{"message":{"parts":[]},"message":{"parts":[{"data":1}]}}}`)).toMatchObject({ ok: false });
    expect(dataPartSource(body('[{"data":1,"data":2}]'))).toMatchObject({ ok: false, problem: expect.stringContaining("'data' appears twice") });
  });
});
