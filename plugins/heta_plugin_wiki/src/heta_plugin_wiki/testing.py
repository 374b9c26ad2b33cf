"""Test helpers for the tool-calling modes (this plugin's tests, and anyone's who builds on them): a scripted model
that replays a fixed plan of tool calls, then stops, then writes the grounded answer.

Needs the test extra (the openai client is what talks to ``ScriptedServer``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from heta_framework.testing.http import RecordedRequest, Reply, chat_completion_body, chat_tool_calls_body, tool_messages

__all__ = ["WIKI_STEPS", "PlanModel", "is_page_request", "is_synthesis", "page_reply", "recipe", "shown_results", "tool_turns",
           "wiki_issues", "wiki_steps"]

WIKI_STEPS = ("build_wiki_pages", "split_wiki_pages", "index_wiki_pages")


def wiki_issues(report: Any) -> list[Any]:
    """The build report's issues from the wiki's steps (other plugins' steps may report their own, e.g. on the
    languages of the test documents, which these tests do not judge)."""
    return [issue for issue in report.issues if issue.step in WIKI_STEPS]


def wiki_steps(**options: Any) -> tuple:
    from heta_plugin_wiki.wiki.steps import BuildWikiPages, IndexWikiPages, SplitWikiPages

    return (BuildWikiPages(**options), SplitWikiPages(), IndexWikiPages())


def recipe(models: Any, *more_steps: Any, **wiki_options: Any) -> Any:
    """The graph plugin's small recipe (parse, split, vectors, the nlp graph) with the three wiki steps after it
    (needs heta-plugin-graph and heta-plugin-vector, the test extra)."""
    from heta_plugin_graph.testing import graph_recipe

    return graph_recipe(models, *wiki_steps(**wiki_options), *more_steps)

Plan = Sequence[Sequence[tuple[str, Any]] | Callable[[RecordedRequest], Sequence[tuple[str, Any]]]]


def is_page_request(request: RecordedRequest) -> bool:
    """``build_wiki_pages`` asking for a page (its JSON schema has ``sections``)."""
    schema = ((request.json or {}).get("response_format") or {}).get("json_schema", {}).get("schema", {})
    return "sections" in schema.get("properties", {})


def page_reply(request: RecordedRequest) -> Reply:
    """A page whose title names the document and whose one section is the whole text the model was shown."""
    text = request.json["messages"][-1]["content"]
    name, _, body = text.partition("\n\n")
    page = {"title": f"Page of {name.removeprefix('Document: ')}", "summary": body[:200],
            "sections": [{"heading": "All of it", "text": body}], "entities": []}
    return Reply(body=chat_completion_body(json.dumps(page)))


def is_synthesis(request: RecordedRequest) -> bool:
    """The synthesis asks for JSON (a response format) and offers no tools; tool turns offer tools."""
    return "tools" not in (request.json or {}) and not is_page_request(request)


def shown_results(request: RecordedRequest) -> list[dict[str, Any]]:
    """Every result the tools have returned so far, as the model was shown them (from the request's tool messages)."""
    shown = []
    for message in tool_messages(request):
        shown.extend(json.loads(message["content"]).get("results", []))
    return shown


def tool_turns(server: Any) -> list[RecordedRequest]:
    return [r for r in server.requests_to("chat/completions") if not is_synthesis(r)]


class PlanModel:
    """Tool turn n replays ``plan[n]`` (calls as ``(name, arguments)``, or a function of the request that returns
    them); past the plan it stops with ``note``. The synthesis answers with ``answer`` (a function of the request
    and the shown results) citing ``cite(results)``, by default every id shown."""

    def __init__(self, plan: Plan, *, note: str = "Done.", cite: Callable[[list[dict[str, Any]]], list[str]] | None = None,
                 answer: Callable[[RecordedRequest], str] | None = None, extra_citations: Sequence[str] = ()):
        self.plan = list(plan)
        self.note = note
        self.cite = cite or (lambda results: [r["id"] for r in results])
        self.answer = answer or (lambda request: "The answer.")
        self.extra_citations = list(extra_citations)
        self.turn = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        if is_synthesis(request):
            return Reply(body=chat_completion_body(json.dumps(self.synthesis(request))))
        turn, self.turn = self.turn, self.turn + 1
        if turn >= len(self.plan):
            return Reply(body=chat_completion_body(self.note))
        step = self.plan[turn]
        calls = step(request) if callable(step) else step
        return Reply(body=chat_tool_calls_body(list(calls), id_prefix=f"call_{turn}_"))

    def synthesis(self, request: RecordedRequest) -> dict[str, Any]:
        text = request.json["messages"][-1]["content"]
        ids = [line[1:].split("] ", 1)[0] for line in text.split("\n") if line.startswith("[")]
        results = [{"id": i} for i in ids]
        return {"answer": self.answer(request), "insights": [{"text": "Found.", "evidence": [*self.cite(results), *self.extra_citations]}]}
