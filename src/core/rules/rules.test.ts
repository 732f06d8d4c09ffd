import { describe, it, expect } from 'vitest';
import type { Json, Rule } from '../types.js';
import { RULE_EVALUATORS, ruleCheckId } from './index.js';
import { formatNumber } from './common.js';

function rule(r: Partial<Rule> & Pick<Rule, 'type' | 'field'>): Rule {
  return {
    equals_field: null,
    equals: null,
    other_field: null,
    value: null,
    in_field: null,
    values: null,
    tolerance: 1e-9,
    if_present: false,
    ...r,
  };
}
const run = (r: Rule, out: Json) => RULE_EVALUATORS[r.type](r, out);

const invoice: Json = {
  line_items: [
    { sku: 'A', qty: 3, line_total: 87.0, min: 1, max: 5 },
    { sku: 'B', qty: 1, line_total: 42.5, min: 2, max: 5 },
  ],
  total: 135,
  paid: 129.5,
  cap: 100,
};

describe('sum_equals', () => {
  it('passes when the values sum to equals_field or equals', () => {
    expect(run(rule({ type: 'sum_equals', field: 'line_items[].line_total', equals_field: 'paid' }), invoice)).toEqual([]);
    expect(run(rule({ type: 'sum_equals', field: 'line_items[].line_total', equals: 129.5 }), invoice)).toEqual([]);
    // float noise stays within the default tolerance
    expect(run(rule({ type: 'sum_equals', field: 'x[]', equals: 0.3 }), { x: [0.1, 0.2] })).toEqual([]);
  });
  it('fails with the sum and the expected reference', () => {
    const f = run(rule({ type: 'sum_equals', field: 'line_items[].line_total', equals_field: 'total' }), invoice);
    expect(f).toEqual([
      {
        path: '$.line_items[].line_total',
        expected: 'sum equals total (135)',
        found: 'sum 129.5',
        message: 'values sum to 129.5, expected total (135)',
        repair: {
          certainty: 'candidate',
          options: [
            { patch: [{ op: 'replace', path: '/total', value: 129.5 }], note: 'Set $.total to the sum of the values, 129.5.' },
            { patch: [{ op: 'replace', path: '/line_items/0/line_total', value: 92.5 }], note: 'Set $.line_items[0].line_total to 92.5, if it is the one wrong value.' },
            { patch: [{ op: 'replace', path: '/line_items/1/line_total', value: 48 }], note: 'Set $.line_items[1].line_total to 48, if it is the one wrong value.' },
          ],
          note: 'Which value is wrong cannot be known from the data: choose the fix that matches the source.',
        },
      },
    ]);
    expect(run(rule({ type: 'sum_equals', field: 'line_items[].qty', equals: 5 }), invoice)[0].found).toBe('sum 4');
  });
  it('applies an absolute tolerance, inclusive at the edge', () => {
    const r = (tolerance: number) => rule({ type: 'sum_equals', field: 'x[]', equals: 10.5, tolerance });
    expect(run(r(0.5), { x: [4, 6] })).toEqual([]);
    expect(run(r(0.25), { x: [4, 6] })).toHaveLength(1);
    expect(run(r(0.25), { x: [4, 6] })[0].expected).toBe('sum equals 10.5 within 0.25');
    expect(run(r(0), { x: [4, 6.5] })).toEqual([]);
    expect(run(rule({ type: 'sum_equals', field: 'x[]', equals: 1, tolerance: 0 }), { x: [0.5, 0.5000001] })).toHaveLength(1);
  });
  it('fails "field missing" unless if_present', () => {
    const r = rule({ type: 'sum_equals', field: 'nope[].x', equals: 0 });
    expect(run(r, invoice)).toEqual([{ path: '$.nope[].x', expected: 'at least one value', found: 'missing', message: 'field missing' }]);
    expect(run({ ...r, if_present: true }, invoice)).toEqual([]);
    expect(run(rule({ type: 'sum_equals', field: 'x[]', equals: 0 }), { x: [] })[0].message).toBe('field missing');
  });
  it('names the path and type of non-numeric values and references', () => {
    const f = run(rule({ type: 'sum_equals', field: 'x[]', equals: 3 }), { x: [1, '2', null] });
    expect(f.map((e) => [e.path, e.found])).toEqual([
      ['$.x[1]', 'type string'],
      ['$.x[2]', 'type null'],
    ]);
    expect(f[0].message).toBe('$.x[1] holds type string, expected a number');
    const g = run(rule({ type: 'sum_equals', field: 'x[]', equals_field: 't' }), { x: [1], t: '1' });
    expect(g[0]).toMatchObject({ path: '$.t', found: 'type string' });
    const h = run(rule({ type: 'sum_equals', field: 'x[]', equals_field: 't[]' }), { x: [1], t: [1, 1] });
    expect(h[0]).toMatchObject({ found: '2 values' });
    const m = run(rule({ type: 'sum_equals', field: 'x[]', equals_field: 't' }), { x: [1] });
    expect(m[0]).toMatchObject({ path: '$.t', found: 'missing' });
  });
});

