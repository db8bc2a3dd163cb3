"""Putting ads on publishers' pages and counting them: the serving index and selection, tracking tokens, the
tracking rules and the batch writer that records and bills events, and the embed script's facts."""
