"""The tool-calling modes: the loop over a set of tools, then the grounded synthesis, as a query engine.

``agent_search`` (tools: the knowledge base's modes and stores, ``kb_tools``) needs only a language model; it works
on any knowledge base. ``wiki_agent_search`` (``heta_plugin_wiki.wiki_tools``) also needs the wiki pages. The
language client must offer ``complete_with_tools`` (heta-plugin-openai's does); one that does not gets an
``agent_tools_unsupported`` issue and no answer.

Results: the evidence the tools returned (the ledger), those the answer cites first, at most ``top_k``; scores
fall with that order. ``metadata``: ``tool_calls`` (every call: step, tool, arguments, result ids, time, error),
``insights`` (each with the evidence ids it cites), ``usage`` (model calls and tokens, synthesis included),
``stopped`` (why the loop ended), ``ledger_size``, ``issues``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
from heta_framework.common.models import supports_tools
from heta_framework.common.secrets import redact
from heta_framework.kb.query_options import query_options
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse, QueryResult, SearchAssetRef, query_issue
from heta_framework.kb.steps import model_ref

from heta_plugin_wiki.agent.kb_tools import kb_tools, searchable_modes
from heta_plugin_wiki.agent.ledger import Ledger
from heta_plugin_wiki.agent.loop import ToolLoop
from heta_plugin_wiki.agent.options import AgentOptions
from heta_plugin_wiki.agent.synthesis import synthesise
from heta_plugin_wiki.agent.tools import Tool

LANGUAGE = model_ref("language")

SYSTEM = (
    "You answer questions by searching a knowledge base with the tools. Search, read what helps, follow leads; "
    "call several tools in one turn when they are independent. Never repeat a call. When you know enough, or the "
    "tools cannot help further, stop calling tools and reply with a short note of what you found."
)


def describer(context: QueryContext) -> Any:
    secrets = context.knowledge_base.secrets() if hasattr(context.knowledge_base, "secrets") else ()

    def describe(exc: BaseException) -> str:
        first_line = str(exc).splitlines()[0] if str(exc) else ""
        text = redact(first_line, *secrets)[:160]  # an API error may echo a key back: never into an issue
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

    return describe


class ToolSearchEngine:
    """A mode whose retrieval is a tool loop; subclasses say which tools and what the model is told."""

    mode: str = ""
    options_type: ClassVar[type] = AgentOptions
    required_assets: frozenset[SearchAssetRef] = frozenset()
    required_components = frozenset({LANGUAGE})
    system_prompt: str = SYSTEM

    def tools(self, request: QueryRequest, context: QueryContext, options: AgentOptions, ledger: Ledger) -> list[Tool]:
        raise NotImplementedError

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: AgentOptions = query_options(self, request)
        model = context.language_model()
        if not supports_tools(model):
            return QueryResponse(metadata={"issues": [query_issue(
                "agent_tools_unsupported", f"The language model {model.model_name!r} has no tool calling (its client lacks "
                "complete_with_tools); use an OpenAI-compatible model (heta-plugin-openai).", "not_answered")]})
        describe = describer(context)
        started = time.perf_counter()
        ledger = Ledger()
        loop = ToolLoop(model, self.tools(request, context, options, ledger), options, describe_error=describe, ledger=ledger)
        outcome = await loop.run(self.system_prompt, request.text)
        synthesis = await synthesise(model, request.text, ledger, outcome.final_text, evidence_chars=options.result_chars * 2,
                                     usage=outcome.usage, describe_error=describe)
        issues = [*outcome.issues, *synthesis.issues]
        metadata: dict[str, Any] = {
            "tool_calls": [entry.to_dict() for entry in outcome.trace],
            "insights": [dict(i) for i in synthesis.insights],
            "usage": outcome.usage.to_dict(),
            "stopped": outcome.stopped,
            "ledger_size": len(ledger),
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        if issues:
            metadata["issues"] = issues
        return QueryResponse(results=ranked(ledger, synthesis.cited_ids, request.top_k), answer=synthesis.answer,
                             citations=synthesis.citations, metadata=metadata)


def ranked(ledger: Ledger, cited: Sequence[str], top_k: int) -> list[QueryResult]:
    """The ledger, cited evidence first (in citation order), then the rest in the order found; scores 1, 1/2, 1/3..."""
    order = list(dict.fromkeys([*cited, *(r.id for r in ledger.results())]))[:top_k]
    return [_rescored(ledger.get(result_id), 1.0 / (rank + 1)) for rank, result_id in enumerate(order)]


def _rescored(result: QueryResult, score: float) -> QueryResult:
    return attrs.evolve(result, score=score)


class AgentSearchEngine(ToolSearchEngine):
    """``agent_search``: the model searches with the knowledge base's own modes, reads documents and chunks around
    hits, and follows graph entities' relations when the graph exists."""

    mode = "agent_search"

    def tools(self, request: QueryRequest, context: QueryContext, options: AgentOptions, ledger: Ledger) -> list[Tool]:
        return kb_tools(request, context, options, ledger)


class WikiAgentSearchEngine(ToolSearchEngine):
    """``wiki_agent_search``: the model reads the wiki index, searches the wiki, reads pages and their raw sources."""

    mode = "wiki_agent_search"
    required_assets = frozenset({SearchAssetRef("wiki_sections")})
    system_prompt = (
        "You answer questions from a wiki written from the knowledge base's documents. Read the wiki index, search the "
        "wiki, read the pages that look relevant and, when a page is not precise enough, its raw source. Call several "
        "tools in one turn when they are independent; never repeat a call. When you know enough, stop calling tools "
        "and reply with a short note of what you found."
    )

    def tools(self, request: QueryRequest, context: QueryContext, options: AgentOptions, ledger: Ledger) -> list[Tool]:
        from heta_plugin_wiki.wiki_tools import wiki_tools

        return wiki_tools(request, context, options, ledger)


__all__ = ["AgentSearchEngine", "ToolSearchEngine", "WikiAgentSearchEngine", "searchable_modes"]
