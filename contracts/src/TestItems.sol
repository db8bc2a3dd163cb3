// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";

/**
 * @title TestItems
 * @notice Mintable ERC-1155 collection for development chains and tests of wallet audiences.
 */
contract TestItems is ERC1155, Ownable {
    /// @param initialOwner Account allowed to mint.
    constructor(address initialOwner) ERC1155("") Ownable(initialOwner) {}

    /// @notice Mints `amount` of token `id` to `to`. Owner only.
    function mint(address to, uint256 id, uint256 amount) external onlyOwner {
        _mint(to, id, amount, "");
    }
}
