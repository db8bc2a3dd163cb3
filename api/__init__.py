"""The JSON API under /api and the operational /healthz and /metrics: one blueprint per resource. The app registers
``BLUEPRINTS``, and ``PUBLIC_BLUEPRINTS`` (what publishers' pages call) under the parent ``api.http.public_routes``
makes (and, outside production, ``api.dev_rpc``'s relay to the development chain). Handlers validate, call the
domain, and map its result; refusals are mapped to status codes in ``api.errors``."""

from api import (
    ad_units,
    advertisers,
    audiences,
    auth,
    bid,
    categories,
    conversions,
    explainer,
    health,
    house_ads,
    interactions,
    keys,
    members,
    metrics,
    operators,
    publishers,
    reach,
    reports,
    results,
    rewards,
    sellers,
    serve,
    sites,
    statements,
    tasks,
    track,
    webhooks,
)

BLUEPRINTS = (
    health.blueprint, metrics.blueprint, auth.blueprint, publishers.blueprint, results.blueprint, advertisers.blueprint,
    operators.blueprint, keys.blueprint, sites.blueprint,
    webhooks.blueprint, members.blueprint, house_ads.blueprint, reports.blueprint, ad_units.blueprint,
    conversions.blueprint, statements.blueprint, audiences.advertiser_blueprint, sellers.blueprint,
    categories.blueprint, explainer.blueprint,
    reach.blueprint,
)
PUBLIC_BLUEPRINTS = (serve.blueprint, track.blueprint, tasks.blueprint, interactions.blueprint, rewards.blueprint,
                     audiences.blueprint, conversions.public_blueprint, bid.blueprint)
