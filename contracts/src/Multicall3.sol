// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/**
 * @title Multicall3
 * @notice The `aggregate3` entry of Multicall3 (github.com/mds1/multicall, deployed on most chains at
 *         0xcA11bde05977b3631167028862bE2a173976CA11), with its ABI, for development chains that lack it:
 *         many read calls in one `eth_call`, each allowed to fail on its own.
 */
contract Multicall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice Calls each target with its data; reverts when a call that may not fail fails.
    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
        uint256 length = calls.length;
        returnData = new Result[](length);
        for (uint256 i = 0; i < length; i++) {
            Call3 calldata call = calls[i];
            (bool success, bytes memory data) = call.target.call(call.callData);
            require(success || call.allowFailure, "Multicall3: call failed");
            returnData[i] = Result(success, data);
        }
    }
}
