"""The ``adnet`` command: serving, migrations, demo data, the audit, the chain and operators' tasks."""
