"""Access: core's leakage suite over the wiki modes and both agent modes, with a language model that writes every word
it reads into its pages and answers (so anything a tool showed it would surface in the response), and an agent plan
that reaches for the restricted documents by name."""

from __future__ import annotations

import json

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.testing.conformance import AccessLeakageSuite, build_leakage_kb
from heta_framework.testing.conformance.access import leaked
from heta_framework.testing.http import (
    RecordedRequest,
    Reply,
    ScriptedServer,
    chat_completion_body,
    chat_tool_calls_body,
    tool_messages,
)
from heta_plugin_wiki.testing import is_page_request, is_synthesis, page_reply, shown_results, wiki_steps

from heta_plugin_graph import HetaGraphProcedure
from heta_plugin_vector import EmbedChunks, IndexVectors

MINE = ("agent_search", "wiki_agent_search", "wiki_vector_search", "wiki_full_text_search", "wiki_hybrid_search")
RESTRICTED = "acquisition-memo"


def turn_of(request: RecordedRequest) -> int:
    return sum(1 for m in request.json["messages"] if m["role"] == "assistant")


#: set by the one test that has the model name the restricted document (the suite's checks would count the model's
#: own words in the trace as a leak; a refusal is checked to say nothing a missing document's would not)
PROBE: list[str] = []


def agent_plan(request: RecordedRequest) -> list[tuple[str, dict]]:
    question = request.json["messages"][1]["content"]
    tools = {t["function"]["name"]: t["function"] for t in request.json["tools"]}
    shown = shown_results(request)
    turn = turn_of(request)
    if "search" in tools:  # agent_search
        if turn == 0:
            return [("search", {"query": question, "mode": m}) for m in tools["search"]["parameters"]["properties"]["mode"]["enum"]]
        if turn == 1:
            calls = [("read_document", {"document_id": d}) for d in PROBE]
            calls += [("read_document", {"document_id": r["document_id"]}) for r in shown if r.get("document_id")][:1]
            calls += [("read_around", {"chunk_id": r["id"]}) for r in shown if r["kind"] == "chunk"][:2]
            calls += [("graph_neighbours", {"entity_id": r["id"]}) for r in shown if r["kind"] == "entity"][:2]
            return calls
        return []
    if turn == 0:
        return [("read_wiki_index", {}), ("search_wiki", {"query": question})]
    if turn == 1:
        pages = sorted({r["id"].split("#")[0] for r in shown if r["kind"] == "wiki_section"})[:2]
        probes = [call for d in PROBE for call in (("read_page", {"page_id": f"wiki:{d}"}), ("read_source", {"document_id": d}))]
        return [*probes, *[("read_page", {"page_id": p}) for p in pages]]
    return []


def echoing_model(request: RecordedRequest) -> Reply:
    if is_page_request(request):
        return page_reply(request)
    if is_synthesis(request):
        prompt = request.json["messages"][-1]["content"]
        ids = [line[1:].split("] ", 1)[0] for line in prompt.split("\n") if line.startswith("[")]
        return Reply(body=chat_completion_body(json.dumps({"answer": prompt, "insights": [{"text": "all", "evidence": ids}]})))
    if "tools" not in request.json:  # another mode's JSON prompt (not checked here): an empty object
        return Reply(body=chat_completion_body("{}"))
    calls = agent_plan(request)
    if not calls:  # the closing note repeats every tool result it read, so the synthesis prompt carries them
        return Reply(body=chat_completion_body(" ".join(m["content"] for m in tool_messages(request))))
    return Reply(body=chat_tool_calls_body(calls, id_prefix=f"call_{turn_of(request)}_"))


@pytest.fixture(scope="module")
def echo_server():
    with ScriptedServer(fallback=echoing_model) as server:
        yield server


def leak_recipe(server: ScriptedServer) -> Recipe:
    models = KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2"),
                             language=LanguageModel(model_name="openai/test-model", base_url=server.base_url, api_key="sk-test",
                                                    options={"max_attempts": 1}))
    return Recipe(models=models, steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), EmbedChunks(), IndexVectors(),
                                        HetaGraphProcedure(extractor="nlp"), *wiki_steps()])


@pytest.fixture(scope="module")
def leak_path(tmp_path_factory, wiki_registry, echo_server):
    path = tmp_path_factory.mktemp("leak") / "kb"
    build_leakage_kb(path, leak_recipe(echo_server), registry=wiki_registry).close()
    return path


class TestWikiAndAgentAccess(AccessLeakageSuite):
    @pytest.fixture(scope="class")
    @classmethod
    def leak_kb(cls, leak_path, wiki_registry, echo_server):
        kb = KnowledgeBase(leak_path, leak_recipe(echo_server), wiki_registry)
        yield kb
        kb.close()

    def modes(self, kb):
        # only this plugin's modes: the core's and the graph plugin's are checked by their own suites
        found = [mode for mode in sorted(kb.available_queries) if mode in MINE]
        assert set(found) == set(MINE)
        return found

    def test_the_pages_were_written_by_the_model_and_a_hidden_document_is_refused_like_a_missing_one(self, leak_kb):
        assert json.dumps(leak_kb.get_component("stores.objects").get_json("wiki/index.json")).count("Page of") >= 3
        PROBE[:] = [RESTRICTED, "no-such-document"]
        try:
            for mode in ("agent_search", "wiki_agent_search"):
                response = leak_kb.sync.query("Who manages the plant for Aurora Labs?", mode=mode, principals=None)
                refused = {c["arguments"].get("document_id") or c["arguments"].get("page_id"): c["error"]
                           for c in response.metadata["tool_calls"] if "error" in c}
                hidden = {k: v for k, v in refused.items() if k and RESTRICTED in k}
                missing = {k: v for k, v in refused.items() if k and "no-such-document" in k}
                assert hidden and len(hidden) == len(missing)
                assert sorted(v.replace(RESTRICTED, "X") for v in hidden.values()) == sorted(
                    v.replace("no-such-document", "X") for v in missing.values())
                assert response.results and not leaked(response, allowed=(RESTRICTED,))  # only the id the model typed
                reader = leak_kb.sync.query("Who manages the plant for Aurora Labs?", mode=mode, principals=("group:finance",))
                assert [c.get("error") for c in reader.metadata["tool_calls"] if RESTRICTED in json.dumps(c["arguments"])][:1] == [None], reader.metadata["tool_calls"]
        finally:
            PROBE.clear()
