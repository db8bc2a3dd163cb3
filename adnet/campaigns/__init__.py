"""What advertisers buy: campaigns with their settings and creatives, their review, their funding and their
lifecycle."""
