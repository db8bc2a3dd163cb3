"""CTA tasks and standalone units: their configuration, public views, verifiers and completion rules."""
