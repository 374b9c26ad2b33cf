"""HetaRetriever in real Haystack pipelines over a real knowledge base: run, run_async, and a to_dict/from_dict round trip."""

from __future__ import annotations

import pytest
from haystack import Document, Pipeline
from haystack.components.builders import PromptBuilder
from haystack_integrations.components.retrievers.heta import HetaRetriever
from heta_framework.errors import ModeUnavailableError
from heta_framework.kb import KnowledgeBase

PROMPT = "Context:\n{% for document in documents %}[{{ document.meta.document_id }}] {{ document.content }}\n{% endfor %}Question: {{ question }}"


def rag_pipeline(retriever: HetaRetriever) -> Pipeline:
    pipeline = Pipeline()
    pipeline.add_component("retriever", retriever)
    pipeline.add_component("prompt", PromptBuilder(template=PROMPT, required_variables=["documents", "question"]))
    pipeline.connect("retriever.documents", "prompt.documents")
    return pipeline


def assert_is_chunk_of_its_document(document: Document, texts) -> None:
    meta = document.meta
    topic, text = texts[meta["document_id"]]
    assert text[meta["start"] : meta["end"]] == document.content
    assert meta["topic"] == topic
    assert (meta["mode"], meta["kind"], meta["id"]) == ("sql_text_search", "chunk", document.id)
    assert document.score == meta["score"]
    assert meta["source"]


@pytest.fixture
def retriever(kb_path):
    retriever = HetaRetriever(kb_path, mode="sql_text_search", top_k=3)
    yield retriever
    retriever.close()


def test_a_pipeline_builds_its_prompt_from_the_retrieved_documents(retriever, texts):
    question = "Who discovered penicillin?"
    output = rag_pipeline(retriever).run(
        {"retriever": {"query": question}, "prompt": {"question": question}}, include_outputs_from={"retriever"}
    )
    documents = output["retriever"]["documents"]
    assert documents[0].meta["document_id"] == "fleming"
    for document in documents:
        assert_is_chunk_of_its_document(document, texts)
    assert [d.score for d in documents] == sorted((d.score for d in documents), reverse=True)
    assert f"[fleming] {texts['fleming'][1]}" in output["prompt"]["prompt"]


def test_run_arguments_replace_the_components_settings(retriever):
    assert [d.meta["document_id"] for d in retriever.run("penicillin", filters={"topic": "ocean"})["documents"]] == ["whales"]
    assert len(retriever.run("ocean", top_k=1)["documents"]) == 1
    with pytest.raises(ModeUnavailableError, match="hybrid_search"):
        retriever.run("ocean", mode="hybrid_search")


async def test_run_async_in_a_pipeline_and_the_blocking_path_in_a_running_loop(retriever, texts):
    pipeline = Pipeline()
    pipeline.add_component("retriever", retriever)
    output = await pipeline.run_async({"retriever": {"query": "humpback whales songs"}})
    asynchronous = output["retriever"]["documents"]
    blocking = pipeline.run({"retriever": {"query": "humpback whales songs"}})["retriever"]["documents"]
    assert [d.id for d in asynchronous] == [d.id for d in blocking]
    assert asynchronous[0].meta["document_id"] == "whales"
    for document in asynchronous:
        assert_is_chunk_of_its_document(document, texts)


def test_to_dict_stores_the_path_and_from_dict_rebuilds_a_working_pipeline(kb_path, texts):
    kb = KnowledgeBase.load(kb_path)
    component = HetaRetriever(kb, mode="sql_text_search", top_k=2, filters={"topic": "ocean"})
    data = component.to_dict()
    assert data == {
        "type": "haystack_integrations.components.retrievers.heta.retriever.HetaRetriever",
        "init_parameters": {
            "knowledge_base": str(kb_path),
            "mode": "sql_text_search",
            "top_k": 2,
            "filters": {"topic": "ocean"},
            "options": {},
            "principals": [],
        },
    }
    import heta_haystack

    assert heta_haystack.HetaRetriever is HetaRetriever  # the short alias is the same class
    yaml = rag_pipeline(component).dumps()
    assert str(kb_path) in yaml
    restored = Pipeline.loads(yaml)  # no allowed_modules: Haystack trusts the haystack_integrations namespace
    try:
        output = restored.run({"retriever": {"query": "fish and whales"}, "prompt": {"question": "?"}}, include_outputs_from={"retriever"})
        assert {d.meta["document_id"] for d in output["retriever"]["documents"]} == {"whales", "coral"}
        restored_component = restored.get_component("retriever")
        assert isinstance(restored_component, HetaRetriever) and restored_component.to_dict() == data
    finally:
        restored.get_component("retriever").close()
        kb.close()


def test_warm_up_opens_the_knowledge_base_once(kb_path):
    retriever = HetaRetriever(kb_path)
    retriever.warm_up()
    retriever.warm_up()
    opened = retriever._source.get()
    assert retriever.run("coral reefs")["documents"][0].meta["mode"] == "sql_text_search"  # mode=None: the best available
    assert retriever._source.get() is opened
    retriever.close()


def test_the_retriever_reads_only_what_its_principals_may(tmp_path):
    from heta_framework.testing.sample_kb import build_sample_kb, restrict_sample_document

    path = restrict_sample_document(build_sample_kb(tmp_path / "kb"))
    public = HetaRetriever(path, mode="sql_text_search", top_k=4)
    reader = HetaRetriever(path, mode="sql_text_search", top_k=4, principals=["group:medicine"])
    try:
        assert [d.meta["document_id"] for d in public.run("penicillin")["documents"]] == ["whales"]
        assert "fleming" in {d.meta["document_id"] for d in reader.run("penicillin")["documents"]}
        assert HetaRetriever.from_dict(reader.to_dict()).settings.principals == ("group:medicine",)  # kept through to_dict
    finally:
        public.close()
        reader.close()
