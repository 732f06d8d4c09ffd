/* global console, process */
/**
 * @module A seller agent checks its own deliverable against the buyer's
 * requirements before sending it, and ships it with the signed receipt.
 * Run against a local service: `npm start` in one terminal, then
 * `node docs/examples/seller.mjs [base URL]` (default http://127.0.0.1:8080).
 */
import { writeFileSync } from 'node:fs';
import { createVerifierClient, VerifierError } from 'agent-output-verifier/client';

const client = createVerifierClient({ baseUrl: process.argv[2] ?? 'http://127.0.0.1:8080' });

// What the buyer asked for: the schema and rules travel with the task.
const requirements = {
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
  rules: [{ type: 'sum_equals', field: 'line_items[].line_total', equals_field: 'total' }],
  enforce_rules: true,
};

// The deliverable, with a mistake: the total does not add up.
const invoice = {
  invoice_id: 'INV-0042',
  currency: 'USD',
  line_items: [
    { sku: 'WIDGET-1', qty: 3, line_total: 87.0 },
    { sku: 'GADGET-2', qty: 1, line_total: 42.5 },
  ],
  total: 135.0,
};

try {
  let { body: receipt } = await client.verify({ task_id: 'invoice-42', agent_id: 'seller-7', submitted_output: invoice, ...requirements });
  if (receipt.result === 'fail') {
    // The hints say what to repair, without echoing the values back.
    for (const hint of receipt.hints ?? []) console.log(`repair: ${hint.check} at ${hint.path}: expected ${hint.expected}, found ${hint.found}`);
    invoice.total = 129.5;
    ({ body: receipt } = await client.verify({ task_id: 'invoice-42', agent_id: 'seller-7', submitted_output: invoice, ...requirements }));
  }
  console.log(`verdict: ${receipt.result} (${receipt.overall?.passed}/${receipt.overall?.total} checks), receipt ${receipt.verification_id}`);
  // Ship the deliverable together with its receipt; the buyer checks both.
  writeFileSync('deliverable.json', JSON.stringify({ output: invoice, receipt }, null, 2));
  console.log('wrote deliverable.json (the invoice and its signed receipt)');
} catch (e) {
  if (e instanceof VerifierError) {
    console.error(`${e.code}: ${e.message}`);
    for (const f of e.fields) console.error(`  ${f.field}: ${f.problem} — ${f.fix}`);
    process.exit(1);
  }
  throw e;
}
