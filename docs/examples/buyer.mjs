/* global console, process */
/**
 * @module A buyer agent receives a deliverable with a receipt, checks the
 * receipt offline against the service's published keys and its own
 * requirements (so a seller cannot attach a receipt for another output), and
 * pays only for a verified pass. Run after seller.mjs, against the same
 * service: `node docs/examples/buyer.mjs [base URL] [deliverable.json]`.
 */
import { readFileSync } from 'node:fs';
import { createVerifierClient } from 'agent-output-verifier/client';

const client = createVerifierClient({ baseUrl: process.argv[2] ?? 'http://127.0.0.1:8080' });
const { output, receipt } = JSON.parse(readFileSync(process.argv[3] ?? 'deliverable.json', 'utf8'));

// The buyer's own copy of what it asked for: the receipt's hashes must match this request exactly.
const request = {
  task_id: 'invoice-42',
  agent_id: 'seller-7',
  expected_schema: {
    type: 'object',
    required: ['invoice_id', 'currency', 'line_items', 'total'],
    properties: {
      invoice_id: { type: 'string', pattern: '^INV-[0-9]{4}$' },
      currency: { enum: ['USD', 'EUR'] },
      line_items: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          required: ['sku', 'qty', 'line_total'],
          properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 }, line_total: { type: 'number', minimum: 0 } },
        },
      },
      total: { type: 'number' },
    },
  },
  submitted_output: output,
  rules: [{ type: 'sum_equals', field: 'line_items[].line_total', equals_field: 'total' }],
  enforce_rules: true,
};

const check = await client.checkReceipt(receipt, { request });
if (!check.valid) {
  console.log(`do not pay: the receipt does not hold (${check.failedCheck}: ${check.message})`);
  process.exit(1);
}
if (receipt.result !== 'pass') {
  console.log(`do not pay: the deliverable failed ${receipt.summary.blocking_checks.join(', ')}`);
  process.exit(1);
}
console.log(`receipt ${receipt.verification_id} verified with key ${check.keyVersion}: pass`);

// The seller's record, for the decision: pass rate and signed trust score.
const reputation = await client.reputation('seller-7', { limit: 5 });
console.log(`seller-7: ${reputation.passes}/${reputation.verifications} passed`);
console.log('proceed to payment');