describe('gte / lte', () => {
  it('compares every value against a constant', () => {
    expect(run(rule({ type: 'gte', field: 'line_items[].qty', value: 1 }), invoice)).toEqual([]);
    const f = run(rule({ type: 'gte', field: 'line_items[].qty', value: 2 }), invoice);
    expect(f).toEqual([
      { path: '$.line_items[1].qty', expected: '>= 2', found: 'value 1', message: '$.line_items[1].qty is 1, expected >= 2' },
    ]);
    expect(run(rule({ type: 'lte', field: 'line_items[].qty', value: 3 }), invoice)).toEqual([]);
    expect(run(rule({ type: 'lte', field: 'line_items[].qty', value: 2 }), invoice).map((e) => e.path)).toEqual(['$.line_items[0].qty']);
  });
  it('compares against a single value at other_field', () => {
    expect(run(rule({ type: 'lte', field: 'line_items[].line_total', other_field: 'cap' }), invoice)).toEqual([]);
    const f = run(rule({ type: 'lte', field: 'total', other_field: 'cap' }), invoice);
    expect(f[0]).toMatchObject({ path: '$.total', expected: '<= cap (100)', found: 'value 135' });
  });
  it('compares element by element when both paths expand over the same array', () => {
    expect(run(rule({ type: 'gte', field: 'line_items[].qty', other_field: 'line_items[].min' }), invoice).map((e) => e.path)).toEqual([
      '$.line_items[1].qty',
    ]);
    expect(run(rule({ type: 'lte', field: 'line_items[].qty', other_field: 'line_items[].max' }), invoice)).toEqual([]);
    const f = run(rule({ type: 'gte', field: 'line_items[].qty', other_field: 'line_items[].min' }), invoice)[0];
    expect(f.expected).toBe('>= $.line_items[1].min (2)');
    // an element without its counterpart fails
    const g = run(rule({ type: 'gte', field: 'a[].x', other_field: 'a[].y' }), { a: [{ x: 1, y: 0 }, { x: 1 }] });
    expect(g).toHaveLength(1);
    expect(g[0]).toMatchObject({ path: '$.a[1].x', found: 'missing' });
  });
  it('requires a single reference when the arrays differ', () => {
    const f = run(rule({ type: 'gte', field: 'a[].x', other_field: 'b[].y' }), { a: [{ x: 1 }], b: [{ y: 0 }, { y: 0 }] });
    expect(f[0]).toMatchObject({ found: '2 values' });
  });
  it('applies tolerance in the lenient direction', () => {
    expect(run(rule({ type: 'gte', field: 'x', value: 1, tolerance: 0.5 }), { x: 0.5 })).toEqual([]);
    expect(run(rule({ type: 'gte', field: 'x', value: 1, tolerance: 0.25 }), { x: 0.5 })).toHaveLength(1);
    expect(run(rule({ type: 'lte', field: 'x', value: 1, tolerance: 0.5 }), { x: 1.5 })).toEqual([]);
    expect(run(rule({ type: 'lte', field: 'x', value: 1, tolerance: 0 }), { x: 1 })).toEqual([]);
    expect(run(rule({ type: 'lte', field: 'x', value: 1, tolerance: 0 }), { x: 1.0000001 })).toHaveLength(1);
  });
  it('fails missing fields unless if_present, and names wrong types', () => {
    expect(run(rule({ type: 'gte', field: 'nope', value: 0 }), invoice)[0].message).toBe('field missing');
    expect(run(rule({ type: 'gte', field: 'nope', value: 0, if_present: true }), invoice)).toEqual([]);
    expect(run(rule({ type: 'lte', field: 'line_items[].sku', value: 0 }), invoice).map((e) => e.found)).toEqual(['type string', 'type string']);
    expect(run(rule({ type: 'gte', field: 'x', other_field: 'y' }), { x: 1, y: [1] })[0]).toMatchObject({ path: '$.y', found: 'type array' });
    expect(run(rule({ type: 'gte', field: 'a[].x', other_field: 'a[].y' }), { a: [{ x: 1, y: true }] })[0]).toMatchObject({
      path: '$.a[0].y',
      found: 'type boolean',
    });
  });
});

