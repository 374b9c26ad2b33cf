"""Robust language-model calls for graph steps: bounded concurrency, retries, validation retries and a persistent cache."""
