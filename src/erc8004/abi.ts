/**
 * @module The ERC-8004 Validation Registry ABI, as published in the official
 * erc-8004/erc-8004-contracts repository at commit b9e466c250744a7e06b13dff9d3c2844ed64f825
 * (abis/ValidationRegistry.json, contract version 2.0.0, where `tag` is a string):
 * the events and functions the validator uses or a client reads. The one place
 * the ABI is written down; the tests compare it with the compiled contract.
 */

/** Commit of erc-8004/erc-8004-contracts this ABI and the test contracts come from. */
export const ERC8004_CONTRACTS_COMMIT = 'b9e466c250744a7e06b13dff9d3c2844ed64f825';
/** What getVersion() of that Validation Registry answers. */
export const VALIDATION_REGISTRY_VERSION = '2.0.0';

export const validationRegistryAbi = [
  { anonymous: false, inputs: [{ indexed: true, name: 'validatorAddress', type: 'address' }, { indexed: true, name: 'agentId', type: 'uint256' }, { indexed: false, name: 'requestURI', type: 'string' }, { indexed: true, name: 'requestHash', type: 'bytes32' }], name: 'ValidationRequest', type: 'event' },
  { anonymous: false, inputs: [{ indexed: true, name: 'validatorAddress', type: 'address' }, { indexed: true, name: 'agentId', type: 'uint256' }, { indexed: true, name: 'requestHash', type: 'bytes32' }, { indexed: false, name: 'response', type: 'uint8' }, { indexed: false, name: 'responseURI', type: 'string' }, { indexed: false, name: 'responseHash', type: 'bytes32' }, { indexed: false, name: 'tag', type: 'string' }], name: 'ValidationResponse', type: 'event' },
  { inputs: [{ name: 'agentId', type: 'uint256' }], name: 'getAgentValidations', outputs: [{ name: '', type: 'bytes32[]' }], stateMutability: 'view', type: 'function' },
  { inputs: [], name: 'getIdentityRegistry', outputs: [{ name: '', type: 'address' }], stateMutability: 'view', type: 'function' },
  { inputs: [{ name: 'agentId', type: 'uint256' }, { name: 'validatorAddresses', type: 'address[]' }, { name: 'tag', type: 'string' }], name: 'getSummary', outputs: [{ name: 'count', type: 'uint64' }, { name: 'avgResponse', type: 'uint8' }], stateMutability: 'view', type: 'function' },
  { inputs: [{ name: 'requestHash', type: 'bytes32' }], name: 'getValidationStatus', outputs: [{ name: 'validatorAddress', type: 'address' }, { name: 'agentId', type: 'uint256' }, { name: 'response', type: 'uint8' }, { name: 'responseHash', type: 'bytes32' }, { name: 'tag', type: 'string' }, { name: 'lastUpdate', type: 'uint256' }], stateMutability: 'view', type: 'function' },
  { inputs: [{ name: 'validatorAddress', type: 'address' }], name: 'getValidatorRequests', outputs: [{ name: '', type: 'bytes32[]' }], stateMutability: 'view', type: 'function' },
  { inputs: [], name: 'getVersion', outputs: [{ name: '', type: 'string' }], stateMutability: 'pure', type: 'function' },
  { inputs: [{ name: 'validatorAddress', type: 'address' }, { name: 'agentId', type: 'uint256' }, { name: 'requestURI', type: 'string' }, { name: 'requestHash', type: 'bytes32' }], name: 'validationRequest', outputs: [], stateMutability: 'nonpayable', type: 'function' },
  { inputs: [{ name: 'requestHash', type: 'bytes32' }, { name: 'response', type: 'uint8' }, { name: 'responseURI', type: 'string' }, { name: 'responseHash', type: 'bytes32' }, { name: 'tag', type: 'string' }], name: 'validationResponse', outputs: [], stateMutability: 'nonpayable', type: 'function' },
] as const;
