"""The grounded answer after the loop: insights, each citing evidence ids, checked against the ledger.

The model is shown the ledger's results by id and asked for ``{"answer", "insights": [{"text", "evidence"}]}``.
An id it cites that no tool returned is dropped and reported (``agent_citation_not_in_ledger``): it cannot rest
on anything the caller was shown, and it might be invented. An insight left with no evidence is dropped with it.
No usable reply: ``agent_no_answer``; nothing found at all: ``agent_no_evidence`` and no synthesis call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import attrs
from heta_framework.common.models import LanguageClient, Message
from heta_framework.kb.search import Citation, query_issue

from heta_plugin_wiki.agent.ledger import Ledger

NOT_ANSWERED = "The evidence found does not answer the question."

SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "insights": {"type": "array", "items": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "evidence": {"type": "array", "items": {"type": "string"}}},
            "required": ["text", "evidence"],
        }},
    },
    "required": ["answer", "insights"],
}

PROMPT = (
    "Answer the question from the evidence only. Each piece of evidence has an id in square brackets. Write the answer, "
    "then the insights it rests on: each insight one statement with the ids of the evidence that supports it. Cite only "
    "ids listed below. If the evidence does not answer the question, say so. Reply in the language of the question, only "
    'with JSON: {"answer": str, "insights": [{"text": str, "evidence": [id]}]}.'
)

_FENCED = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)


@attrs.frozen
class Synthesis:
    answer: str
    insights: tuple[dict[str, Any], ...]
    citations: tuple[Citation, ...]
    cited_ids: tuple[str, ...]
    issues: tuple[dict[str, Any], ...]


async def synthesise(model: LanguageClient, question: str, ledger: Ledger, notes: str | None, *, evidence_chars: int,
                     usage: Any, describe_error: Callable[[BaseException], str]) -> Synthesis:
    if not len(ledger):
        return Synthesis(NOT_ANSWERED, (), (), (), (query_issue(
            "agent_no_evidence", "The tools returned no evidence; the question is not answered.", "answered_insufficient"),))
    evidence = "\n\n".join(f"[{r.id}] {r.text[:evidence_chars]}" for r in ledger.results())
    draft = f"\n\nYour notes from the search:\n{notes.strip()}" if notes and notes.strip() else ""
    messages = [Message("system", PROMPT), Message("user", f"Question: {question}{draft}\n\nEvidence:\n{evidence}")]
    try:
        completion = await model.complete(messages, json_schema=SCHEMA)
    except Exception as exc:
        return _unanswered(f"the language model call failed ({describe_error(exc)})")
    usage.add(completion)
    data = _json_object(completion.text)
    answer = data.get("answer") if data else None
    insights = data.get("insights") if data else None
    if not isinstance(answer, str) or not answer.strip() or not isinstance(insights, list):
        return _unanswered('the reply is not {"answer": str, "insights": [...]}')
    return checked(answer.strip(), insights, ledger)


def checked(answer: str, insights: list[Any], ledger: Ledger) -> Synthesis:
    """Keep each insight's citations that the ledger holds; report the rest."""
    kept: list[dict[str, Any]] = []
    dropped: list[str] = []
    cited: dict[str, None] = {}
    for insight in insights:
        if not isinstance(insight, dict) or not isinstance(insight.get("text"), str) or not insight["text"].strip():
            continue
        named = [e for e in insight.get("evidence", []) if isinstance(e, str)] if isinstance(insight.get("evidence"), list) else []
        valid = [e for e in dict.fromkeys(named) if e in ledger]
        dropped += [e for e in named if e not in ledger]
        if valid:
            kept.append({"text": insight["text"].strip(), "evidence": valid})
            cited.update(dict.fromkeys(valid))
    issues = []
    if dropped:
        issues.append(query_issue("agent_citation_not_in_ledger", f"{len(dropped)} citation(s) named evidence no tool returned; "
                                  "they were dropped.", "dropped_citations", ids=sorted(set(dropped))[:20]))
    if insights and not kept:
        issues.append(query_issue("agent_answer_unsupported", "No insight of the answer cites evidence the tools returned.",
                                  "kept_answer_without_insights"))
    citations = tuple(Citation(marker=result_id, result_id=result_id, text=ledger.get(result_id).text[:200]) for result_id in cited)
    return Synthesis(answer, tuple(kept), citations, tuple(cited), tuple(issues))


def _unanswered(why: str) -> Synthesis:
    return Synthesis(NOT_ANSWERED, (), (), (), (query_issue(
        "agent_no_answer", f"The grounded answer could not be written: {why}. The evidence found is returned.",
        "answered_insufficient"),))


def _json_object(text: str) -> dict[str, Any] | None:
    match = _FENCED.match(text)
    try:
        value = json.loads(match.group(1) if match else text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
