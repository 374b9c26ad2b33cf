"""Core's embedded stores: a folder of objects and a SQLite database for chunks."""