describe('exists_in', () => {
  const doc: Json = {
    skus: ['A', 'B', { k: 1, j: [2] }],
    lines: [{ sku: 'A' }, { sku: 'C' }, { sku: { j: [2], k: 1 } }],
  };
  it('checks membership in a constant list with JSON equality', () => {
    expect(run(rule({ type: 'exists_in', field: 'lines[].sku', values: ['A', 'C', { j: [2], k: 1 }] }), doc)).toEqual([]);
    const f = run(rule({ type: 'exists_in', field: 'lines[].sku', values: ['A', 'B'] }), doc);
    expect(f.map((e) => e.path)).toEqual(['$.lines[1].sku', '$.lines[2].sku']);
    expect(f[0]).toMatchObject({ expected: 'one of the 2 allowed values', found: 'a value not among them (type string)' });
    expect(JSON.stringify(f)).not.toContain('"C"');
    expect(run(rule({ type: 'exists_in', field: 'n', values: [1] }), { n: 1.0 })).toEqual([]);
    expect(run(rule({ type: 'exists_in', field: 'n', values: ['1'] }), { n: 1 })).toHaveLength(1);
  });
  it('checks membership among the values at in_field (key order does not matter)', () => {
    const f = run(rule({ type: 'exists_in', field: 'lines[].sku', in_field: 'skus[]' }), doc);
    expect(f.map((e) => e.path)).toEqual(['$.lines[1].sku']);
    const m = run(rule({ type: 'exists_in', field: 'lines[].sku', in_field: 'nothing[]' }), doc);
    expect(m[0]).toMatchObject({ path: '$.nothing[]', found: 'missing' });
  });
  it('fails missing fields unless if_present', () => {
    expect(run(rule({ type: 'exists_in', field: 'x', values: [] }), doc)[0].message).toBe('field missing');
    expect(run(rule({ type: 'exists_in', field: 'x', values: [], if_present: true }), doc)).toEqual([]);
  });
});

describe('unique', () => {
  it('passes distinct values and reports each repeat with the first location', () => {
    expect(run(rule({ type: 'unique', field: 'a[].id' }), { a: [{ id: 1 }, { id: '1' }, { id: [1] }] })).toEqual([]);
    const f = run(rule({ type: 'unique', field: 'a[].id' }), { a: [{ id: { x: 1, y: 2 } }, { id: 2 }, { id: { y: 2, x: 1 } }, { id: 2.0 }] });
    expect(f.map((e) => [e.path, e.found])).toEqual([
      ['$.a[2].id', 'duplicate of $.a[0].id'],
      ['$.a[3].id', 'duplicate of $.a[1].id'],
    ]);
  });
  it('fails missing fields unless if_present', () => {
    expect(run(rule({ type: 'unique', field: 'a[].id' }), { a: [] })[0].message).toBe('field missing');
    expect(run(rule({ type: 'unique', field: 'a[].id', if_present: true }), { a: [] })).toEqual([]);
  });
});

describe('formatNumber', () => {
  it('prints numbers without float noise', () => {
    expect(formatNumber(0.1 + 0.2)).toBe('0.3');
    expect(formatNumber(129.5)).toBe('129.5');
    expect(formatNumber(1e21)).toBe('1e+21');
    expect(formatNumber(-0.000001)).toBe('-0.000001');
    expect(formatNumber(123456789.1234567)).toBe('123456789.123457');
    expect(formatNumber(1 / 3)).toBe('0.333333333333333');
  });
});

describe('registry', () => {
  it('names checks consistency:<type>', () => {
    expect(ruleCheckId('sum_equals')).toBe('consistency:sum_equals');
    expect(Object.keys(RULE_EVALUATORS).sort()).toEqual(['exists_in', 'gte', 'lte', 'sum_equals', 'unique']);
  });
});
