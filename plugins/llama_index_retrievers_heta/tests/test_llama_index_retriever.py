"""HetaRetriever in real LlamaIndex query engines over a real knowledge base, with LlamaIndex's own MockLLM (offline)."""

from __future__ import annotations

import pytest
from heta_framework.errors import ModeUnavailableError
from heta_framework.kb import KnowledgeBase
from llama_index.core import Settings
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeRelationship, NodeWithScore, ObjectType
from llama_index.retrievers.heta import HetaRetriever


@pytest.fixture(autouse=True)
def offline_settings():
    """No OpenAI defaults: LlamaIndex's MockLLM echoes its prompt, so a test can see what the model was given."""
    previous = (Settings._llm, Settings._embed_model)
    Settings.llm = MockLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    yield
    Settings._llm, Settings._embed_model = previous


@pytest.fixture
def retriever(kb_path):
    retriever = HetaRetriever(kb_path, mode="sql_text_search", top_k=3)
    yield retriever
    retriever.close()


def assert_is_chunk_of_its_document(hit: NodeWithScore, texts) -> None:
    node = hit.node
    document_id = node.metadata["document_id"]
    topic, text = texts[document_id]
    assert text[node.start_char_idx : node.end_char_idx] == node.get_content()
    source = node.relationships[NodeRelationship.SOURCE]
    assert (source.node_id, source.node_type) == (document_id, ObjectType.DOCUMENT)
    assert node.ref_doc_id == document_id
    assert source.metadata["source"] == node.metadata["source"]
    assert node.metadata["topic"] == topic
    assert node.metadata["mode"] == "sql_text_search"
    assert hit.score == node.metadata["score"]


def test_retrieve_returns_scored_nodes_linked_to_their_documents(retriever, texts):
    hits = retriever.retrieve("Who discovered penicillin?")
    assert hits[0].node.metadata["document_id"] == "fleming"
    assert hits[0].node.node_id == hits[0].node.metadata["id"]
    for hit in hits:
        assert_is_chunk_of_its_document(hit, texts)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # the model sees where a chunk came from, not the scores and offsets meant for the program
    shown = hits[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert "document_id: fleming" in shown and "score" not in shown and "start" not in shown


async def test_aretrieve_and_the_blocking_path_inside_a_running_loop(retriever, texts):
    asynchronous = await retriever.aretrieve("humpback whales songs")
    blocking = retriever.retrieve("humpback whales songs")  # a notebook cell calling the sync API
    assert [h.node.node_id for h in asynchronous] == [h.node.node_id for h in blocking]
    assert asynchronous[0].node.metadata["document_id"] == "whales"
    for hit in asynchronous:
        assert_is_chunk_of_its_document(hit, texts)


def test_retriever_query_engine_answers_from_the_retrieved_nodes(retriever, texts):
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = engine.query("Who discovered penicillin?")
    assert response.source_nodes[0].node.metadata["document_id"] == "fleming"
    assert texts["fleming"][1] in str(response)  # MockLLM echoes the prompt: the retrieved text reached the model
    assert texts["steam"][1] not in str(response)


async def test_retriever_query_engine_async(kb_path, texts):
    retriever = HetaRetriever(kb_path, mode="sql_text_search", filters={"topic": "ocean"})
    try:
        response = await RetrieverQueryEngine.from_args(retriever, llm=MockLLM()).aquery("penicillin")
        assert [n.node.metadata["document_id"] for n in response.source_nodes] == ["whales"]
        assert texts["whales"][1] in str(response)
    finally:
        retriever.close()


def test_a_knowledge_base_object_default_mode_and_a_missing_mode(kb_path):
    kb = KnowledgeBase.load(kb_path)
    retriever = HetaRetriever(kb, top_k=1)  # mode=None: the best mode this knowledge base has
    hits = retriever.retrieve("coral reefs")
    assert [h.node.metadata["document_id"] for h in hits] == ["coral"]
    assert hits[0].node.metadata["mode"] == "sql_text_search"
    retriever.close()  # the caller's knowledge base stays open
    assert kb.sync.query("coral reefs", mode="sql_text_search").results[0].document_id == "coral"
    with pytest.raises(ModeUnavailableError, match="hybrid_search"):
        HetaRetriever(kb, mode="hybrid_search").retrieve("coral")
    kb.close()


def test_the_retriever_reads_only_what_its_principals_may(tmp_path):
    from heta_framework.testing.sample_kb import build_sample_kb, restrict_sample_document

    path = restrict_sample_document(build_sample_kb(tmp_path / "kb"))
    public = HetaRetriever(path, mode="sql_text_search", top_k=4)
    reader = HetaRetriever(path, mode="sql_text_search", top_k=4, principals=["group:medicine"])
    try:
        assert [n.node.metadata["document_id"] for n in public.retrieve("penicillin")] == ["whales"]
        assert "fleming" in {n.node.metadata["document_id"] for n in reader.retrieve("penicillin")}
    finally:
        public.close()
        reader.close()
