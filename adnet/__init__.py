"""adnet: an advertising network for Web3 sites."""
