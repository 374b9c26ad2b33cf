"""A grounded answer written piece by piece: the pieces as the language model streams them, then how it ended.

The same evidence and citation rule as ``options={"answer": True}`` (the numbered results, ``[n]``
markers), but the model is asked for plain text rather than JSON, since a reader is shown the
text as it is written; citations are read from the ``[n]`` markers once it is complete. The
streamed query (``query_stream.py``) and the OpenAI-compatible chat endpoint (``chat.py``) both
read this iterator and only format it differently.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import attrs
from heta_framework.builtin.answering import INSUFFICIENT, citations_for, evidence_block
from heta_framework.common.model_streaming import stream_completion
from heta_framework.common.models import Message
from heta_framework.common.secrets import redact
from heta_framework.contracts.search import Citation, QueryResponse, query_issue

STREAM_PROMPT = (
    "You answer questions using ONLY the numbered evidence passages given. Cite passages inline as [n]. "
    "If the evidence does not answer the question, say so plainly. Reply in the language of the question, "
    "in plain text (not JSON)."
)


@attrs.frozen
class Piece:
    """Answer text as it arrives."""

    text: str


@attrs.frozen
class AnswerEnd:
    """How the answer ended: the whole text, its citations, the model's token counts, and what went wrong.

    ``error`` (``{"code", "message"}``) is set when the model failed mid-answer: ``answer`` is then the part
    that arrived before it."""

    answer: str | None
    citations: tuple[Citation, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    answer_ms: float = 0.0
    issues: tuple[dict[str, Any], ...] = ()
    error: dict[str, str] | None = None

    def usage(self) -> dict[str, Any]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens, "answer_ms": round(self.answer_ms, 1)}


async def stream_answer(
    kb: Any, question: str, response: QueryResponse, *, wanted: bool, temperature: float = 0.0, max_tokens: int | None = None,
) -> AsyncIterator[Piece | AnswerEnd]:
    """Pieces, then one ``AnswerEnd``. An answer the mode wrote itself (GraphRAG global, multi-hop) is one piece;
    ``wanted`` asks for one written from the results. Never raises for the model's sake: a failure is the end's ``error``."""
    if response.answer is not None:
        yield Piece(response.answer)
        yield AnswerEnd(response.answer, tuple(response.citations))
        return
    if not wanted:
        yield AnswerEnd(None)
        return
    if not kb.has_component("models.language"):
        yield AnswerEnd(None, issues=(query_issue("answer_unavailable", "An answer needs models.language in the recipe.", "returned_results_only"),))
        return
    if not response.results:
        yield Piece(INSUFFICIENT)
        yield AnswerEnd(INSUFFICIENT, issues=(query_issue("answer_no_evidence", "No results to answer from.", "answered_insufficient"),))
        return
    model = kb.get_component("models.language")
    messages = [
        Message("system", STREAM_PROMPT),
        Message("user", f"Question: {question}\n\nEvidence:\n{evidence_block(response.results)}"),
    ]
    started = time.perf_counter()
    parts: list[str] = []
    prompt_tokens = completion_tokens = 0
    try:
        async for delta in stream_completion(model, messages, temperature=temperature, max_tokens=max_tokens):
            prompt_tokens += delta.prompt_tokens
            completion_tokens += delta.completion_tokens
            if delta.text:
                parts.append(delta.text)
                yield Piece(delta.text)
    except Exception as exc:  # the model's failure ends the answer, never the connection without a word
        text = "".join(parts)
        message = redact(f"The language model failed mid-answer: {exc}", *kb.secrets())
        yield AnswerEnd(
            text, tuple(citations_for(text, response.results)), prompt_tokens, completion_tokens, _ms(started),
            (query_issue("answer_failed", f"The language model call failed: {type(exc).__name__}", "returned_partial_answer"),),
            {"code": type(exc).__name__, "message": message},
        )
        return
    text = "".join(parts).strip()
    yield AnswerEnd(text, tuple(citations_for(text, response.results)), prompt_tokens, completion_tokens, _ms(started))


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
