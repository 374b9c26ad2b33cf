"""Extractors turn one chunk into entities and relations: ``llm`` (a language model) or ``nlp`` (offline heuristics)."""
