// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/**
 * @title TestCollectible
 * @notice Mintable ERC-721 collection for development chains and tests of wallet audiences.
 */
contract TestCollectible is ERC721, Ownable {
    /// @param initialOwner Account allowed to mint.
    constructor(address initialOwner) ERC721("adnet test collectible", "ATC") Ownable(initialOwner) {}

    /// @notice Mints token `tokenId` to `to`. Owner only.
    function mint(address to, uint256 tokenId) external onlyOwner {
        _mint(to, tokenId);
    }
}
