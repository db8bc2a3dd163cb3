"""Who takes part: publishers and their sites, advertisers, operators, and wallet sign-in with its sessions."""
