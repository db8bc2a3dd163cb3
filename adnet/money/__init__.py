"""Money: the ledger, the claims that pay value out of the vault and the rewards they carry, deposits into it,
withdrawals, exchanges at the protocol rate, and the audit that checks the books against the chain."""
