"""Runs you pay for: the shared ledger and budgets, rate limits per endpoint, a model job's progress line
(docs/spend.md)."""
