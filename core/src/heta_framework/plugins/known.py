"""Which first-party distribution usually provides a name, so errors can say what to install."""

from __future__ import annotations

_VECTOR = "heta-plugin-vector"
_GRAPH = "heta-plugin-graph"
_FULLTEXT = "heta-plugin-fulltext"
_HIRAG = "heta-plugin-hirag"
_LEANRAG = "heta-plugin-leanrag"
_WIKI = "heta-plugin-wiki"
_GRAPHRAG = "heta-plugin-graphrag"
_LIGHTRAG = "heta-plugin-lightrag"
_SHEETS = "heta-plugin-sheets"
_OFFICE = "heta-plugin-office"
_MINERU = "heta-plugin-mineru"

#: query modes of first-party plugins (``heta modes`` lists those not installed)
KNOWN_MODES: dict[str, str] = {
    "hi_rag_query": _HIRAG,
    "hi_rag_nobridge_query": _HIRAG,
    "hi_rag_local_query": _HIRAG,
    "hi_rag_global_query": _HIRAG,
    "hi_rag_bridge_query": _HIRAG,
    "graphrag_global_search": _GRAPHRAG,
    "graphrag_local_search": _GRAPHRAG,
    "lightrag_local": _LIGHTRAG,
    "lightrag_global": _LIGHTRAG,
    "lightrag_hybrid": _LIGHTRAG,
    "lightrag_mix": _LIGHTRAG,
    "lean_rag_query": _LEANRAG,
    "wiki_vector_search": _WIKI,
    "wiki_full_text_search": _WIKI,
    "wiki_hybrid_search": _WIKI,
    "wiki_agent_search": _WIKI,
    "agent_search": _WIKI,
    "vector_search": _VECTOR,
    "full_text_search": _FULLTEXT,
    "heta_graph_search": _GRAPH,
    "memory_search": "heta-server",
}

KNOWN_PROVIDERS: dict[str, str] = {
    **KNOWN_MODES,
    # steps
    "embed_chunks": _VECTOR,
    "index_vectors": _VECTOR,
    "index_full_text": _FULLTEXT,
    "merge_chunks": _GRAPH,
    "rechunk_documents": _GRAPH,
    "extract_entities": _GRAPH,
    "extract_relations": _GRAPH,
    "deduplicate_entities": _GRAPH,
    "deduplicate_relations": _GRAPH,
    "build_graph": _GRAPH,
    "merge_graph_into_store": _GRAPH,
    "heta_graph": _GRAPH,
    "hirag_hierarchical_aggregation": _HIRAG,
    "hirag_community": _HIRAG,
    "hirag_bridges": _HIRAG,
    "leanrag_aggregate": _LEANRAG,
    "detect_communities": _GRAPHRAG,
    "community_reports": _GRAPHRAG,
    "build_wiki_pages": _WIKI,
    "split_wiki_pages": _WIKI,
    "index_wiki_pages": _WIKI,
    # the assets modes need
    "hirag_summary_entities": f"{_HIRAG} (step hirag_hierarchical_aggregation)",
    "hirag_community_reports": f"{_HIRAG} (step hirag_community)",
    "hirag_bridge_paths": f"{_HIRAG} (step hirag_bridges)",
    "graphrag_community_reports": f"{_GRAPHRAG} (step community_reports)",
    "leanrag_hierarchy": f"{_LEANRAG} (step leanrag_aggregate)",
    "wiki_pages": f"{_WIKI} (step build_wiki_pages)",
    "wiki_sections": f"{_WIKI} (step split_wiki_pages)",
    "wiki_section_vectors": f"{_WIKI} (step index_wiki_pages)",
    "chunk_vector_index": f"{_VECTOR} (step index_vectors)",
    "chunk_full_text_index": f"{_FULLTEXT} (step index_full_text)",
    "chunk_text_index": "heta-core (step persist_chunks)",
    "graph_tables": f"{_GRAPH} (step build_graph)",
    "graph_vector_index": f"{_GRAPH} (step build_graph)",
    # stores
    "faiss": _VECTOR,
    "whoosh": _FULLTEXT,
    "tantivy": _FULLTEXT,
    "sqlite_graph": _GRAPH,
    "milvus": "heta-plugin-milvus",
    "postgres": "heta-plugin-postgres",
    # executors
    "ray": "heta-plugin-ray",
    # model providers
    "openai": "heta-plugin-openai",
    "local": "heta-plugin-local (embeddings) or heta-plugin-rerank (cross-encoders)",
    "cohere": "heta-plugin-rerank",
    "ocr": "heta-plugin-ocr",
    # parsers (a recipe's [parsers.documents] only = [...] or options.<name>)
    "xlsx": _SHEETS,
    "ods": _SHEETS,
    "pptx": _OFFICE,
    "legacy_office": _OFFICE,
    "mineru": _MINERU,
    # components
    "models.language": "a [models.language] entry in the recipe (e.g. model_name = \"openai/gpt-4o-mini\")",
    "models.embedding": "a [models.embedding] entry in the recipe (e.g. model_name = \"local/all-MiniLM-L6-v2\")",
    "models.reranker": "a [models.reranker] entry in the recipe",
}


#: file types that core does not read, and what reads them (``unsupported_document_type`` says so)
KNOWN_FILE_TYPES: dict[str, str] = {
    ".xlsx": _SHEETS,
    ".xlsm": _SHEETS,
    ".ods": _SHEETS,
    ".pptx": _OFFICE,
    ".doc": f"{_OFFICE} (with LibreOffice installed) or {_MINERU} (a layout service)",
    ".ppt": f"{_OFFICE} (with LibreOffice installed) or {_MINERU} (a layout service)",
}


def file_type_hint(name: str) -> str:
    """`` .pptx files are read by heta-plugin-office.`` for a file type a first-party plugin reads, else ``""``."""
    lowered = name.lower()
    for extension, provider in KNOWN_FILE_TYPES.items():
        if lowered.endswith(extension):
            return f" {extension} files are read by {provider}."
    return ""


def provider_hint(text: str) -> str:
    """`` (provided by X)`` for the first known name found in ``text``, else ``""``."""
    words = text.replace(":", " ").split()
    for word in words:
        if word in KNOWN_PROVIDERS:
            return f" (provided by {KNOWN_PROVIDERS[word]})"
    return ""


def known_distribution(name: str) -> str | None:
    """The first-party distribution that usually provides ``name`` (a step, mode, asset or store), if one does."""
    hint = KNOWN_PROVIDERS.get(name, "")
    first = hint.split(" ", 1)[0]
    return first if first.startswith("heta-") else None


def known_modes() -> dict[str, str]:
    """Query modes of first-party plugins -> their distribution (so ``heta modes`` can list those not installed)."""
    return {name: dist for name in KNOWN_MODES if (dist := known_distribution(name))}
