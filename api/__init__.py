"""The public JSON API under /api and the operational /healthz: one blueprint per resource, which the app
registers in the order of ``BLUEPRINTS`` (and, outside production, ``api.dev_rpc``'s relay to the development
chain). Handlers validate, call the domain, and map its result; refusals are mapped to status codes in
``api.errors``."""

from api import advertisers, auth, health, interactions, operators, publishers, serve, tasks, track

BLUEPRINTS = (
    health.blueprint, auth.blueprint, publishers.blueprint, serve.blueprint, track.blueprint, tasks.blueprint,
    interactions.blueprint, advertisers.blueprint, operators.blueprint,
)
