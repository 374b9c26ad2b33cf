"""The search assets each well-known mode needs, so a composed engine can declare its base mode's needs.

A composed engine must state its assets up front (``available_queries`` is
decided without running anything), and it cannot look its base engine up at
construction time: plugins register engines in any order.
"""

from __future__ import annotations

from collections.abc import Iterable

from heta_framework.contracts.search import SearchAssetRef

CHUNK_VECTOR_INDEX = SearchAssetRef(kind="chunk_vector_index")
CHUNK_FULL_TEXT_INDEX = SearchAssetRef(kind="chunk_full_text_index")
CHUNK_TEXT_INDEX = SearchAssetRef(kind="chunk_text_index")
GRAPH_TABLES = SearchAssetRef(kind="graph_tables")
GRAPH_VECTOR_INDEX = SearchAssetRef(kind="graph_vector_index")

HYBRID_ASSETS = frozenset({CHUNK_VECTOR_INDEX, GRAPH_TABLES, GRAPH_VECTOR_INDEX})
RERANK_ASSETS = HYBRID_ASSETS | {CHUNK_FULL_TEXT_INDEX}
FUSION_ASSETS = frozenset({CHUNK_VECTOR_INDEX, CHUNK_FULL_TEXT_INDEX})

MODE_ASSETS: dict[str, frozenset[SearchAssetRef]] = {
    "vector_search": frozenset({CHUNK_VECTOR_INDEX}),
    "full_text_search": frozenset({CHUNK_FULL_TEXT_INDEX}),
    "sql_text_search": frozenset({CHUNK_TEXT_INDEX}),
    "heta_graph_search": frozenset({GRAPH_TABLES, GRAPH_VECTOR_INDEX}),
    "hybrid_search": HYBRID_ASSETS,
    "heta_rerank_search": RERANK_ASSETS,
    "fusion_search": FUSION_ASSETS,
}


def assets_of(base_mode: str, given: Iterable[SearchAssetRef] | None) -> frozenset[SearchAssetRef]:
    """``given`` if set, else the known assets of ``base_mode``; an unknown mode must be given its assets."""
    if given is not None:
        return frozenset(given)
    try:
        return MODE_ASSETS[base_mode]
    except KeyError:
        raise ValueError(
            f"base_mode {base_mode!r} is not a built-in mode, so its search assets are unknown: "
            f"pass required_assets=frozenset({{SearchAssetRef(kind=...), ...}}) as well."
        ) from None
