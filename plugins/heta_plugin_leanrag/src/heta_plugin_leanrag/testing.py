"""Test helpers for LeanRAG (this plugin's tests, and anyone's who builds on it): a recipe over the graph plugin's
small nlp knowledge base, readers of what the step stored, and a scripted language model for the aggregation prompts.

Needs the test extra (heta-plugin-vector, heta-plugin-local, heta-plugin-openai) and pytest.
"""

from __future__ import annotations

import json
from typing import Any

from heta_framework.kb import KnowledgeModels, Recipe
from heta_framework.testing.http import RecordedRequest, Reply, chat_completion_body
from heta_plugin_graph.testing import graph_recipe

from heta_plugin_leanrag.persist import HIERARCHY_KEY, MODE
from heta_plugin_leanrag.steps import SemanticAggregation

__all__ = ["MODE", "STEP_OPTIONS", "AggregationModel", "answer", "hierarchy_of", "is_aggregate_request", "is_relation_request",
           "recipe", "requests_of", "schema_fields", "step_stats"]

#: every relation between aggregates is described by the model when there is one (the step's default asks from 3 up)
STEP_OPTIONS = {"relation_model_threshold": 1}


def recipe(models: KnowledgeModels, **step_options: Any) -> Recipe:
    """The graph plugin's small recipe (nlp extractor) with ``leanrag_aggregate`` after it."""
    return graph_recipe(models, SemanticAggregation(**{**STEP_OPTIONS, **step_options}))


def hierarchy_of(kb: Any) -> dict:
    """The stored hierarchy (``persist``'s JSON) of a knowledge base."""
    return kb.get_component("stores.objects").get_json(HIERARCHY_KEY)


def step_stats(report: Any, name: str = SemanticAggregation.name) -> dict:
    return next(s.stats for s in report.steps if s.name == name)

# --- a scripted language model for the aggregation prompts -------------------------------------------


def schema_fields(request: RecordedRequest) -> set[str]:
    return set(((request.json.get("response_format") or {}).get("json_schema") or {}).get("schema", {}).get("properties", {}))


def is_aggregate_request(request: RecordedRequest) -> bool:
    return "findings" in schema_fields(request)


def is_relation_request(request: RecordedRequest) -> bool:
    return schema_fields(request) == {"description"}


def first_member(request: RecordedRequest) -> str:
    """The most central member's name in an aggregation prompt (``- name: description`` after ``Entities:``)."""
    text = request.json["messages"][1]["content"]
    line = text.split("Entities:\n", 1)[1].split("\n", 1)[0]
    return line[2:].split(": ", 1)[0]


def answer(value: Any) -> dict:
    return chat_completion_body(value if isinstance(value, str) else json.dumps(value))


class AggregationModel:
    """Names each cluster after its most central member (``"<member> group"``) and relates any two groups."""

    def __call__(self, request: RecordedRequest) -> Reply:
        if is_aggregate_request(request):
            name = first_member(request)
            return Reply(body=answer({"name": f"{name} group", "description": f"Things around {name}.",
                                      "findings": [{"summary": f"{name} leads", "explanation": "The scripted model says so."}]}))
        if is_relation_request(request):
            return Reply(body=answer({"description": "The two groups share a subject."}))
        raise AssertionError(f"unexpected request: {schema_fields(request)}")


def requests_of(server, kind) -> list:
    return [r for r in server.requests_to("chat/completions") if kind(r)]
