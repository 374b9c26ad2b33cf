"""heta-plugin-wiki (being written)."""
