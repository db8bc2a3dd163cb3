"""The portal: server-rendered pages under /portal for publishers, advertisers and operators, the site's front
page and the embed script's own URLs; one blueprint per part (``portal.pages.portal_blueprint``, whose refusals are
HTML pages), which the app registers in the order of ``BLUEPRINTS``."""

from portal import (
    ad_units,
    advertisers,
    auth,
    balance,
    breakdowns,
    dashboard,
    demo,
    home,
    house_ads,
    keys,
    members,
    operators,
    pages,
    reach,
    rewards,
    sellers,
    site_settings,
    sites,
    statements,
    webhooks,
)

BLUEPRINTS = (
    pages.blueprint, home.blueprint, demo.blueprint, auth.blueprint, dashboard.blueprint, sites.blueprint,
    balance.blueprint, advertisers.blueprint, operators.blueprint, keys.blueprint, site_settings.blueprint,
    webhooks.blueprint, members.blueprint, rewards.blueprint, house_ads.blueprint, breakdowns.blueprint,
    ad_units.blueprint, sellers.blueprint, statements.blueprint, reach.blueprint,
)
