"""HetaRetriever over vector_search: real FAISS files and the offline MiniLM model (heta-plugin-vector + heta-plugin-local)."""

from __future__ import annotations

import pytest
from langchain_heta import HetaRetriever

pytestmark = pytest.mark.slow

VECTOR_RECIPE = {
    "models": {"embedding": {"model_name": "local/all-MiniLM-L6-v2"}},
    "steps": [
        {"step": "parse_documents"},
        {"step": "split_documents"},
        {"step": "persist_chunks"},
        {"step": "embed_chunks"},
        {"step": "index_vectors"},
    ],
}


@pytest.fixture(scope="module")
def vector_retriever(tmp_path_factory, build_knowledge_base):
    path = build_knowledge_base(tmp_path_factory.mktemp("heta-vector") / "kb", VECTOR_RECIPE)
    retriever = HetaRetriever(knowledge_base=path, mode="vector_search", top_k=2)
    yield retriever
    retriever.close()


def test_vector_search_finds_by_meaning_not_by_words(vector_retriever, texts):
    # no word of the question is in the coral text: only the embedding links them
    documents = vector_retriever.invoke("Which sea creatures build underwater structures?")
    assert documents[0].metadata["document_id"] == "coral"
    assert documents[0].page_content == texts["coral"][1]
    assert documents[0].metadata["mode"] == "vector_search"
    assert documents[0].metadata["found_by"] == ["vector_search"]
    assert len(documents) == 2


async def test_vector_search_async_with_a_filter(vector_retriever):
    documents = await vector_retriever.ainvoke("antibiotics and bacteria", filters={"topic": ["ocean", "engineering"]})
    assert documents and {d.metadata["topic"] for d in documents} <= {"ocean", "engineering"}
    assert "fleming" not in {d.metadata["document_id"] for d in documents}
