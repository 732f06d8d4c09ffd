/**
 * @module Hardhat configuration of the in-process test chain: a local network
 * with Base mainnet's chain id (8453), so the x402 `exact` scheme's EIP-712
 * domain matches Base USDC. Nothing is compiled by Hardhat (the token is built
 * with solc-js in-process), so no compiler is ever downloaded.
 */
/* global require, module, __dirname */
/* eslint-disable @typescript-eslint/no-require-imports -- Hardhat 2 loads its config as CommonJS */
const os = require('node:os');
const path = require('node:path');

module.exports = {
  solidity: '0.8.28',
  paths: {
    root: __dirname,
    sources: path.join(__dirname, 'no-sources'),
    cache: path.join(os.tmpdir(), 'aov-hardhat-cache'),
    artifacts: path.join(os.tmpdir(), 'aov-hardhat-artifacts'),
  },
  networks: {
    hardhat: {
      chainId: 8453,
      mining: { auto: true },
    },
  },
};
