/**
 * @module The three request_hash test vectors of docs/protocol.md#test-vectors, published in the
 * agent card so that third-party verifiers can check their canonicalization
 * against ours. Wire data: never edit a vector, add a new version instead.
 */
import type { JsonObject } from '../../core/types.js';

export interface RequestHashVector {
  /** The request as a client would send it (defaults omitted). */
  request: JsonObject;
  /** JCS of the request with every default filled in, `detail` excluded. */
  canonical: string;
  request_hash: string;
}

const VECTOR_TEXTS: Array<{ request: string; canonical: string; request_hash: string }> = [
  {
    request:
      '{"task_id":"tv-1","expected_schema":{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}},"submitted_output":{"ok":true}}',
    canonical:
      '{"agent_id":null,"bounds":null,"enforce_rules":false,"expected_schema":{"properties":{"ok":{"type":"boolean"}},"required":["ok"],"type":"object"},"rules":null,"strict_content_check":false,"submitted_output":{"ok":true},"task_id":"tv-1"}',
    request_hash: '5366542000b4226c5efb411c15ec8f0aac3c63844343997aa1bcc3c585086f97',
  },
  {
    request:
      '{"task_id":"tv-2","agent_id":"seller-7","expected_schema":{"type":"object","required":["items","total"],"properties":{"items":{"type":"array","items":{"type":"object","required":["id","price"],"properties":{"id":{"type":"string"},"price":{"type":"number"}}}},"total":{"type":"number"}}},"submitted_output":{"total":30.5,"items":[{"id":"a","price":10.0},{"id":"b","price":20.5}]},"bounds":{"items[].price":{"min":0,"max":100}},"rules":[{"type":"sum_equals","field":"items[].price","equals_field":"total","tolerance":0.01},{"type":"unique","field":"items[].id"}],"enforce_rules":true}',
    canonical:
      '{"agent_id":"seller-7","bounds":{"items[].price":{"if_present":false,"max":100,"min":0}},"enforce_rules":true,"expected_schema":{"properties":{"items":{"items":{"properties":{"id":{"type":"string"},"price":{"type":"number"}},"required":["id","price"],"type":"object"},"type":"array"},"total":{"type":"number"}},"required":["items","total"],"type":"object"},"rules":[{"equals":null,"equals_field":"total","field":"items[].price","if_present":false,"in_field":null,"other_field":null,"tolerance":0.01,"type":"sum_equals","value":null,"values":null},{"equals":null,"equals_field":null,"field":"items[].id","if_present":false,"in_field":null,"other_field":null,"tolerance":1e-9,"type":"unique","value":null,"values":null}],"strict_content_check":false,"submitted_output":{"items":[{"id":"a","price":10},{"id":"b","price":20.5}],"total":30.5},"task_id":"tv-2"}',
    request_hash: '1aa064d21a2c1487d5d319ded6efec48c18dfee45b93f741266b1f491c2e099f',
  },
  {
    request:
      '{"task_id":"tv-3","expected_schema":{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"number"}}},"submitted_output":{"n":1.0,"name":"café ✓","z":[1e+21,1e-06]},"strict_content_check":true,"rules":[{"type":"gte","field":"n","value":0,"if_present":true}]}',
    canonical:
      '{"agent_id":null,"bounds":null,"enforce_rules":false,"expected_schema":{"properties":{"n":{"type":"number"},"name":{"type":"string"}},"type":"object"},"rules":[{"equals":null,"equals_field":null,"field":"n","if_present":true,"in_field":null,"other_field":null,"tolerance":1e-9,"type":"gte","value":0,"values":null}],"strict_content_check":true,"submitted_output":{"n":1,"name":"café ✓","z":[1e+21,0.000001]},"task_id":"tv-3"}',
    request_hash: '037abd3fe4643c14e68d9fd57ca93b460c177c5372f058aa2920a2ef120c0432',
  },
];

/** The vectors with each request as the original JSON text (e.g. `10.0`, `1e+21` spelled as sent). */
export function requestHashVectorTexts(): Array<{ request: string; canonical: string; request_hash: string }> {
  return VECTOR_TEXTS.map((v) => ({ ...v }));
}

/** Fresh copies each call, so no caller can alter the published vectors. */
export function requestHashVectors(): RequestHashVector[] {
  return VECTOR_TEXTS.map((v) => ({
    request: JSON.parse(v.request) as JsonObject,
    canonical: v.canonical,
    request_hash: v.request_hash,
  }));
}
