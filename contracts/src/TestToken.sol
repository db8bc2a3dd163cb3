// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * @title TestToken
 * @notice Mintable 18-decimal ERC-20 standing in for G$ and SOV on development chains.
 */
contract TestToken is ERC20, Ownable {
    /**
     * @param name_ Token name.
     * @param symbol_ Token symbol.
     * @param initialOwner Account allowed to mint.
     */
    constructor(string memory name_, string memory symbol_, address initialOwner)
        ERC20(name_, symbol_)
        Ownable(initialOwner)
    {}

    /// @notice Mints `amount` tokens to `to`. Owner only.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
