/**
 * @module The requests the playground offers. The first is the invoice of the
 * service's worked example: its line totals sum to 129.5 but it states 135,
 * so the sum_equals rule fails; with total 129.5 it passes.
 */
import invoice from '../../test/fixtures/invoice.request.json' with { type: 'json' };

export interface Example {
  id: string;
  title: string;
  request: Record<string, unknown>;
}

const invoiceFixed = {
  ...invoice,
  task_id: 'invoice-example-2',
  submitted_output: { ...invoice.submitted_output, total: 129.5 },
};

export const EXAMPLES: Example[] = [
  { id: 'invoice', title: 'Invoice: totals do not add up (fails)', request: invoice },
  { id: 'invoice-fixed', title: 'Invoice: total fixed (passes)', request: invoiceFixed },
  {
    id: 'shipment',
    title: 'Shipment: wrong types and a missing field (fails)',
    request: {
      task_id: 'shipment-example',
      agent_id: 'test-shipping-agent',
      expected_schema: {
        type: 'object',
        required: ['tracking_number', 'weight_kg', 'delivered_on'],
        properties: {
          tracking_number: { type: 'string', pattern: '^[A-Z]{2}[0-9]{9}[A-Z]{2}$' },
          weight_kg: { type: 'number', exclusiveMinimum: 0 },
          delivered_on: { type: 'string', format: 'date' },
        },
      },
      submitted_output: { tracking_number: 'RR123456789DE', weight_kg: '2.5' },
    },
  },
  {
    id: 'prices',
    title: 'Price list: bounds and unique ids (warnings only)',
    request: {
      task_id: 'prices-example',
      agent_id: 'test-pricing-agent',
      expected_schema: {
        type: 'object',
        required: ['items'],
        properties: {
          items: {
            type: 'array',
            items: { type: 'object', required: ['id', 'price'], properties: { id: { type: 'string' }, price: { type: 'number' } } },
          },
        },
      },
      submitted_output: {
        items: [
          { id: 'a', price: 10 },
          { id: 'b', price: 250 },
          { id: 'a', price: 20.5 },
        ],
      },
      bounds: { 'items[].price': { min: 0, max: 100 } },
      rules: [{ type: 'unique', field: 'items[].id' }],
      enforce_rules: false,
    },
  },
  {
    id: 'placeholders',
    title: 'Report: placeholders and undeclared fields (strict content check)',
    request: {
      task_id: 'report-example',
      agent_id: 'test-report-agent',
      expected_schema: {
        type: 'object',
        required: ['title', 'summary'],
        properties: { title: { type: 'string' }, summary: { type: 'string' } },
      },
      submitted_output: { title: 'Quarterly report', summary: 'TODO', draft_notes: 'remove before sending' },
      strict_content_check: true,
    },
  },
];
