/**
 * @module ERC-8004 validator mode, put together from the configuration: the
 * chain client on the configured RPC endpoint, the validator over the store's
 * queue, and its routes. Loaded only when ERC8004_ENABLED is set.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Erc8004Config } from '../config.js';
import { createValidatorChain } from './chain.js';
import type { ValidationQueueStore } from './queue-store.js';
import { erc8004Routes } from './routes.js';
import { createErc8004Validator, type Erc8004Validator, type Erc8004ValidatorOptions } from './validator.js';

export { validationRegistryAbi, ERC8004_CONTRACTS_COMMIT, VALIDATION_REGISTRY_VERSION } from './abi.js';
export { ERC8004_TAG, answerFor, responseScore } from './answer.js';
export type { Erc8004Status, Erc8004Validator } from './validator.js';

export interface Erc8004ModeOptions {
  config: Erc8004Config;
  queue: ValidationQueueStore;
  publicBaseUrl: string;
  listCap: number;
  log: Erc8004ValidatorOptions['log'];
}

export interface Erc8004Mode {
  validator: Erc8004Validator;
  routes: FastifyPluginAsync;
}

export async function createErc8004Mode(options: Erc8004ModeOptions): Promise<Erc8004Mode> {
  const { config, queue } = options;
  // Lookups by request hash need their index before the first request is read.
  await queue.erc8004Prepare();
  const chain = createValidatorChain({ rpcUrl: config.rpcUrl, registry: config.registry, privateKey: config.validatorKey });
  const validator = createErc8004Validator({
    queue,
    chain,
    registry: config.registry,
    publicBaseUrl: options.publicBaseUrl,
    pollMs: config.pollMs,
    confirmations: config.confirmations,
    startBlock: config.startBlock,
    log: options.log,
  });
  return { validator, routes: async (scope) => erc8004Routes(scope, { validator, queue, listCap: options.listCap }) };
}
