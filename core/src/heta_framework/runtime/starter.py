"""The starter recipe ``heta init`` writes: every offline-capable step the installed plugins offer.

``backend="postgres"`` puts every store slot the installed plugins serve with a
``postgres`` type on that server (the connection string from ``HETA_POSTGRES_DSN``);
``multilingual=True`` picks ``local/multilingual-e5-small`` instead of the English-only MiniLM.
With the folder backend, full text goes to a tantivy index when the tantivy library is installed
(``heta-plugin-fulltext`` depends on it): the same ranking as Whoosh's BM25 at a fraction of the
query time (bench/bench_keyword_path.py). Whoosh, the spec's default store, stays the fallback.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

from heta_framework.errors import RecipeError

BACKENDS = ("folder", "postgres")
#: the environment variable a postgres starter recipe names (the recipe never holds the DSN itself)
POSTGRES_DSN_ENV = "HETA_POSTGRES_DSN"

LANGUAGE_MODEL_HINT = """\
# A language model enables heta_rewrite_search, heta_multihop_search, answers
# (--answer) and LLM graph extraction. Any OpenAI-compatible server works:
# [models.language]
# model_name = "openai/gpt-4o-mini"
# base_url = "http://127.0.0.1:8000/v1"
# api_key_env = "OPENAI_API_KEY"
"""


def starter_recipe_toml(registry: Any, *, backend: str = "folder", multilingual: bool = False) -> str:
    steps = registry.items["steps"]
    procedures = registry.items["procedures"]
    providers = registry.items["model_providers"]  # keyed "kind:name"
    lines = ["# Heta recipe. Reference: docs/reference.md", ""]
    has_embedding = "embedding:local" in providers and "embed_chunks" in steps
    if has_embedding:
        model = "local/multilingual-e5-small" if multilingual else "local/all-MiniLM-L6-v2"
        lines += ["[models.embedding]", f'model_name = "{model}"', ""]
    lines += [LANGUAGE_MODEL_HINT]
    lines += _store_tables(registry, backend)
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


def _store_tables(registry: Any, backend: str) -> list[str]:
    if backend not in BACKENDS:
        raise RecipeError(f"Unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}.")
    if backend == "folder":
        return _fast_text_store(registry)  # every other slot's embedded default
    slots = sorted(key.split(":")[0] for key in registry.items["stores"] if key.endswith(f":{backend}"))
    if not slots:
        raise RecipeError(f"No store of type {backend!r} is installed: pip install heta-plugin-{backend}.")
    lines = [f"# every store on PostgreSQL; the connection string is read from ${POSTGRES_DSN_ENV}", ""]
    for slot in slots:
        lines += [f"[stores.{slot}]", f'type = "{backend}"', f'dsn_env = "{POSTGRES_DSN_ENV}"', ""]
    return lines


def _fast_text_store(registry: Any) -> list[str]:
    if "index_full_text" not in registry.items["steps"] or "text:tantivy" not in registry.items["stores"]:
        return []
    if find_spec("tantivy") is None:  # the store type is registered whether or not its library is installed
        return []
    return ["[stores.text]", 'type = "tantivy"   # BM25 in Rust; "whoosh" is the pure-Python one', ""]
