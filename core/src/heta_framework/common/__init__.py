"""Pieces every plugin shares: model configuration, secrets, retries."""
