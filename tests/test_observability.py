"""Spans and usage of a real build and a real heta_rerank_search query (issue #42).

The knowledge base has every leg heta_rerank_search needs: FAISS vectors, a Whoosh index and a Heta graph
(offline "nlp" extractor). Its models are the real openai client (embeddings and the answer) and the real
cohere client (the reranker), talking HTTP to a scripted server on 127.0.0.1 that embeds by hashing words,
reports token counts and records each request's headers. Spans are read with the SDK's in-memory exporter.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.common.models import EmbeddingModel, LanguageModel, ModelPrices, RerankModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
from heta_framework.testing import make_registry
from heta_framework.testing.http import RecordedRequest, ScriptedServer, chat_completion_body, embeddings_body, rerank_body
from heta_framework.testing.spans import capture_spans

QUESTION = "Which mould did Alexander Fleming notice in 1928"
DOCUMENTS = [
    SourceDocument(id="penicillin", name="penicillin.md", text="# Penicillin\n\nAlexander Fleming noticed in 1928 that the mould "
                   "Penicillium killed bacteria in London. Howard Florey turned penicillin into a medicine at Oxford."),
    SourceDocument(id="whales", name="whales.md", text="# Whales\n\nBlue whales are marine mammals that eat krill in every ocean."),
    SourceDocument(id="python", name="python.md", text="# Python\n\nGuido van Rossum created Python in the Netherlands."),
]
EMBEDDING_KEY = "sk-embed-0123456789abcdef"
LANGUAGE_KEY = "sk-chat-fedcba9876543210"
RERANK_KEY = "co-rerank-5555aaaa7777"
DIMENSION = 16
LANGUAGE_PRICES = ModelPrices(input=0.15, output=0.6)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def hashed_embeddings(request: RecordedRequest) -> dict[str, Any]:
    """An embeddings service in miniature: each word adds to one of 16 dimensions; one token per word."""
    texts = request.json["input"]
    vectors = []
    for text in texts:
        vector = np.zeros(DIMENSION, dtype=np.float32)
        for word in _words(text):
            vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMENSION] += 1.0
        vector[0] += 0.01  # never all zeros
        vectors.append(vector / np.linalg.norm(vector))
    return embeddings_body(vectors, prompt_tokens=sum(len(_words(t)) for t in texts))


def rerank_by_overlap(request: RecordedRequest) -> dict[str, Any]:
    query, documents, top_n = request.json["query"], request.json["documents"], request.json["top_n"]
    scores = [(i, float(len(set(_words(query)) & set(_words(d))))) for i, d in enumerate(documents)]
    return rerank_body(sorted(scores, key=lambda s: (-s[1], s[0]))[:top_n])


def answer(request: RecordedRequest) -> dict[str, Any]:
    return chat_completion_body(json.dumps({"answer": "Penicillium [1]."}), prompt_tokens=120, completion_tokens=8)


@pytest.fixture(scope="module")
def services() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        server.respond("embeddings", hashed_embeddings)
        server.respond("chat/completions", answer)
        server.respond("/v2/rerank", rerank_by_overlap)
        yield server


def recipe(services: ScriptedServer) -> Recipe:
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    fast = {"max_attempts": 1, "timeout": 10}
    models = KnowledgeModels(
        embedding=EmbeddingModel(model_name="openai/hash-embedding", base_url=services.base_url, api_key=EMBEDDING_KEY,
                                 options={**fast, "dimension": DIMENSION}, prices=ModelPrices(input=0.02)),
        language=LanguageModel(model_name="openai/scripted-chat", base_url=services.base_url, api_key=LANGUAGE_KEY, options=fast,
                               prices=LANGUAGE_PRICES),
        reranker=RerankModel(model_name="cohere/rerank-v3.5", base_url=services.url, api_key=RERANK_KEY, options=fast),
    )
    steps = [ParseDocuments(), SplitDocuments(chunk_size=40, chunk_overlap=0), EmbedChunks(batch_size=2), IndexVectors(), IndexFullText(),
             HetaGraphProcedure(extractor="nlp")]
    return Recipe(models=models, steps=steps)


def registry() -> Any:
    import heta_plugin_fulltext
    import heta_plugin_openai

    import heta_plugin_graph
    import heta_plugin_rerank
    import heta_plugin_vector

    return make_registry(heta_plugin_vector, heta_plugin_fulltext, heta_plugin_graph, heta_plugin_openai, heta_plugin_rerank)


@pytest.fixture(scope="module")
def built(tmp_path_factory, services) -> Iterator[tuple[Path, Any, list[Any], Any]]:
    """The knowledge base, its build report, and the spans of the build."""
    path = tmp_path_factory.mktemp("observability") / "lab-notes"
    with capture_spans() as capture:
        kb = KnowledgeBase.create(path, recipe(services), registry=registry())
        report = kb.sync.build(DOCUMENTS)
    yield path, report, capture.spans, capture
    kb.close()


def _secrets_absent(values: Any) -> None:
    for value in values:
        text = str(value)
        for secret in (EMBEDDING_KEY, LANGUAGE_KEY, RERANK_KEY):
            assert secret not in text


# --- the build -------------------------------------------------------------------------


def test_a_build_is_one_span_with_a_child_per_step_and_batches_and_model_calls_below(built):
    _path, report, spans, capture = built
    build = capture.one("heta.build")
    assert build.parent is None
    assert build.attributes["heta.kb"] == "lab-notes"
    assert build.attributes["heta.build.documents"] == 3
    steps = capture.children(build)
    assert [s.name for s in steps] == [f"heta.step {step.name}" for step in report.steps]
    assert [s.attributes["heta.step"] for s in steps] == [step.name for step in report.steps]
    embed = next(s for s in steps if s.attributes["heta.step"] == "embed_chunks")
    batches = capture.children(embed)
    chunks = report.steps[[s.name for s in report.steps].index("embed_chunks")].stats["embedded_texts"]
    assert [b.name for b in batches] == ["heta.batch"] * -(-chunks // 2)  # batch_size=2
    assert sorted(b.attributes["heta.batch.index"] for b in batches) == list(range(len(batches)))
    for batch in batches:
        (call,) = capture.children(batch)
        assert call.name == "embeddings openai/hash-embedding"
        assert call.attributes["gen_ai.request.model"] == "hash-embedding"
        assert call.attributes["heta.model.texts"] == batch.attributes["heta.batch.size"]
        assert call.attributes["gen_ai.usage.input_tokens"] > 0
    parse = next(s for s in steps if s.attributes["heta.step"] == "parse_documents")
    assert capture.descendants(parse) == []  # parsing calls no model


def test_the_build_report_counts_embeddings_by_model_and_step_with_their_cost(built):
    _path, report, _spans, capture = built
    usage = report.to_dict()["usage"]
    embedding = usage["models"]["openai/hash-embedding"]
    calls = [s for s in capture.spans if s.name == "embeddings openai/hash-embedding"]
    assert embedding["calls"] == len(calls)
    assert embedding["texts"] == sum(s.attributes["heta.model.texts"] for s in calls)
    assert embedding["tokens"] == sum(s.attributes["gen_ai.usage.input_tokens"] for s in calls)
    assert embedding["cost"] == pytest.approx(embedding["tokens"] * 0.02 / 1_000_000)
    assert usage["totals"]["embedding_tokens"] == embedding["tokens"]
    assert usage["totals"]["llm_calls"] == 0
    steps = {step["name"]: step["usage"] for step in report.to_dict()["steps"]}
    assert steps["parse_documents"]["models"] == {}
    assert steps["embed_chunks"]["models"]["openai/hash-embedding"]["texts"] == report.steps[2].stats["embedded_texts"]
    # the graph steps embed entities too: the run's total is the sum of its steps'
    assert sum(s["models"].get("openai/hash-embedding", {}).get("calls", 0) for s in steps.values()) == embedding["calls"]
    assert "model usage:" in report.to_text()


def test_no_span_of_the_build_carries_a_key(built):
    _path, _report, _spans, capture = built
    _secrets_absent(capture.attribute_values())


# --- a heta_rerank_search query ------------------------------------------------------------


@pytest.fixture
def queried(built, services) -> Iterator[tuple[Any, Any]]:
    path = built[0]
    services.requests.clear()
    with KnowledgeBase.load(path, registry=registry(), models=recipe(services).models) as kb, capture_spans() as capture:
        response = kb.sync.query(QUESTION, mode="heta_rerank_search", top_k=3, options={"answer": True})
        yield response, capture


def _tree_without_store_and_model_calls(capture: Any, span: Any) -> tuple[str, tuple[Any, ...]]:
    children = [c for c in capture.children(span) if c.name.startswith("heta.query")]
    return span.name, tuple(sorted(_tree_without_store_and_model_calls(capture, c) for c in children))


def test_a_composed_query_has_a_child_span_per_mode_it_calls_and_spans_for_store_and_model_calls(queried):
    response, capture = queried
    root = capture.one("heta.query")
    assert root.parent is None
    assert root.attributes["heta.query.mode"] == "heta_rerank_search"
    assert root.attributes["heta.query.top_k"] == 3
    assert root.attributes["heta.kb"] == "lab-notes"
    assert _tree_without_store_and_model_calls(capture, root) == (
        "heta.query", (
            ("heta.query.mode heta_rerank_search", (
                ("heta.query.mode full_text_search", ()),
                ("heta.query.mode hybrid_search", (
                    ("heta.query.mode heta_graph_search", ()),
                    ("heta.query.mode vector_search", ()),
                )),
            )),
        ),
    )
    by_mode = {s.attributes["heta.query.mode"]: s for s in capture.spans if s.name.startswith("heta.query.mode")}
    assert by_mode["vector_search"].attributes["heta.query.caller"] == "hybrid_search"
    assert by_mode["hybrid_search"].attributes["heta.query.depth"] == 1
    assert by_mode["vector_search"].attributes["heta.query.depth"] == 2
    # store calls sit under the mode that made them
    stores = {mode: sorted(c.name for c in capture.children(span) if c.name.startswith("heta.store")) for mode, span in by_mode.items()}
    assert stores["vector_search"] == ["heta.store vector.search"]
    assert stores["full_text_search"] == ["heta.store text.search"]
    assert "heta.store vector.search" in stores["heta_graph_search"] and "heta.store graph.expand" in stores["heta_graph_search"]
    assert capture.one("heta.store text.search").attributes["heta.query.top_k"] > 0
    # model calls: the query embedded once (vector and graph search share it), reranked once, answered once
    model_calls = [s for s in capture.spans if "gen_ai.operation.name" in s.attributes]
    assert sorted(s.name for s in model_calls) == ["chat openai/scripted-chat", "embeddings openai/hash-embedding", "rerank cohere/rerank-v3.5"]
    rerank, chat = capture.one("rerank cohere/rerank-v3.5"), capture.one("chat openai/scripted-chat")
    assert rerank.parent.span_id == chat.parent.span_id == by_mode["heta_rerank_search"].context.span_id
    assert (chat.attributes["gen_ai.usage.input_tokens"], chat.attributes["gen_ai.usage.output_tokens"]) == (120, 8)
    assert root.attributes["heta.query.results"] == len(response.results) > 0


def test_the_query_response_carries_its_usage_by_model_with_a_cost(queried):
    response, _capture = queried
    usage = response.to_dict()["usage"]
    assert usage["models"]["openai/scripted-chat"] == {
        "kind": "language", "calls": 1, "prompt_tokens": 120, "completion_tokens": 8, "cost": pytest.approx((120 * 0.15 + 8 * 0.6) / 1e6),
    }
    assert usage["models"]["openai/hash-embedding"]["texts"] == 1
    assert usage["models"]["openai/hash-embedding"]["tokens"] == len(_words(QUESTION))
    assert usage["models"]["cohere/rerank-v3.5"]["calls"] == 1
    assert usage["totals"]["llm_calls"] == 1
    assert usage["totals"]["cost"] == pytest.approx(usage["models"]["openai/scripted-chat"]["cost"] + usage["models"]["openai/hash-embedding"]["cost"])


def test_traceparent_reaches_the_model_server_naming_the_model_call_span(queried, services):
    _response, capture = queried
    (request,) = [r for r in services.requests if r.path.endswith("/chat/completions")]
    version, trace_id, span_id, flags = request.header("traceparent").split("-")
    chat = capture.one("chat openai/scripted-chat")
    assert version == "00" and int(flags, 16) & 1  # the sampled flag
    assert int(trace_id, 16) == chat.context.trace_id == capture.one("heta.query").context.trace_id
    assert int(span_id, 16) == chat.context.span_id
    (embedding,) = [r for r in services.requests if r.path.endswith("/embeddings")]
    assert int(embedding.header("traceparent").split("-")[1], 16) == chat.context.trace_id
    (rerank,) = [r for r in services.requests if r.path.endswith("/rerank")]  # the cohere client sends it too
    assert int(rerank.header("traceparent").split("-")[2], 16) == capture.one("rerank cohere/rerank-v3.5").context.span_id


def test_no_span_carries_the_query_text_or_a_key_unless_the_text_is_turned_on(queried, built, services, monkeypatch):
    _response, capture = queried
    values = list(capture.attribute_values())
    _secrets_absent(values)
    assert not [v for v in values if "Fleming" in str(v) or "mould" in str(v)]

    monkeypatch.setenv("HETA_TRACE_QUERY_TEXT", "1")
    with KnowledgeBase.load(built[0], registry=registry(), models=recipe(services).models) as kb, capture_spans() as again:
        kb.sync.query(QUESTION, mode="vector_search", top_k=2)
    assert again.one("heta.query").attributes["heta.query.text"] == QUESTION
    # only the root carries it: the spans below stay as they were
    assert [s.name for s in again.spans if any(QUESTION in str(v) for v in s.attributes.values())] == ["heta.query"]


def test_with_no_sdk_spans_cost_nothing_and_queries_still_count_usage(built, services):
    """Outside a capture the provider drops every span: nothing is recorded, the answer and usage are the same."""
    with KnowledgeBase.load(built[0], registry=registry(), models=recipe(services).models) as kb:
        capture = capture_spans()  # not entered: the provider drops spans
        before = len(capture.spans)
        response = kb.sync.query(QUESTION, mode="vector_search", top_k=2)
        assert len(capture.spans) == before
        assert response.usage["models"]["openai/hash-embedding"]["calls"] == 1
        assert kb.usage_totals["models"]["openai/hash-embedding"]["calls"] == 1
