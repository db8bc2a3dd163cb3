"""Webhooks: an account's endpoints, the outbox its events are written to in the transaction of what they report,
and their signed delivery with retries (docs/webhooks.md)."""
