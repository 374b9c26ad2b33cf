"""Test helpers for HiRAG: the recipe over the graph plugin's small nlp graph, and a scripted language model.

Needs the test extra (heta-plugin-vector, heta-plugin-local, heta-plugin-openai). The scripted model answers the
three questions HiRAG asks, told apart by their JSON schema (``question_kind``)::

    server.respond("chat/completions", ScriptedHiRagModel())
"""

from __future__ import annotations

import json
from typing import Any

from heta_framework.kb import KnowledgeModels, Recipe, SourceDocument
from heta_framework.testing.http import RecordedRequest, Reply, chat_completion_body
from heta_plugin_graph.testing import graph_recipe

from heta_plugin_hirag.persist import BRIDGE_MODE, GLOBAL_MODE, HI_MODE, LOCAL_MODE, NOBRIDGE_MODE
from heta_plugin_hirag.steps import HierarchicalAggregation, HiRagBridges, HiRagCommunity

MODES = (HI_MODE, NOBRIDGE_MODE, LOCAL_MODE, GLOBAL_MODE, BRIDGE_MODE)
ROUTE = "chat/completions"
#: a fifth document: it names Marie Curie, whom the graph plugin's ``space`` document names too
CURIE = SourceDocument(id="curie", name="curie.txt", text="Marie Curie discovered polonium in Paris. Marie Curie taught at the Sorbonne.")
REPORT = {
    "title": "Scripted community", "summary": "A community the scripted model described.",
    "findings": [{"summary": "It exists", "explanation": "The scripted model says so."}],
    "rating": 6.5, "rating_explanation": "Scripted.",
}


def hirag_recipe(models: KnowledgeModels, aggregation: dict[str, Any] | None = None, community: dict[str, Any] | None = None) -> Recipe:
    """The graph plugin's recipe (nlp extractor) and the three HiRAG steps."""
    return graph_recipe(models, HierarchicalAggregation(**(aggregation or {})), HiRagCommunity(**(community or {})), HiRagBridges())


def question_kind(request: RecordedRequest) -> str:
    """``summary`` (a cluster's summary entity), ``report`` (a community report) or ``answer`` (a mode's answer)."""
    schema = ((request.json.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    fields = set(schema.get("properties", {}))
    if {"name", "description"} <= fields:
        return "summary"
    if "findings" in fields:
        return "report"
    if fields:
        raise AssertionError(f"an unexpected question to the model: {sorted(fields)}")
    return "answer"


def first_member(request: RecordedRequest) -> str:
    """The most central member of the cluster a summary question is about."""
    return request.json["messages"][1]["content"].split("\n- ", 1)[1].split(" (", 1)[0]


def summary_answer(request: RecordedRequest) -> dict[str, str]:
    """A valid summary: named after the cluster's most central member, so never one of the members' names."""
    member = first_member(request)
    return {"name": f"Theme of {member}", "type": "Concept", "description": f"What {member} and its neighbours share."}


def completion(value: Any) -> dict[str, Any]:
    return chat_completion_body(value if isinstance(value, str) else json.dumps(value))


class ScriptedHiRagModel:
    """Answers every HiRAG question validly; ``summary``/``report`` (callables of the request) replace those answers."""

    def __init__(self, summary: Any = None, report: Any = None, reply: str = "The scripted answer."):
        self.summary, self.report, self.reply = summary, report, reply

    def __call__(self, request: RecordedRequest) -> Any:
        kind = question_kind(request)
        if kind == "summary":
            return completion(self.summary(request) if self.summary else summary_answer(request))
        if kind == "report":
            return completion(self.report(request) if self.report else REPORT)
        return completion(self.reply)


def stored(kb: Any, key: str) -> Any:
    """``hirag/<key>.json`` (``hierarchy``, ``communities``, ``reports``, ``bridges``) of the knowledge base's object store."""
    return kb.get_component("stores.objects").get_json(f"hirag/{key}.json")


def step_stats(report: Any, step: str) -> dict[str, Any]:
    """One step's statistics in a build report."""
    return next(s.stats for s in report.steps if s.name == step)


def calls(server: Any, kind: str) -> list[RecordedRequest]:
    """The requests of one ``question_kind`` the server received."""
    return [r for r in server.requests_to(ROUTE) if question_kind(r) == kind]


def rate_limited(request: RecordedRequest) -> Reply:
    return Reply(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0"})
