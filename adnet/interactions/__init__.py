"""Standalone units (poll, feedback, survey): viewers' answers, survey sessions, and the results their owners
read."""
