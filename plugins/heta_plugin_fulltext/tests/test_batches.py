"""One huge document is indexed in batches of batch_size chunks, exactly like many small documents."""

from __future__ import annotations

import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument, StoreConfig
from heta_plugin_fulltext import IndexFullText

SENTENCE = "Sea otters float on their backs and crack shells on stones they carry. "


@pytest.mark.parametrize("documents", [1, 10])
async def test_commits_never_exceed_batch_size_whatever_the_document_size(tmp_path, registry, backend, monkeypatch, documents):
    recipe = Recipe(
        stores={"text": StoreConfig(type=backend)},
        steps=[ParseDocuments(), SplitDocuments(chunk_size=20, chunk_overlap=0), IndexFullText(batch_size=7)],
    )
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    store = kb.get_component("stores.text")
    sizes: list[int] = []
    real_upsert = store.upsert

    def counting_upsert(chunks):
        sizes.append(len(chunks))
        return real_upsert(chunks)

    monkeypatch.setattr(store, "upsert", counting_upsert)
    per_document = 60 // documents
    sources = [SourceDocument(id=f"d{i}", text=SENTENCE * per_document, name=f"d{i}.txt") for i in range(documents)]
    report = await kb.build(sources)
    [step] = [s for s in report.steps if s.name == "index_full_text"]
    chunks = step.stats["chunks_indexed"]
    assert chunks >= 40
    assert max(sizes) <= 7 and sum(sizes) == chunks
    assert len(sizes) == -(-chunks // 7)  # as few commits as the batch size allows
    assert store.count() == chunks
    kb.close()
