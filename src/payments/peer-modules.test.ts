import { describe, expect, it } from 'vitest';
import { loadWithPaymentPeers, PAYMENT_PEERS } from './peer-modules.js';

const notFound = (what: string): Error => Object.assign(new Error(`Cannot find package '${what}' imported from /srv/app/dist/payments/index.js`), { code: 'ERR_MODULE_NOT_FOUND' });

describe('loadWithPaymentPeers', () => {
  it('passes what the load returns', async () => {
    expect(await loadWithPaymentPeers('X402_ENABLED', async () => 42)).toBe(42);
  });

  it('turns a missing payment library into a message naming the setting and the install command', async () => {
    for (const name of ['viem', '@x402/core', '@solana/kit']) {
      const err = await loadWithPaymentPeers('X402_ENABLED', () => Promise.reject(notFound(name))).catch((e: unknown) => e as Error);
      expect(err.message).toContain(`X402_ENABLED is on, but the payment libraries it needs are not installed (${name} is missing)`);
      expect(err.message).toContain(`npm install ${PAYMENT_PEERS.join(' ')}`);
    }
  });

  it('leaves every other failure as it is', async () => {
    const other = notFound('fastify');
    await expect(loadWithPaymentPeers('ERC8004_ENABLED', () => Promise.reject(other))).rejects.toBe(other);
    const plain = new Error('boom');
    await expect(loadWithPaymentPeers('ERC8004_ENABLED', () => Promise.reject(plain))).rejects.toBe(plain);
  });
});
