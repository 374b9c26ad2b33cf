"""``heta_multihop_search``: rounds of search, usefulness extraction and sufficiency judgement.

Each round (at most ``max_rounds``, default 3):

1. run the base mode (``heta_rerank_search`` by default) for the current query;
2. *extract*: the language model says which of the new results are useful and
   what useful information they hold (one JSON call);
3. *judge*: the language model says whether the information gathered so far
   answers the original question; if so it answers (citing the evidence as
   ``[n]``), else it writes the next query (one JSON call).

The two judgements stay separate calls, as in the spec's flow: each prompt asks
one question, and a bad reply to one is reported on its own. A round whose
search finds nothing makes no model call and ends the rounds (there is nothing
new to reason about). When no round answers, a conservative answer is written
from the accumulated evidence and ``answer_not_confirmed`` is reported.

The response holds the answer, the useful evidence (each result once, in the
order it was found; the answer's ``[n]`` markers number this list), citations,
``metadata["round_reports"]`` and ``metadata["issues"]``. The extracted notes
and any model reasoning stay internal.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import attrs

from heta_framework.builtin.answering import INSUFFICIENT, citations_for, evidence_block, parse_json_object
from heta_framework.builtin.engines.composed_options import MultihopSearchOptions, forwarded_options
from heta_framework.builtin.engines.fusion import merge_issues
from heta_framework.builtin.engines.mode_assets import assets_of
from heta_framework.builtin.engines.model_failures import describe_failure
from heta_framework.common.models import Message
from heta_framework.contracts.components import ComponentRef, model_ref
from heta_framework.contracts.query_options import query_options
from heta_framework.contracts.search import QueryContext, QueryRequest, QueryResponse, QueryResult, SearchAssetRef, query_issue

log = logging.getLogger(__name__)

LANGUAGE = model_ref("language")

EXTRACT_SCHEMA = {
    "type": "object",
    "properties": {
        "useful": {"type": "array", "items": {"type": "integer"}},
        "information": {"type": "string"},
    },
    "required": ["useful", "information"],
}
EXTRACT_PROMPT = (
    "You help answer a question in several search rounds. Given the question, what is already known, and "
    "new numbered search results, list the numbers of the results that help answer the question and state "
    "the useful facts they contain, briefly. Use only the results. Reply only with JSON: "
    '{"useful": [int], "information": str}. If nothing helps: {"useful": [], "information": ""}.'
)

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {
        "sufficient": {"type": "boolean"},
        "answer": {"type": "string"},
        "next_query": {"type": "string"},
    },
    "required": ["sufficient", "answer", "next_query"],
}
JUDGE_PROMPT = (
    "Decide whether the numbered evidence answers the question completely. If it does, set sufficient to "
    "true and answer from the evidence only, citing it inline as [n]. If it does not, set sufficient to "
    "false, leave answer empty, and write next_query: one search query for the missing information. "
    'Reply in the language of the question, only with JSON: {"sufficient": bool, "answer": str, "next_query": str}.'
)

FINAL_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}
FINAL_PROMPT = (
    "The search rounds are over and the evidence may be incomplete. Write a careful answer to the question "
    "using only the numbered evidence, citing it inline as [n]. Say clearly which part the evidence does not "
    'establish; never guess. Reply in the language of the question, only with JSON: {"answer": str}.'
)


@attrs.frozen
class RoundReport:
    round: int
    query: str
    result_count: int
    useful_information_found: bool
    answered: bool
    next_query: str | None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


class _InvalidOutput(Exception):
    """The model answered, but not with the JSON asked for."""


class MultihopSearchEngine:
    """Multi-hop question answering over a base mode. Option: ``max_rounds`` (default 3)."""

    def __init__(
        self,
        base_mode: str = "heta_rerank_search",
        *,
        mode: str = "heta_multihop_search",
        required_assets: Iterable[SearchAssetRef] | None = None,
    ):
        self.mode = mode
        self.base_mode = base_mode
        self.required_assets: frozenset[SearchAssetRef] = assets_of(base_mode, required_assets)
        self.required_components: frozenset[ComponentRef] = frozenset({LANGUAGE})

    options_type: ClassVar[type] = MultihopSearchOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        return await _Session(self, request, context).run()


class _Session:
    """The state of one multi-hop query."""

    def __init__(self, engine: MultihopSearchEngine, request: QueryRequest, context: QueryContext):
        self.engine = engine
        self.request = request
        self.context = context
        self.max_rounds = query_options(engine, request).max_rounds
        self.model = context.language_model()
        self.evidence: dict[str, QueryResult] = {}  # useful results, each once, in the order found
        self.retrieved: dict[str, QueryResult] = {}  # everything retrieved, each once
        self.notes: list[str] = []  # extracted information; internal, never returned
        self.reports: list[RoundReport] = []
        self.issues: list[dict[str, Any]] = []
        self.nested_issues: list[list[Any]] = []

    async def run(self) -> QueryResponse:
        query: str = self.request.text
        answer: str | None = None
        asked: set[str] = set()
        for number in range(1, self.max_rounds + 1):
            asked.add(_normalised(query))
            answer, next_query = await self._round(number, query)
            if answer is not None or next_query is None:
                break
            if _normalised(next_query) in asked:
                # searching the same words again finds the same results: stop instead of wasting rounds
                self._replace_last_next_query(None)
                break
            query = next_query
        if answer is None:
            answer = await self._conservative_answer()
        results = list(self.evidence.values()) or list(self.retrieved.values())[: self.request.top_k]
        metadata: dict[str, Any] = {"round_reports": [r.to_dict() for r in self.reports]}
        issues = merge_issues(self.issues, *self.nested_issues)
        if issues:
            metadata["issues"] = issues
        citations = citations_for(answer, results) if self.evidence else []
        return QueryResponse(results=results, answer=answer, citations=citations, metadata=metadata)

    async def _round(self, number: int, query: str) -> tuple[str | None, str | None]:
        """Run one round; return (answer, None) when answered, else (None, next query or None to stop)."""
        response = await self.context.query(
            query,
            mode=self.engine.base_mode,
            top_k=self.request.top_k,
            options=forwarded_options(self.request, self.context, self.engine.base_mode),
        )
        self.nested_issues.append(response.issues)
        results = list(response.results)
        for result in results:
            self.retrieved.setdefault(result.id, result)
        if not results:
            self.issues.append(
                query_issue("round_no_results", f"Round {number}: the search found nothing for {query!r}.", "stopped_rounds", round=number)
            )
            self.reports.append(RoundReport(number, query, 0, False, False, None))
            return None, None
        useful_found = await self._extract(number, results)
        answer, next_query = await self._judge(number)
        self.reports.append(RoundReport(number, query, len(results), useful_found, answer is not None, next_query))
        return answer, next_query

    async def _extract(self, number: int, results: list[QueryResult]) -> bool:
        known = "\n".join(f"- {note}" for note in self.notes) or "(nothing yet)"
        messages = [
            Message("system", EXTRACT_PROMPT),
            Message("user", f"Question: {self.request.text}\n\nAlready known:\n{known}\n\nNew results:\n{evidence_block(results)}"),
        ]
        try:
            data = await self._ask(messages, EXTRACT_SCHEMA)
            useful = data.get("useful")
            information = data.get("information", "")
            if not isinstance(useful, list) or not isinstance(information, str):
                raise _InvalidOutput("expected {\"useful\": [int], \"information\": str}")
        except _InvalidOutput as exc:
            self._model_issue("multihop_invalid_output", number, "extract", str(exc), "treated_round_as_not_useful")
            useful, information = [], ""
        except Exception as exc:  # a failed call loses this round's judgement, not the query
            self._model_issue("multihop_model_failed", number, "extract", describe_failure(exc, self.context), "treated_round_as_not_useful")
            useful, information = [], ""
        chosen = [results[i - 1] for i in dict.fromkeys(useful) if isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= len(results)]
        new = [result for result in chosen if result.id not in self.evidence]
        for result in new:
            self.evidence[result.id] = result
        if information.strip() and chosen:
            self.notes.append(information.strip())
        if not chosen:
            self.issues.append(
                query_issue(
                    "round_no_useful_information",
                    f"Round {number}: none of the {len(results)} results helps answer the question.",
                    "continued",
                    round=number,
                )
            )
            return False
        return True

    async def _judge(self, number: int) -> tuple[str | None, str | None]:
        evidence = list(self.evidence.values())
        known = "\n".join(f"- {note}" for note in self.notes) or "(nothing yet)"
        messages = [
            Message("system", JUDGE_PROMPT),
            Message(
                "user",
                f"Question: {self.request.text}\n\nKnown so far:\n{known}\n\n"
                f"Evidence:\n{evidence_block(evidence) if evidence else '(none)'}",
            ),
        ]
        try:
            data = await self._ask(messages, JUDGE_SCHEMA)
            sufficient, answer, next_query = data.get("sufficient"), data.get("answer", ""), data.get("next_query", "")
            if not isinstance(sufficient, bool) or not isinstance(answer, str) or not isinstance(next_query, str):
                raise _InvalidOutput('expected {"sufficient": bool, "answer": str, "next_query": str}')
            if sufficient and not answer.strip():
                raise _InvalidOutput("sufficient is true but the answer is empty")
        except _InvalidOutput as exc:
            self._model_issue("multihop_invalid_output", number, "judge", str(exc), "stopped_rounds")
            return None, None
        except Exception as exc:
            self._model_issue("multihop_model_failed", number, "judge", describe_failure(exc, self.context), "stopped_rounds")
            return None, None
        if sufficient and evidence:
            return answer.strip(), None
        return None, (" ".join(next_query.split()) or None)

    async def _conservative_answer(self) -> str:
        evidence = list(self.evidence.values())
        rounds = len(self.reports)
        if not evidence:
            self.issues.append(
                query_issue(
                    "answer_not_confirmed",
                    f"No useful evidence was found in {rounds} round(s); the question is not answered.",
                    "answered_insufficient",
                )
            )
            return INSUFFICIENT
        messages = [
            Message("system", FINAL_PROMPT),
            Message("user", f"Question: {self.request.text}\n\nEvidence:\n{evidence_block(evidence)}"),
        ]
        try:
            data = await self._ask(messages, FINAL_SCHEMA)
            answer = data.get("answer")
            if not isinstance(answer, str) or not answer.strip():
                raise _InvalidOutput('expected {"answer": str} with a non-empty answer')
        except _InvalidOutput as exc:
            self._model_issue("multihop_invalid_output", None, "final", str(exc), "answered_insufficient")
            answer = INSUFFICIENT
        except Exception as exc:
            self._model_issue("multihop_model_failed", None, "final", describe_failure(exc, self.context), "answered_insufficient")
            answer = INSUFFICIENT
        self.issues.append(
            query_issue(
                "answer_not_confirmed",
                f"The evidence gathered in {rounds} round(s) was not judged sufficient; the answer is conservative.",
                "answered_conservatively",
            )
        )
        return answer.strip()

    async def _ask(self, messages: list[Message], schema: Mapping[str, Any]) -> dict[str, Any]:
        completion = await self.model.complete(messages, json_schema=schema)
        data = parse_json_object(completion.text)
        if data is None:
            raise _InvalidOutput("the reply is not a JSON object")
        return data

    def _model_issue(self, code: str, number: int | None, step: str, why: str, action: str) -> None:
        where = f"Round {number}, {step}" if number is not None else "Final answer"
        problem = "the language model call failed" if code == "multihop_model_failed" else "the language model reply was unusable"
        self.issues.append(query_issue(code, f"{where}: {problem} ({why}).", action, step=step, round=number))

    def _replace_last_next_query(self, value: str | None) -> None:
        self.reports[-1] = attrs.evolve(self.reports[-1], next_query=value)


def _normalised(text: str) -> str:
    return " ".join(text.split()).casefold()
