"""Core's query engines: ``sql_text_search`` and the composed modes."""
