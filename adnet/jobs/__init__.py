"""Periodic work, in one scheduler: the serving index and its counters, settling campaigns that are due, releasing
expired claims, and following the chain."""
