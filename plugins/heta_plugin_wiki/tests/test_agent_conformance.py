"""Core's query-engine suite over ``agent_search`` and ``wiki_agent_search``, with a scripted model whose plan depends
only on the request (search the question, stop, cite the first result), so answers are the same across threads and
reopenings, as the suite demands of any mode."""

from __future__ import annotations

import json

import pytest
from heta_framework.kb import KnowledgeBase
from heta_framework.testing.conformance import QueryEngineSuite
from heta_framework.testing.http import RecordedRequest, Reply, ScriptedServer, chat_completion_body, chat_tool_calls_body
from heta_plugin_graph.testing import DOCUMENTS, scripted_language_models
from heta_plugin_wiki import AgentSearchEngine, WikiAgentSearchEngine
from heta_plugin_wiki.testing import is_page_request, is_synthesis, page_reply, recipe, wiki_issues


def stateless_plan(request: RecordedRequest) -> Reply:
    if is_page_request(request):
        return page_reply(request)
    if is_synthesis(request):
        evidence = request.json["messages"][-1]["content"].split("Evidence:\n", 1)[1]
        first = evidence[1:].split("] ", 1)[0]
        return Reply(body=chat_completion_body(json.dumps({"answer": "ok", "insights": [{"text": "first", "evidence": [first]}]})))
    messages = request.json["messages"]
    if any(m["role"] == "assistant" for m in messages):
        return Reply(body=chat_completion_body("Done."))
    question = messages[1]["content"]
    names = {t["function"]["name"] for t in request.json["tools"]}
    call = ("search", {"query": question, "mode": "vector_search"}) if "search" in names else \
        ("search_wiki", {"query": question, "mode": "wiki_vector_search"})
    return Reply(body=chat_tool_calls_body([call]))


@pytest.fixture(scope="module")
def plan_server():
    with ScriptedServer(fallback=stateless_plan) as server:
        yield server


@pytest.fixture(scope="module")
def agent_path(tmp_path_factory, wiki_registry, plan_server):
    """The documents built with the scripted model in the recipe (pages by it too), so the folder's own recipe has
    the language model the suite's reopened knowledge base needs."""
    path = tmp_path_factory.mktemp("agent") / "kb"
    models = scripted_language_models(plan_server, max_attempts=1)
    with KnowledgeBase.create(path, recipe(models), registry=wiki_registry) as kb:
        assert wiki_issues(kb.sync.build(list(DOCUMENTS))) == []
    return path


class _AgentSuite(QueryEngineSuite):
    known_query = ("blue whales feed on krill", "ocean")

    @pytest.fixture
    def registry(self, wiki_registry):
        return wiki_registry

    @pytest.fixture
    def knowledge_base_path(self, agent_path):
        return agent_path


class TestAgentSearch(_AgentSuite):
    mode = "agent_search"

    @pytest.fixture
    def engine(self):
        return AgentSearchEngine()


class TestWikiAgentSearch(_AgentSuite):
    mode = "wiki_agent_search"

    @pytest.fixture
    def engine(self):
        return WikiAgentSearchEngine()
