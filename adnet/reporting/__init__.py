"""What publishers, advertisers and operators read about what happened: dashboards, site and campaign reports,
platform revenue, charts and CSV exports. Nothing here writes."""
