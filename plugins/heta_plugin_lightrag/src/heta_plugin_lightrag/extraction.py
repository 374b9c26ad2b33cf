"""One query's keywords: from the recipe's language model (one call, cached by query text) or offline.

- With ``models.language``: one call asking for LightRAG's JSON. An answer that
  is not that JSON is asked once more with the error in the prompt; still
  invalid, the offline keywords are used and ``lightrag_keywords_invalid`` is
  reported. A failed call (429 after the provider's retries, a time-out, a
  connection error) falls back the same way with ``lightrag_keywords_failed``.
  Nothing here raises: a lost model must not lose the search.
- Valid answers, and answers that stayed invalid (at temperature 0 asking again
  gives the same answer at the same price), are cached by (model, prompt
  version, query text): in memory for this process, single-flight, so
  concurrent identical queries share one call, and in
  ``lightrag_keywords.sqlite`` in the knowledge-base folder, so a new process
  (the CLI) does not pay again. A failed call is not cached: it may work next time.
- Without a language model: the offline keywords (``offline.py``), no issue:
  that is the designed offline path.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import weakref
from pathlib import Path
from typing import Any

from heta_framework.builtin.answering import parse_json_object
from heta_framework.builtin.engines.calibration import state_key
from heta_framework.builtin.engines.model_failures import describe_failure
from heta_framework.kb.search import QueryContext, query_issue
from heta_plugin_graph.llm.cache import CachedAnswer, LlmCache, cache_key

from heta_plugin_lightrag.keywords import (
    KEYWORD_SCHEMA,
    PROMPT_VERSION,
    Keywords,
    keyword_messages,
    keywords_from_answer,
    retry_messages,
    validate_keywords,
)
from heta_plugin_lightrag.offline import offline_keywords

log = logging.getLogger(__name__)

LANGUAGE_KEY = "models.language"
CACHE_FILE = "lightrag_keywords.sqlite"
MEMORY_ENTRIES = 4096
MAX_ATTEMPTS = 2  # the answer, and one retry with the validation error

Issue = dict[str, Any]


class _PerKnowledgeBase:
    """What one knowledge base's queries share in this process: answers, calls in flight, the graph's labels."""

    def __init__(self, root: Path | None):
        self.answers: collections.OrderedDict[str, CachedAnswer] = collections.OrderedDict()
        self.in_flight: dict[str, asyncio.Future] = {}
        self.labels: tuple[str, dict] | None = None
        self.disk: LlmCache | None = None
        if root is not None:
            try:
                self.disk = LlmCache(root / CACHE_FILE)
            except Exception as exc:  # noqa: BLE001 — a read-only folder: the memory cache still works
                log.info("keyword cache not kept on disk in %s: %s", root, type(exc).__name__)

    def remembered(self, key: str) -> CachedAnswer | None:
        hit = self.answers.get(key)
        if hit is None and self.disk is not None:
            hit = self.disk.get(key)
        if hit is not None:
            self.remember(key, hit, persist=False)
        return hit

    def remember(self, key: str, answer: CachedAnswer, *, persist: bool = True) -> None:
        self.answers[key] = answer
        self.answers.move_to_end(key)
        while len(self.answers) > MEMORY_ENTRIES:
            self.answers.popitem(last=False)
        if persist and self.disk is not None:
            try:
                self.disk.put(key, answer)
            except Exception as exc:  # noqa: BLE001 — the disk copy is an optimisation
                log.info("keyword cache write failed: %s", type(exc).__name__)


_shared: weakref.WeakKeyDictionary[Any, _PerKnowledgeBase] = weakref.WeakKeyDictionary()


def _shared_for(kb: Any) -> _PerKnowledgeBase:
    shared = _shared.get(kb)
    if shared is None:
        root = getattr(kb, "path", None)
        shared = _shared[kb] = _PerKnowledgeBase(Path(root) if root is not None else None)
    return shared


def graph_labels(context: QueryContext, graph: Any) -> dict:
    """``graph.fact_types()``, read once per build of the knowledge base (it is a scan of every fact)."""
    shared = _shared_for(context.knowledge_base)
    try:
        state = state_key(context.knowledge_base)
    except Exception:  # noqa: BLE001 — a knowledge base without a run record: read every time
        state = None
    if state is None or shared.labels is None or shared.labels[0] != state:
        types = graph.fact_types()
        if state is None:
            return types
        shared.labels = (state, types)
    return shared.labels[1]


async def query_keywords(context: QueryContext, query: str, graph: Any) -> tuple[Keywords, list[Issue]]:
    """The keywords of ``query`` and the issues met getting them (never raises for a model failure)."""
    if not context.has_component(LANGUAGE_KEY):
        return offline_keywords(query, graph_labels(context, graph)), []
    model = context.get_component(LANGUAGE_KEY)
    shared = _shared_for(context.knowledge_base)
    key = cache_key(str(getattr(model, "model_name", type(model).__name__)), PROMPT_VERSION, "query_keywords", query)
    answer = shared.remembered(key)
    cached = answer is not None
    if answer is None:
        pending = shared.in_flight.get(key)
        if pending is not None:  # the same query is being asked right now: share its call
            try:
                answer, cached = await asyncio.shield(pending), True
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not pending.cancelled() or (task is not None and task.cancelling()):
                    raise  # this query itself was cancelled
                answer = await _ask(model, query, context)  # the query we waited for was cancelled, not this one
        else:
            pending = shared.in_flight[key] = asyncio.get_running_loop().create_future()
            try:
                answer = await _ask(model, query, context)
                if answer.status != "call_failed":
                    shared.remember(key, answer)
                pending.set_result(answer)
            except asyncio.CancelledError:
                pending.cancel()  # the waiters are cancelled too; the next query asks again
                raise
            except BaseException as exc:  # _ask catches the model's errors: this is a bug, shared with the waiters
                pending.set_exception(exc)
                pending.exception()  # retrieved: not logged as "never retrieved" when nobody waited
                raise
            finally:
                del shared.in_flight[key]
    if answer.status == "valid":
        return keywords_from_answer(answer.value, "cache" if cached else "language_model"), []
    fallback = offline_keywords(query, graph_labels(context, graph))
    if answer.status == "invalid":
        issue = query_issue(
            "lightrag_keywords_invalid",
            f"The language model's keywords were not the JSON asked for after {answer.attempts} tries ({answer.error[:160]}).",
            "used_offline_keywords",
        )
    else:
        issue = query_issue("lightrag_keywords_failed", f"The keyword call failed ({answer.error}).", "used_offline_keywords")
    return fallback, [issue]


async def _ask(model: Any, query: str, context: QueryContext) -> CachedAnswer:
    messages = keyword_messages(query)
    error = ""
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            completion = await model.complete(messages, json_schema=KEYWORD_SCHEMA, temperature=0.0)
        except Exception as exc:  # noqa: BLE001 — 429, time-out, connection: the provider has retried already
            log.warning("keyword extraction call failed: %s", type(exc).__name__)
            return CachedAnswer("call_failed", None, describe_failure(exc, context), attempt)
        text = getattr(completion, "text", "") or ""
        value = parse_json_object(text)
        error = "the answer is not a JSON object" if value is None else (validate_keywords(value) or "")
        if not error:
            return CachedAnswer("valid", value, "", attempt)
        messages = retry_messages(query, text, error)
    return CachedAnswer("invalid", None, error, MAX_ATTEMPTS)
