"""HetaRetriever in real LangChain pipelines over a real knowledge base (SQLite chunks; FAISS + MiniLM for vectors)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from heta_framework.errors import ModeUnavailableError
from heta_framework.kb import KnowledgeBase
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_heta import HetaRetriever


@pytest.fixture
def retriever(kb_path):
    retriever = HetaRetriever(knowledge_base=kb_path, mode="sql_text_search", top_k=3)
    yield retriever
    retriever.close()


def assert_is_chunk_of_its_document(document: Document, texts) -> None:
    """The metadata points back into the source text: the offsets cut out exactly this chunk."""
    metadata = document.metadata
    topic, text = texts[metadata["document_id"]]
    assert text[metadata["start"] : metadata["end"]] == document.page_content
    assert metadata["topic"] == topic
    assert metadata["mode"] == "sql_text_search"
    assert metadata["kind"] == "chunk"
    assert metadata["id"] == document.id
    assert metadata["source"]
    assert isinstance(metadata["score"], float)


def test_invoke_returns_documents_with_provenance(retriever, texts):
    documents = retriever.invoke("Who discovered penicillin?")
    assert [d.metadata["document_id"] for d in documents][:1] == ["fleming"]
    assert {d.metadata["document_id"] for d in documents} <= {"fleming", "whales"}  # the only texts with "penicillin"
    for document in documents:
        assert_is_chunk_of_its_document(document, texts)
    scores = [d.metadata["score"] for d in documents]
    assert scores == sorted(scores, reverse=True)


def test_filters_and_top_k_from_the_constructor_and_per_call(kb_path, retriever):
    ocean = HetaRetriever(knowledge_base=kb_path, mode="sql_text_search", filters={"topic": "ocean"})
    try:
        assert [d.metadata["document_id"] for d in ocean.invoke("penicillin")] == ["whales"]
    finally:
        ocean.close()
    assert [d.metadata["document_id"] for d in retriever.invoke("penicillin", filters={"topic": "medicine"})] == ["fleming"]
    assert len(retriever.invoke("ocean", top_k=1)) == 1
    with pytest.raises(TypeError, match="per call"):
        retriever.invoke("ocean", k=1)


async def test_ainvoke_inside_a_running_loop_matches_invoke(retriever, texts):
    asynchronous = await retriever.ainvoke("humpback whales songs")
    # the blocking path from inside a running loop (a notebook cell, a FastAPI handler) works too
    blocking = retriever.invoke("humpback whales songs")
    assert [d.id for d in asynchronous] == [d.id for d in blocking]
    assert asynchronous[0].metadata["document_id"] == "whales"
    for document in asynchronous:
        assert_is_chunk_of_its_document(document, texts)


def test_batch_runs_queries_in_threads_on_one_knowledge_base(retriever):
    questions = ["penicillin mould", "humpback whales", "steam piston", "coral reefs fish"]
    expected = ["fleming", "whales", "steam", "coral"]
    threads: set[int] = set()
    results = retriever.batch(questions, config={"max_concurrency": 4, "callbacks": [_ThreadRecorder(threads)]})
    assert [documents[0].metadata["document_id"] for documents in results] == expected
    assert len(threads) > 1  # really concurrent callers, all served by the one knowledge base the retriever opened


class _ThreadRecorder(BaseCallbackHandler):
    """Records which threads started retriever runs."""

    def __init__(self, threads: set[int]):
        self.threads = threads

    def on_retriever_start(self, *args, **kwargs):
        self.threads.add(threading.get_ident())


def format_docs(documents: list[Document]) -> str:
    return "\n\n".join(f"[{d.metadata['document_id']}] {d.page_content}" for d in documents)


def test_a_runnable_chain_feeds_the_retrieved_text_to_the_model(retriever, texts):
    prompt = ChatPromptTemplate.from_messages([("system", "Answer from this context:\n{context}"), ("human", "{question}")])
    model = FakeListChatModel(responses=["Alexander Fleming."])
    seen_prompts = []
    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | RunnableLambda(lambda value: seen_prompts.append(value.to_string()) or value)
        | model
        | StrOutputParser()
    )
    assert chain.invoke("Who discovered penicillin?") == "Alexander Fleming."
    assert f"[fleming] {texts['fleming'][1]}" in seen_prompts[0]
    assert asyncio.run(chain.ainvoke("Who discovered penicillin?")) == "Alexander Fleming."  # a fresh loop: asyncio.run
    assert (retriever | format_docs).invoke("steam piston").startswith(f"[steam] {texts['steam'][1]}")


def test_a_knowledge_base_object_is_used_and_left_open(kb_path):
    kb = KnowledgeBase.load(kb_path)
    retriever = HetaRetriever(knowledge_base=kb, mode="sql_text_search")
    assert retriever.invoke("coral reefs")[0].metadata["document_id"] == "coral"
    retriever.close()  # the caller's knowledge base stays usable
    assert kb.sync.query("coral reefs", mode="sql_text_search").results[0].document_id == "coral"
    kb.close()


def test_default_mode_and_a_missing_mode(kb_path):
    retriever = HetaRetriever(knowledge_base=kb_path)  # mode=None: the best mode this knowledge base has
    try:
        assert retriever.invoke("steam engine")[0].metadata["mode"] == "sql_text_search"
        with pytest.raises(ModeUnavailableError, match="hybrid_search"):
            retriever.invoke("steam engine", mode="hybrid_search")
    finally:
        retriever.close()
    with pytest.raises(ValueError, match="knowledge_base"):  # pydantic's ValidationError
        HetaRetriever(knowledge_base=42)


def test_the_retriever_reads_only_what_its_principals_may(tmp_path):
    from heta_framework.testing.sample_kb import build_sample_kb, restrict_sample_document

    path = restrict_sample_document(build_sample_kb(tmp_path / "kb"))
    public = HetaRetriever(knowledge_base=path, mode="sql_text_search", top_k=4)
    reader = HetaRetriever(knowledge_base=path, mode="sql_text_search", top_k=4, principals=["group:medicine"])
    try:
        assert [d.metadata["document_id"] for d in public.invoke("penicillin")] == ["whales"]
        assert "fleming" in {d.metadata["document_id"] for d in reader.invoke("penicillin")}
    finally:
        public.close()
        reader.close()
