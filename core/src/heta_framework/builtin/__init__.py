"""Core's own plugin: parsers, ParseDocuments/SplitDocuments/PersistChunks, sql_text_search, composed modes.

It registers through the same hooks as any third-party plugin (see ``plugin.py``).
"""
