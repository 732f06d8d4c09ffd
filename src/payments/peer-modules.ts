/**
 * @module The payment and chain libraries are optional peer dependencies of the package: an
 * operator who turns payments (X402_ENABLED) or the ERC-8004 validator on installs them beside it;
 * everyone else is spared most of an install's size. This module imports none of them: it turns
 * their absence, found when the code that needs them is loaded, into an error that says what to install.
 */

/** The optional peers, as `npm install` takes them (the versions are the package.json's peerDependencies). */
export const PAYMENT_PEERS = ['@solana/kit', '@x402/core', '@x402/evm', '@x402/extensions', '@x402/fetch', '@x402/svm', 'viem'] as const;

/** The package a module-not-found error names, when it is one of PAYMENT_PEERS or a package they pull in. */
function missingPeer(err: unknown): string | null {
  const e = err as { code?: unknown; message?: unknown };
  if (e === null || typeof e !== 'object' || e.code !== 'ERR_MODULE_NOT_FOUND' || typeof e.message !== 'string') return null;
  const m = /Cannot find (?:package|module) '((?:@[^/']+\/)?[^/']+)/.exec(e.message);
  if (m === null) return null;
  const name = m[1] as string;
  return name === 'viem' || name.startsWith('@x402/') || name.startsWith('@solana/') || name.startsWith('@solana-program/') ? name : null;
}

/**
 * Loads code that needs the payment libraries; when one of them is not installed, fails with a
 * message naming the setting that needs them and the command that installs them.
 */
export async function loadWithPaymentPeers<T>(setting: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const name = missingPeer(err);
    if (name === null) throw err;
    throw new Error(
      `${setting} is on, but the payment libraries it needs are not installed (${name} is missing). They are optional peer ` +
        `dependencies of agent-output-verifier: install them beside it with \`npm install ${PAYMENT_PEERS.join(' ')}\` ` +
        '(the versions in its package.json peerDependencies), or turn the setting off.',
      { cause: err },
    );
  }
}
