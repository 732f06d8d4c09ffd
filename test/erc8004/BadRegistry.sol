// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// A Validation Registry that misbehaves, for the tests: it logs the ValidationRequest topic over data that does
/// not decode, logs well-formed requests, and refuses every read of a status and every answer.
contract BadRegistry {
    event ValidationRequest(address indexed validatorAddress, uint256 indexed agentId, string requestURI, bytes32 indexed requestHash);

    function garbage(address validator, bytes32 requestHash) external {
        bytes32 topic = ValidationRequest.selector;
        assembly {
            mstore(0, 0xdeadbeef)
            log4(0, 7, topic, validator, 1, requestHash)
        }
    }

    function request(address validator, uint256 agentId, bytes32 requestHash) external {
        emit ValidationRequest(validator, agentId, "", requestHash);
    }

    function getValidationStatus(bytes32) external pure returns (address, uint256, uint8, bytes32, string memory, uint256) {
        revert("refused");
    }

    function validationResponse(bytes32, uint8, string calldata, bytes32, string calldata) external pure {
        revert("refused");
    }
}
