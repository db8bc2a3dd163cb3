"""What every area of adnet shares and nothing in it depends on: identifiers, token amounts, wallets, time and the
domain's errors."""
