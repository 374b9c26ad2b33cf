"""Grounded answers for any mode: ``options={"answer": True}`` with a language model in the recipe.

The model sees only the retrieved results, numbered; it must answer from them,
cite them as ``[n]``, and say when they are not enough. Output that is not the
JSON asked for becomes a ``metadata["issues"]`` entry, never an exception.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

from heta_framework.common.models import Message
from heta_framework.contracts.search import Citation, QueryRequest, QueryResponse, QueryResult, query_issue

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "sufficient": {"type": "boolean"},
        "citations": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["answer", "sufficient", "citations"],
}

SYSTEM_PROMPT = (
    "You answer questions using ONLY the numbered evidence passages given. "
    "Cite passages inline as [n]. If the evidence does not answer the question, say so plainly "
    "and set sufficient to false. Reply in the language of the question, as JSON: "
    '{"answer": str, "sufficient": bool, "citations": [int]}.'
)

INSUFFICIENT = "The retrieved evidence is not sufficient to answer this question."


def evidence_block(results: tuple[QueryResult, ...] | list[QueryResult], max_chars: int = 1200) -> str:
    return "\n\n".join(f"[{i}] {r.text[:max_chars]}" for i, r in enumerate(results, start=1))


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a model reply (tolerating code fences), or None."""
    text = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            return None
        try:
            value = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            return None
    return value if isinstance(value, dict) else None


def citations_for(answer: str, results: tuple[QueryResult, ...] | list[QueryResult], cited: list[int] | None = None) -> list[Citation]:
    """Citations for every ``[n]`` marker in ``answer`` (and any extra indices listed) that names a result."""
    numbers = [int(n) for n in re.findall(r"\[(\d+)\]", answer)] + list(cited or [])
    citations = []
    for number in dict.fromkeys(numbers):
        if 1 <= number <= len(results):
            result = results[number - 1]
            citations.append(Citation(marker=f"[{number}]", result_id=result.id, text=result.text[:200]))
    return citations


async def answer_from_results(kb: Any, request: QueryRequest, response: QueryResponse) -> QueryResponse:
    issues = list(response.metadata.get("issues", ()))
    if not kb.has_component("models.language"):
        issues.append(query_issue("answer_unavailable", "options.answer needs models.language in the recipe.", "returned_results_only"))
        return attrs.evolve(response, metadata={**response.metadata, "issues": issues})
    if not response.results:
        issues.append(query_issue("answer_no_evidence", "No results to answer from.", "answered_insufficient"))
        return attrs.evolve(response, answer=INSUFFICIENT, metadata={**response.metadata, "issues": issues})
    model = kb.get_component("models.language")
    messages = [
        Message("system", SYSTEM_PROMPT),
        Message("user", f"Question: {request.text}\n\nEvidence:\n{evidence_block(response.results)}"),
    ]
    try:
        completion = await model.complete(messages, json_schema=ANSWER_SCHEMA)
    except Exception as exc:
        issues.append(query_issue("answer_failed", f"The language model call failed: {type(exc).__name__}", "returned_results_only"))
        return attrs.evolve(response, metadata={**response.metadata, "issues": issues})
    data = parse_json_object(completion.text)
    if data is None or not isinstance(data.get("answer"), str) or not data["answer"].strip():
        issues.append(query_issue("answer_invalid_output", "The language model did not return the answer JSON asked for.", "returned_results_only"))
        return attrs.evolve(response, metadata={**response.metadata, "issues": issues})
    answer = data["answer"].strip()
    cited = [c for c in data.get("citations", []) if isinstance(c, int)]
    metadata = {**response.metadata, "answer_sufficient": bool(data.get("sufficient", True))}
    if issues:
        metadata["issues"] = issues
    return attrs.evolve(response, answer=answer, citations=citations_for(answer, response.results, cited), metadata=metadata)
