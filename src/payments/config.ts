/**
 * @module Payment (x402 v2) configuration: parsed and validated once from an
 * environment map handed over by src/config.ts (the only module that reads the
 * environment). (Initial version: payments off; the payments module extends it.)
 */

export interface PaymentConfig {
  enabled: boolean;
}

/** Parse payment settings from an env-like map. Throws an Error naming the bad variable. */
export function parsePaymentConfig(_env: Record<string, string | undefined>): PaymentConfig {
  return { enabled: false };
}
