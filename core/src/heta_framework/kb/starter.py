"""The starter recipe ``heta init`` writes: every offline-capable step the installed plugins offer."""

from __future__ import annotations

from typing import Any

LANGUAGE_MODEL_HINT = """\
# A language model enables heta_rewrite_search, heta_multihop_search, answers
# (--answer) and LLM graph extraction. Any OpenAI-compatible server works:
# [models.language]
# model_name = "openai/gpt-4o-mini"
# base_url = "http://127.0.0.1:8000/v1"
# api_key_env = "OPENAI_API_KEY"
"""


def starter_recipe_toml(registry: Any) -> str:
    steps = registry.items["steps"]
    procedures = registry.items["procedures"]
    providers = registry.items["model_providers"]  # keyed "kind:name"
    lines = ["# Heta recipe. Reference: docs/configuration.md", ""]
    has_embedding = "embedding:local" in providers and "embed_chunks" in steps
    if has_embedding:
        lines += ["[models.embedding]", 'model_name = "local/all-MiniLM-L6-v2"', ""]
    lines += [LANGUAGE_MODEL_HINT]
    entries: list[list[str]] = [
        ['step = "parse_documents"'],
        ['step = "split_documents"', "chunk_size = 200", "chunk_overlap = 30"],
        ['step = "persist_chunks"'],
    ]
    if has_embedding and "index_vectors" in steps:
        entries += [['step = "embed_chunks"'], ['step = "index_vectors"']]
    if "index_full_text" in steps:
        entries += [['step = "index_full_text"']]
    if has_embedding and "heta_graph" in procedures:
        entries += [['step = "heta_graph"', 'extractor = "nlp"   # "llm" with a [models.language]']]
    for entry in entries:
        lines += ["[[steps]]", *entry, ""]
    return "\n".join(lines)
