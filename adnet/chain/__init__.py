"""Everything adnet does with the chain: the client, the contracts, the development chain, deployment, the
binding of the database to one chain, the watcher and the ``adnet chain`` commands. Nothing else imports web3."""
