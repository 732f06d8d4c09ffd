/**
 * @module Repairs over the wire, against the real app on loopback: the MCP tool result
 * (official SDK client, which validates it against the advertised output schema) carries
 * the same `repair` members as the REST receipt, they are covered by the signature, and
 * applying the determined patch gives an output that passes when verified again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { applyPatch, type JsonPatchOperation } from '../src/core/json-patch.js';
import { verifyReceipt } from '../src/receipts/index.js';
import { postJson, startApp, tempDir, type Running } from './http-helpers.js';

const REQUEST = {
  task_id: 'repair-e2e',
  agent_id: 'test-repair',
  expected_schema: { type: 'object', required: ['qty'], properties: { qty: { type: 'integer', minimum: 1 } } },
  submitted_output: { qty: '12' },
};

let running: Running;
let tmp: { dir: string; cleanup(): void };

beforeAll(async () => {
  tmp = tempDir('aov-repairs-e2e-');
  running = await startApp(tmp.dir);
});

afterAll(async () => {
  await running?.close();
  tmp?.cleanup();
});

describe('repairs over REST and MCP', () => {
  it('"12" in an integer field: the same determined patch over both, signed, and the patched output passes', async () => {
    const restRes = await postJson(running.base, '/verify/schema', JSON.stringify(REQUEST));
    expect(restRes.status).toBe(200);
    const restText = await restRes.text();
    const rest = JSON.parse(restText) as Record<string, any>;
    expect(rest.result).toBe('fail');
    expect(rest.hints[0].repair).toEqual({ certainty: 'determined', patch: [{ op: 'replace', path: '/qty', value: 12 }], note: 'Send the number 12 instead of the text that spells it.' });
    expect(rest.next_actions).toEqual([{ action: 'apply_repairs', count: 1 }, { action: 'repair_and_reverify', using: 'hints' }]);

    // The repair is inside the signed bytes: changing it breaks the signature.
    const card = await (await fetch(`${running.base}/.well-known/agent-card.json`)).json();
    expect(verifyReceipt(JSON.parse(restText), { agentCard: card }, { request: REQUEST })).toMatchObject({ valid: true });
    const tampered = restText.replace('"value":12', '"value":13');
    expect(tampered).not.toBe(restText);
    expect(verifyReceipt(JSON.parse(tampered), { agentCard: card })).toMatchObject({ valid: false });

    const client = new Client({ name: 'repairs-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${running.base}/mcp`)));
    try {
      await client.listTools(); // the SDK then validates results against the output schema
      const result = (await client.callTool({ name: 'verify_schema', arguments: REQUEST })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const mcp = result.structuredContent as Record<string, any>;
      expect(mcp.hints).toEqual(rest.hints);
      expect(mcp.next_actions).toEqual(rest.next_actions);

      const patched = applyPatch(REQUEST.submitted_output, mcp.hints[0].repair.patch as JsonPatchOperation[]);
      const again = (await client.callTool({ name: 'verify_schema', arguments: { ...REQUEST, submitted_output: patched } })) as CallToolResult;
      expect((again.structuredContent as Record<string, any>).result).toBe('pass');
    } finally {
      await client.close();
    }
  });
});
