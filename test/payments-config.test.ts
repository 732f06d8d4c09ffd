/**
 * @module Payment configuration: off by default, validated at start, every bad
 * value named by its variable; plus the transport helpers (headers and MCP `_meta`).
 */
import { describe, expect, it } from 'vitest';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { BASE_USDC, parsePaymentConfig, parsePrice, SOLANA_USDC } from '../src/payments/config.js';
import {
  MCP_PAYMENT_RESPONSE_META,
  mcpPaymentRequiredResult,
  paymentRequiredBody,
  paymentRequiredHeaders,
  paymentResponseHeaders,
  readMcpPayment,
  readPaymentSignature,
  withMcpPaymentResponse,
} from '../src/payments/transport.js';
import { asPaymentPayload } from '../src/payments/gate.js';

const EVM = '0x1111111111111111111111111111111111111111';
const SOL = 'So11111111111111111111111111111111111111112';
const ON = { X402_ENABLED: 'true', X402_FACILITATOR_URL: 'https://facilitator.example/x402', X402_PAY_TO_EVM: EVM, X402_PAY_TO_SOLANA: SOL };

describe('parsePaymentConfig', () => {
  it('is off by default, with the default prices', () => {
    const c = parsePaymentConfig({});
    expect(c.enabled).toBe(false);
    expect(c.prices).toEqual({ verify: '$0.02', score: '$0.01' });
    expect(c.networks).toEqual([]);
  });

  it('turns on with a facilitator and payTo per network', () => {
    const c = parsePaymentConfig(ON);
    expect(c.enabled).toBe(true);
    expect(c.facilitator).toEqual({ mode: 'remote', url: 'https://facilitator.example/x402', timeoutMs: 30000, authorization: null });
    expect(c.networks).toEqual([
      { network: 'eip155:8453', family: 'evm', payTo: EVM, asset: BASE_USDC },
      { network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', family: 'svm', payTo: SOL, asset: SOLANA_USDC },
    ]);
    expect(c.maxTimeoutSeconds).toBe(300);
    expect(c.freeMaxBodyBytes).toBe(65536);
  });

  it('accepts network aliases, prices and limits', () => {
    const c = parsePaymentConfig({ ...ON, X402_NETWORKS: 'base', X402_PRICE_VERIFY: '0.05', X402_PRICE_SCORE: '$1', X402_MAX_TIMEOUT_SECONDS: '120', X402_FREE_MAX_BODY_BYTES: '1000' });
    expect(c.networks.map((n) => n.network)).toEqual(['eip155:8453']);
    expect(c.prices).toEqual({ verify: '$0.05', score: '$1' });
    expect(c.maxTimeoutSeconds).toBe(120);
    expect(c.freeMaxBodyBytes).toBe(1000);
  });

  it('passes an Authorization value to a hosted facilitator', () => {
    const c = parsePaymentConfig({ ...ON, X402_FACILITATOR_AUTHORIZATION: 'Bearer abc' });
    expect(c.facilitator).toMatchObject({ mode: 'remote', authorization: 'Bearer abc' });
  });

  it('supports the built-in facilitator on an EVM RPC', () => {
    const c = parsePaymentConfig({ ...ON, X402_NETWORKS: 'base', X402_FACILITATOR_URL: 'local', X402_LOCAL_EVM_RPC_URL: 'http://127.0.0.1:8545', X402_LOCAL_EVM_PRIVATE_KEY: `0x${'ab'.repeat(32)}` });
    expect(c.facilitator).toEqual({
      mode: 'local',
      evmRpcUrl: 'http://127.0.0.1:8545',
      evmPrivateKey: `0x${'ab'.repeat(32)}`,
      svmRpcUrl: null,
      svmKeyFile: null,
      confirmationTimeoutMs: 30_000,
      routesToken: null,
    });
  });

  it('supports the built-in facilitator on a Solana RPC with a fee-payer key file, alone or beside Base', () => {
    const svm = { X402_FACILITATOR_URL: 'local', X402_LOCAL_SVM_RPC_URL: 'http://127.0.0.1:8899', X402_LOCAL_SVM_KEY_FILE: '/keys/fee-payer.json' };
    const alone = parsePaymentConfig({ ...ON, ...svm, X402_NETWORKS: 'solana', X402_LOCAL_CONFIRMATION_TIMEOUT_MS: '5000' });
    expect(alone.networks.map((n) => n.family)).toEqual(['svm']);
    expect(alone.facilitator).toMatchObject({ mode: 'local', evmRpcUrl: null, svmRpcUrl: 'http://127.0.0.1:8899', svmKeyFile: '/keys/fee-payer.json', confirmationTimeoutMs: 5000 });
    const both = parsePaymentConfig({ ...ON, ...svm, X402_LOCAL_EVM_RPC_URL: 'http://127.0.0.1:8545', X402_LOCAL_EVM_PRIVATE_KEY: `0x${'ab'.repeat(32)}` });
    expect(both.networks.map((n) => n.family)).toEqual(['evm', 'svm']);
    expect(() => parsePaymentConfig({ ...ON, ...svm })).toThrow(/^X402_LOCAL_EVM_RPC_URL:/);
    expect(() => parsePaymentConfig({ ...ON, ...svm, X402_NETWORKS: 'solana', X402_LOCAL_SVM_KEY_FILE: '' })).toThrow(/^X402_LOCAL_SVM_KEY_FILE:/);
    expect(() => parsePaymentConfig({ ...ON, ...svm, X402_NETWORKS: 'solana', X402_LOCAL_SVM_RPC_URL: '' })).toThrow(/^X402_LOCAL_SVM_RPC_URL:/);
    expect(() => parsePaymentConfig({ ...ON, ...svm, X402_NETWORKS: 'solana', X402_LOCAL_SVM_RPC_URL: 'ws://x' })).toThrow(/^X402_LOCAL_SVM_RPC_URL: must be an http/);
    expect(() => parsePaymentConfig({ ...ON, ...svm, X402_NETWORKS: 'solana', X402_LOCAL_CONFIRMATION_TIMEOUT_MS: '10' })).toThrow(/^X402_LOCAL_CONFIRMATION_TIMEOUT_MS:/);
  });

  it('the built-in facilitator routes are off by default and need a token when on', () => {
    const local = { ...ON, X402_NETWORKS: 'base', X402_FACILITATOR_URL: 'local', X402_LOCAL_EVM_RPC_URL: 'http://127.0.0.1:8545', X402_LOCAL_EVM_PRIVATE_KEY: `0x${'ab'.repeat(32)}` };
    const token = 'f'.repeat(40);
    // A token alone does not turn them on.
    expect(parsePaymentConfig({ ...local, X402_FACILITATOR_ROUTES_TOKEN: token }).facilitator).toMatchObject({ routesToken: null });
    expect(parsePaymentConfig({ ...local, X402_FACILITATOR_ROUTES: 'true', X402_FACILITATOR_ROUTES_TOKEN: token }).facilitator).toMatchObject({ routesToken: token });
    expect(() => parsePaymentConfig({ ...local, X402_FACILITATOR_ROUTES: 'true' })).toThrow(/^X402_FACILITATOR_ROUTES_TOKEN: is required/);
    expect(() => parsePaymentConfig({ ...local, X402_FACILITATOR_ROUTES: 'true', X402_FACILITATOR_ROUTES_TOKEN: 'short' })).toThrow(/^X402_FACILITATOR_ROUTES_TOKEN: must be 32/);
    expect(() => parsePaymentConfig({ ...ON, X402_FACILITATOR_ROUTES: 'true', X402_FACILITATOR_ROUTES_TOKEN: token })).toThrow(/^X402_FACILITATOR_ROUTES: .*X402_FACILITATOR_URL=local/);
  });

  it('the validity margin defaults to 60 s and must stay below the window', () => {
    expect(parsePaymentConfig(ON).minValiditySeconds).toBe(60);
    expect(parsePaymentConfig({ ...ON, X402_MIN_VALIDITY_SECONDS: '30' }).minValiditySeconds).toBe(30);
    expect(() => parsePaymentConfig({ ...ON, X402_MIN_VALIDITY_SECONDS: '300' })).toThrow(/^X402_MIN_VALIDITY_SECONDS: must be less than/);
    expect(() => parsePaymentConfig({ ...ON, X402_MIN_VALIDITY_SECONDS: '5' })).toThrow(/^X402_MIN_VALIDITY_SECONDS/);
  });

  const bad: Array<[Record<string, string>, string]> = [
    [{ X402_ENABLED: 'maybe' }, 'X402_ENABLED'],
    [{ ...ON, X402_FACILITATOR_URL: '' }, 'X402_FACILITATOR_URL'],
    [{ ...ON, X402_FACILITATOR_URL: 'ftp://x' }, 'X402_FACILITATOR_URL'],
    [{ ...ON, X402_FACILITATOR_URL: 'not a url' }, 'X402_FACILITATOR_URL'],
    [{ ...ON, X402_PAY_TO_EVM: '' }, 'X402_PAY_TO_EVM'],
    [{ ...ON, X402_PAY_TO_EVM: '0x123' }, 'X402_PAY_TO_EVM'],
    [{ ...ON, X402_PAY_TO_EVM: `0x${'0'.repeat(40)}` }, 'X402_PAY_TO_EVM'],
    [{ ...ON, X402_PAY_TO_SOLANA: 'O0Il' }, 'X402_PAY_TO_SOLANA'],
    [{ ...ON, X402_NETWORKS: 'base,polygon' }, 'X402_NETWORKS'],
    [{ ...ON, X402_NETWORKS: ' , ' }, 'X402_NETWORKS'],
    [{ ...ON, X402_PRICE_VERIFY: '-1' }, 'X402_PRICE_VERIFY'],
    [{ ...ON, X402_PRICE_VERIFY: '0.0000001' }, 'X402_PRICE_VERIFY'],
    [{ ...ON, X402_PRICE_SCORE: '$0' }, 'X402_PRICE_SCORE'],
    [{ ...ON, X402_MAX_TIMEOUT_SECONDS: '5' }, 'X402_MAX_TIMEOUT_SECONDS'],
    [{ ...ON, X402_FREE_MAX_BODY_BYTES: 'lots' }, 'X402_FREE_MAX_BODY_BYTES'],
    [{ ...ON, X402_FACILITATOR_URL: 'local', X402_NETWORKS: 'base' }, 'X402_LOCAL_EVM_RPC_URL'],
    [{ ...ON, X402_FACILITATOR_URL: 'local', X402_NETWORKS: 'base', X402_LOCAL_EVM_RPC_URL: 'http://127.0.0.1:8545' }, 'X402_LOCAL_EVM_PRIVATE_KEY'],
    [{ ...ON, X402_FACILITATOR_URL: 'local', X402_NETWORKS: 'base', X402_LOCAL_EVM_RPC_URL: 'http://x', X402_LOCAL_EVM_PRIVATE_KEY: '0x12' }, 'X402_LOCAL_EVM_PRIVATE_KEY'],
    [{ ...ON, X402_FACILITATOR_URL: 'local', X402_LOCAL_EVM_RPC_URL: 'http://x', X402_LOCAL_EVM_PRIVATE_KEY: `0x${'ab'.repeat(32)}` }, 'X402_NETWORKS'],
  ];
  it.each(bad)('rejects %j naming %s', (env, name) => {
    expect(() => parsePaymentConfig(env)).toThrow(new RegExp(`^${name}:`));
  });

  it('validates prices even when payments are off', () => {
    expect(() => parsePaymentConfig({ X402_PRICE_VERIFY: 'free' })).toThrow(/^X402_PRICE_VERIFY:/);
    expect(parsePrice('P', '1.500000', '$1')).toBe('$1.500000');
  });
});

const PR: PaymentRequired = {
  x402Version: 2,
  resource: { url: 'http://x/verify/schema' },
  accepts: [{ scheme: 'exact', network: 'eip155:8453', asset: BASE_USDC, amount: '20000', payTo: EVM, maxTimeoutSeconds: 300, extra: { name: 'USD Coin', version: '2' } }],
};
const PAYLOAD: PaymentPayload = { x402Version: 2, accepted: PR.accepts[0], payload: { signature: '0x', authorization: {} } };
const ALLOWANCE = { allowed: false, limit: 3, used: 3, remaining: 0, resetsAt: '2026-12-01T00:00:00Z', retryAfter: 60 };

describe('transport helpers', () => {
  it('encodes PAYMENT-REQUIRED / PAYMENT-RESPONSE with the official codecs', () => {
    const h = paymentRequiredHeaders(PR);
    expect(decodePaymentRequiredHeader(h['PAYMENT-REQUIRED'])).toEqual(PR);
    const s = { success: true, transaction: '0xabc', network: 'eip155:8453' as const, payer: EVM };
    expect(decodePaymentResponseHeader(paymentResponseHeaders(s)['PAYMENT-RESPONSE'])).toEqual(s);
  });

  it('reads PAYMENT-SIGNATURE: absent, present, undecodable', () => {
    expect(readPaymentSignature(undefined)).toEqual({ present: false, payload: null });
    expect(readPaymentSignature(encodePaymentSignatureHeader(PAYLOAD))).toEqual({ present: true, payload: PAYLOAD });
    expect(readPaymentSignature('%%%')).toEqual({ present: true, payload: null });
  });

  it('builds the 402 body with the free-trial state', () => {
    expect(paymentRequiredBody(PR, { code: 'free_trial_exhausted', message: 'm', allowance: ALLOWANCE })).toMatchObject({
      x402Version: 2,
      accepts: PR.accepts,
      code: 'free_trial_exhausted',
      available: false,
      remaining_calls_today: 0,
      resets_at: '2026-12-01T00:00:00Z',
      charged: false,
    });
  });

  it('MCP: reads _meta["x402/payment"] (object or header encoding) and writes the payment response', () => {
    expect(readMcpPayment(undefined).present).toBe(false);
    expect(readMcpPayment({ 'x402/payment': PAYLOAD })).toEqual({ present: true, payload: PAYLOAD });
    expect(readMcpPayment({ 'x402/payment': encodePaymentSignatureHeader(PAYLOAD) })).toEqual({ present: true, payload: PAYLOAD });
    const r = mcpPaymentRequiredResult(PR, { code: 'free_trial_exhausted', message: 'm', allowance: ALLOWANCE });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toEqual(PR);
    expect(JSON.parse(r.content[0].text)).toEqual(PR);
    expect(r._meta).toMatchObject({ code: 'free_trial_exhausted', free_trial: { available: false } });
    const s = { success: true, transaction: '0x1', network: 'eip155:8453' as const };
    expect(withMcpPaymentResponse({ content: [] } as { content: unknown[]; _meta?: Record<string, unknown> }, s)._meta).toEqual({ [MCP_PAYMENT_RESPONSE_META]: s });
  });

  it('shape-checks untrusted payloads', () => {
    expect(asPaymentPayload(PAYLOAD)).toBe(PAYLOAD);
    expect(asPaymentPayload({ ...PAYLOAD, accepted: { ...PAYLOAD.accepted, amount: 20000 } })).toBeNull();
    expect(asPaymentPayload([])).toBeNull();
  });
});
