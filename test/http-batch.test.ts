/**
 * @module POST /verify/batch against a live server on a real socket: 100 mixed
 * outputs answer 100 receipts that each verify with the agent card and hash their
 * own output, invalid batches are one 422 naming the item and field, and the free
 * allowance is taken by exactly the number of items, all or nothing.
 */
import { createHash } from 'node:crypto';
import canonicalizeImport from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifierClient } from '../src/client/index.js';
import { verifyReceipt } from '../src/receipts/index.js';
import { postJson, startApp, tempDir } from './http-helpers.js';
import type { Running } from './http-helpers.js';

const canonicalize = canonicalizeImport as unknown as (v: unknown) => string;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

const schema = {
  type: 'object',
  required: ['name', 'qty'],
  properties: { name: { type: 'string' }, qty: { type: 'integer', minimum: 0 } },
  additionalProperties: false,
};
const shared = { expected_schema: schema, bounds: { qty: { max: 1000 } }, enforce_rules: true };

function items(n: number, prefix: string) {
  return Array.from({ length: n }, (_, i) => ({
    task_id: `${prefix}-${i}`,
    agent_id: `seller-batch-${i % 3}`,
    // Every third output breaks the schema (negative quantity).
    submitted_output: { name: `item ${i}`, qty: i % 3 === 2 ? -i : i },
  }));
}

async function remaining(srv: Running): Promise<number> {
  // A single verification takes one unit; its header shows what is left after it.
  const res = await postJson(srv.base, '/verify/schema', JSON.stringify({ ...shared, task_id: 'probe', submitted_output: { name: 'x', qty: 1 } }));
  expect(res.status).toBe(200);
  return Number(res.headers.get('free-allowance-remaining')) + 1;
}

describe('POST /verify/batch', () => {
  let tmp: ReturnType<typeof tempDir>;
  let srv: Running;
  let card: unknown;

  beforeAll(async () => {
    tmp = tempDir();
    srv = await startApp(tmp.dir, { FREE_ALLOWANCE_PER_DAY: '205' });
    card = await (await fetch(`${srv.base}/.well-known/agent-card.json`)).json();
  });
  afterAll(async () => {
    await srv?.close();
    tmp?.cleanup();
  });

  it('answers 100 receipts in order that each verify and hash their own output; allowance drops by exactly 100', async () => {
    const before = await remaining(srv);
    const list = items(100, 'b');
    const res = await postJson(srv.base, '/verify/batch', JSON.stringify({ ...shared, items: list }));
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('free-allowance-remaining'))).toBe(before - 1 - 100);
    const body = (await res.json()) as { summary: Record<string, number>; receipts: any[] };
    const failing = list.filter((_, i) => i % 3 === 2).length;
    expect(body.summary).toEqual({ total: 100, passed: 100 - failing, failed: failing });
    expect(body.receipts).toHaveLength(100);
    const ids = new Set<string>();
    body.receipts.forEach((r, i) => {
      const item = list[i]!;
      expect(r.task_id).toBe(item.task_id);
      expect(r.agent_id).toBe(item.agent_id);
      expect(r.result).toBe(i % 3 === 2 ? 'fail' : 'pass');
      expect(r.output_hash).toBe(sha256(canonicalize(item.submitted_output)));
      expect(r.schema_hash).toBe(sha256(canonicalize(schema)));
      // The receipt is the one /verify/schema signs for this item's own request.
      expect(verifyReceipt(r, { agentCard: card as any }, { request: JSON.stringify({ ...shared, ...item }) })).toMatchObject({ valid: true });
      ids.add(r.verification_id);
    });
    expect(ids.size).toBe(100);
    // One changed byte in a receipt no longer verifies.
    const tampered = { ...body.receipts[0], task_id: 'b-X' };
    expect(verifyReceipt(tampered, { agentCard: card as any }).valid).toBe(false);
    // Stored: the record route answers the receipt.
    const stored = await fetch(`${srv.base}/verifications/${body.receipts[42].verification_id}`);
    expect(stored.status).toBe(200);
    expect(((await stored.json()) as any).task_id).toBe('b-42');
  });

  it('refuses 101 items with one 422 and takes nothing', async () => {
    const before = await remaining(srv);
    const res = await postJson(srv.base, '/verify/batch', JSON.stringify({ ...shared, items: items(101, 'c') }));
    expect(res.status).toBe(422);
    const body = (await res.json()) as any;
    expect(body.code).toBe('invalid_request');
    expect(body.fields.map((f: any) => f.field)).toEqual(['items']);
    expect(await remaining(srv)).toBe(before - 1);
  });

  it('names the item and field of an invalid item, and takes nothing', async () => {
    const before = await remaining(srv);
    const list: any[] = items(5, 'd');
    list[3] = { ...list[3], task_id: 7 };
    const res = await postJson(srv.base, '/verify/batch', JSON.stringify({ ...shared, items: list }));
    expect(res.status).toBe(422);
    const body = (await res.json()) as any;
    expect(body.fields[0].field).toBe('items[3].task_id');
    const extra = await postJson(srv.base, '/verify/batch', JSON.stringify({ ...shared, items: [{ ...list[0], rules: [] }] }));
    expect(extra.status).toBe(422);
    expect(((await extra.json()) as any).fields[0].field).toBe('items[0].rules');
    const dup = await postJson(srv.base, '/verify/batch', `{"expected_schema":{},"items":[{"task_id":"a","submitted_output":{"k":1,"k":2}}]}`);
    expect(dup.status).toBe(422);
    expect(((await dup.json()) as any).fields[0].field).toBe('items[0].submitted_output.k');
    expect(await remaining(srv)).toBe(before - 1);
  });

  it('refuses a batch larger than the allowance left with a 429, taking nothing', async () => {
    const left = await remaining(srv);
    // The probe took one: left − 1 units remain, one fewer than this batch needs.
    expect(left).toBeLessThanOrEqual(100);
    const res = await postJson(srv.base, '/verify/batch', JSON.stringify({ ...shared, items: items(left, 'e') }));
    expect(res.status).toBe(429);
    expect(((await res.json()) as any).code).toBe('free_allowance_exhausted');
    expect(await remaining(srv)).toBe(left - 1);
  });

  it('the client verifyBatch answers receipts that checkReceipt accepts', async () => {
    const client = createVerifierClient({ baseUrl: srv.base });
    const out = await client.verifyBatch({ ...shared, items: items(3, 'f') } as any);
    expect(out.summary).toEqual({ total: 3, passed: 2, failed: 1 });
    for (const r of out.receipts) expect((await client.checkReceipt(r)).valid).toBe(true);
  });
});
