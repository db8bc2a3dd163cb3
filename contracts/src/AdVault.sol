// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";

/**
 * @title AdVault
 * @notice Custody contract of the adnet advertising network.
 *
 * Advertisers fund campaigns by depositing the payout token (G$) or the
 * platform token (SOV). Earnings are paid out through claims: the network's
 * off-chain signer issues an EIP-712 signed `Claim` voucher, and anyone may
 * submit it; the tokens always go to the recipient named in the voucher.
 * Each voucher carries a unique `claimRef` and a per-signer `nonce`, both of
 * which are consumed on use, so a voucher pays out at most once.
 *
 * Several vouchers can be paid in one transaction with `claimBatch`, under
 * exactly the same rules, each voucher on its own.
 *
 * The owner manages the set of authorized signers, the protocol rate
 * between SOV and G$, and can pause deposits and claims.
 */
contract AdVault is EIP712, Ownable2Step, Pausable, ReentrancyGuard {
    using SafeERC20 for IERC20;

    /// @notice EIP-712 type hash of the `Claim` struct signed off-chain.
    bytes32 public constant CLAIM_TYPEHASH = keccak256(
        "Claim(address recipient,address token,uint256 amount,bytes32 claimRef,uint256 nonce,uint256 deadline)"
    );

    /// @notice A signed `Claim` voucher with its signature, as `claimBatch` takes it.
    struct SignedClaim {
        address recipient;
        address token;
        uint256 amount;
        bytes32 claimRef;
        uint256 nonce;
        uint256 deadline;
        bytes signature;
    }

    /// @notice Payout token (G$).
    address public immutable gs;

    /// @notice Platform token (SOV).
    address public immutable sov;

    /**
     * @notice Protocol rate: smallest units of G$ per 1e18 smallest units of SOV,
     * i.e. an 18-decimal fixed-point G$-per-SOV price (1e18 means 1:1).
     */
    uint256 public rate;

    mapping(bytes32 claimRef => bool) private _claimed;
    mapping(address signer => mapping(uint256 nonce => bool)) private _nonceUsed;
    mapping(address signer => bool) private _signers;

    /// @notice Emitted when `sender` deposits `amount` of `token`, credited to the off-chain account `accountRef`.
    event Deposited(address indexed sender, address indexed token, uint256 amount, bytes32 indexed accountRef);

    /// @notice Emitted when the voucher `claimRef`, signed by `signer` with `nonce`, pays `amount` of `token` to `recipient`.
    event Claimed(
        bytes32 indexed claimRef,
        address indexed recipient,
        address indexed token,
        uint256 amount,
        address signer,
        uint256 nonce
    );

    /// @notice Emitted when `signer` is authorized (`authorized` true) or revoked (false).
    event SignerUpdated(address indexed signer, bool authorized);

    /// @notice Emitted when the protocol rate changes (`previousRate` is 0 at deployment).
    event RateUpdated(uint256 previousRate, uint256 newRate);

    /// @notice `gs` and `sov` must be two distinct, non-zero token addresses.
    error InvalidTokenPair(address gs, address sov);
    /// @notice `token` is neither G$ nor SOV.
    error UnsupportedToken(address token);
    /// @notice A zero amount was given.
    error ZeroAmount();
    /// @notice The zero address was given where an account is required.
    error ZeroAddress();
    /// @notice The rate must be greater than zero.
    error InvalidRate();
    /// @notice The voucher's `deadline` has passed.
    error ClaimExpired(uint256 deadline);
    /// @notice The voucher `claimRef` has already been paid.
    error ClaimAlreadyProcessed(bytes32 claimRef);
    /// @notice `signer` has already used `nonce`.
    error NonceAlreadyUsed(address signer, uint256 nonce);
    /// @notice The voucher was signed by `signer`, which is not an authorized signer.
    error UnauthorizedSigner(address signer);
    /// @notice `claimBatch` was given no voucher.
    error EmptyBatch();

    /**
     * @param gs_ Payout token (G$).
     * @param sov_ Platform token (SOV).
     * @param initialSigner First authorized claim signer.
     * @param initialRate Initial protocol rate (see {rate}); must be greater than zero.
     * @param initialOwner Owner of the vault.
     */
    constructor(address gs_, address sov_, address initialSigner, uint256 initialRate, address initialOwner)
        EIP712("adnet", "1")
        Ownable(initialOwner)
    {
        if (gs_ == address(0) || sov_ == address(0) || gs_ == sov_) revert InvalidTokenPair(gs_, sov_);
        gs = gs_;
        sov = sov_;
        _setSigner(initialSigner, true);
        _setRate(initialRate);
    }

    /**
     * @notice Deposits `amount` of `token` (G$ or SOV) from the caller, who must have
     * approved the vault beforehand. `accountRef` identifies the off-chain account to credit.
     */
    function deposit(address token, uint256 amount, bytes32 accountRef) external whenNotPaused nonReentrant {
        _requireSupportedToken(token);
        if (amount == 0) revert ZeroAmount();
        IERC20(token).safeTransferFrom(msg.sender, address(this), amount);
        emit Deposited(msg.sender, token, amount, accountRef);
    }

    /**
     * @notice Pays out a signed claim voucher. Anyone may submit it; the tokens go to `recipient`.
     * @dev Reverts if the voucher expired, names an unsupported token or the zero recipient,
     * was already paid, reuses the signer's nonce, or is not signed (as a canonical low-s
     * 65-byte signature) by an authorized signer.
     * @param recipient Account receiving the tokens.
     * @param token G$ or SOV.
     * @param amount Amount of `token`, in its smallest units.
     * @param claimRef Unique reference of the voucher.
     * @param nonce Signer-scoped nonce; each may be used once.
     * @param deadline Last timestamp (inclusive) at which the voucher is valid.
     * @param signature EIP-712 signature of the `Claim` struct over this vault's domain.
     */
    function claim(
        address recipient,
        address token,
        uint256 amount,
        bytes32 claimRef,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external whenNotPaused nonReentrant {
        _claim(recipient, token, amount, claimRef, nonce, deadline, signature);
    }

    /**
     * @notice Pays out several signed claim vouchers in one transaction, each under the rules of {claim}:
     * each voucher at most once and only before its deadline. All or nothing: if any voucher is refused
     * (expired, already paid, repeated within the batch, a used nonce, a bad signature), the whole
     * transaction reverts with that voucher's error and pays nothing.
     * @param claims The vouchers with their signatures.
     */
    function claimBatch(SignedClaim[] calldata claims) external whenNotPaused nonReentrant {
        if (claims.length == 0) revert EmptyBatch();
        for (uint256 i = 0; i < claims.length; ++i) {
            SignedClaim calldata voucher = claims[i];
            _claim(
                voucher.recipient,
                voucher.token,
                voucher.amount,
                voucher.claimRef,
                voucher.nonce,
                voucher.deadline,
                voucher.signature
            );
        }
    }

    function _claim(
        address recipient,
        address token,
        uint256 amount,
        bytes32 claimRef,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) private {
        if (block.timestamp > deadline) revert ClaimExpired(deadline);
        _requireSupportedToken(token);
        if (recipient == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        if (_claimed[claimRef]) revert ClaimAlreadyProcessed(claimRef);

        bytes32 digest = claimDigest(recipient, token, amount, claimRef, nonce, deadline);
        address signer = ECDSA.recoverCalldata(digest, signature);
        if (!_signers[signer]) revert UnauthorizedSigner(signer);
        if (_nonceUsed[signer][nonce]) revert NonceAlreadyUsed(signer, nonce);

        _claimed[claimRef] = true;
        _nonceUsed[signer][nonce] = true;

        IERC20(token).safeTransfer(recipient, amount);
        emit Claimed(claimRef, recipient, token, amount, signer, nonce);
    }

    /// @notice Whether the voucher `claimRef` has been paid.
    function isClaimed(bytes32 claimRef) external view returns (bool) {
        return _claimed[claimRef];
    }

    /// @notice Whether `signer` has used `nonce`.
    function isNonceUsed(address signer, uint256 nonce) external view returns (bool) {
        return _nonceUsed[signer][nonce];
    }

    /// @notice Whether `account` is an authorized claim signer.
    function isSigner(address account) external view returns (bool) {
        return _signers[account];
    }

    /**
     * @notice EIP-712 digest of a `Claim` under this vault's domain: the hash the signer signs.
     * Off-chain code can compare it with its own typed-data hash.
     */
    function claimDigest(
        address recipient,
        address token,
        uint256 amount,
        bytes32 claimRef,
        uint256 nonce,
        uint256 deadline
    ) public view returns (bytes32) {
        return _hashTypedDataV4(
            keccak256(abi.encode(CLAIM_TYPEHASH, recipient, token, amount, claimRef, nonce, deadline))
        );
    }

    /// @notice Authorizes (`authorized` true) or revokes a claim signer. Owner only.
    function setSigner(address signer, bool authorized) external onlyOwner {
        _setSigner(signer, authorized);
    }

    /// @notice Sets the protocol rate (see {rate}); must be greater than zero. Owner only.
    function setRate(uint256 newRate) external onlyOwner {
        _setRate(newRate);
    }

    /// @notice Stops deposits and claims. Owner only.
    function pause() external onlyOwner {
        _pause();
    }

    /// @notice Resumes deposits and claims. Owner only.
    function unpause() external onlyOwner {
        _unpause();
    }

    function _setSigner(address signer, bool authorized) private {
        if (signer == address(0)) revert ZeroAddress();
        _signers[signer] = authorized;
        emit SignerUpdated(signer, authorized);
    }

    function _setRate(uint256 newRate) private {
        if (newRate == 0) revert InvalidRate();
        emit RateUpdated(rate, newRate);
        rate = newRate;
    }

    function _requireSupportedToken(address token) private view {
        if (token != gs && token != sov) revert UnsupportedToken(token);
    }
}
