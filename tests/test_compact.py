"""kb.compact(): after delete_documents, a deleted document's text is physically gone from every file of the folder."""

from __future__ import annotations

from pathlib import Path

from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry

UNIQUE = "Zyxwquartzelbow"
KEPT = "Bergenwhalesong"


def files_holding(root: Path, text: str) -> list[str]:
    """Every file under ``root`` whose raw bytes contain ``text`` (UTF-8, lower case or UTF-16)."""
    needles = {text.encode(), text.lower().encode(), text.encode("utf-16-le")}
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles))


async def test_deleted_text_is_gone_from_every_file_after_compact(tmp_path):
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    recipe = Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), EmbedChunks(), IndexVectors(), IndexFullText(), HetaGraphProcedure(extractor="nlp")],
    )
    root = tmp_path / "kb"
    kb = KnowledgeBase.create(root, recipe, registry=PluginRegistry.from_entry_points(strict=True))
    secret = SourceDocument(text=f"The {UNIQUE} Foundation funds research in Oslo. {UNIQUE} was founded by Ada.", id="secret", name="secret.txt")
    others = [SourceDocument(text=f"Note {i}: the {KEPT} of whales near Bergen and the ocean.", id=f"note{i}", name=f"note{i}.txt") for i in range(4)]
    await kb.build([secret, *others])
    await kb.delete_documents(["secret"])
    assert not (await kb.query(UNIQUE, mode="full_text_search")).results  # gone from every store's answers...
    lingering = files_holding(root, UNIQUE)
    assert lingering  # ...but not yet from the files: freed SQLite pages, unmerged Whoosh segments

    report = kb.compact()

    assert files_holding(root, UNIQUE) == []
    assert "stores.text" in report.stores and "chunks.sqlite" in report.sqlite_files and not report.busy_files
    assert files_holding(root, KEPT)  # the documents that stay are untouched
    for mode in ("full_text_search", "sql_text_search", "vector_search", "heta_graph_search"):
        assert (await kb.query(f"{KEPT} whales Bergen", mode=mode)).results, mode
    await kb.build([SourceDocument(text="A later note about dolphins.", id="later", name="later.txt")])  # still writable
    assert (await kb.query("dolphins", mode="full_text_search")).results
    kb.close()
