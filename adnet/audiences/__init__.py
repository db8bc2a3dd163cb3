"""Wallet audiences: which proven wallets match which campaigns' on-chain rules, worked out off the request path."""
