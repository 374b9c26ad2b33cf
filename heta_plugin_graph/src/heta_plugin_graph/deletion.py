"""Deleting documents from the graph: no language model, one SQLite transaction with the vector deletes.

Evidence rows of the documents go, their chunk text goes, and so does every
entity and relation that no remaining chunk supports (relations also go with
either endpoint). The vector deletes run inside the transaction: if they fail,
nothing in SQLite changes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from heta_framework.contracts.graph_removal import graph_removal_preview
from heta_framework.kb.stores import GraphStore, RemovedFacts

from heta_plugin_graph.vectors import existing_collections
from heta_plugin_graph.writer import vector_deleter


async def delete_graph_documents(context: Any, document_ids: list[str]) -> RemovedFacts:
    graph: GraphStore = context.store("graph")
    entity_collection, relation_collection = existing_collections(context.store("vector"))
    removed = await asyncio.to_thread(
        graph.delete_documents, document_ids, vector_deleter(entity_collection, relation_collection)
    )
    context.count("graph_entities_deleted", len(removed.entity_ids))
    context.count("graph_relations_deleted", len(removed.relation_ids))
    return removed


async def preview_graph_removal(context: Any, document_ids: list[str]) -> dict[str, int]:
    """What ``delete_graph_documents`` would remove and what would only lose support, read from the store."""
    return await asyncio.to_thread(graph_removal_preview, context.store("graph"), document_ids)
