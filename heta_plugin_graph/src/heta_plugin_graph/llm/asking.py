"""Many questions to the language model at once, wherever the recipe's executor runs them: ``ask_json``.

- **In this process** (the ``local`` executor): every question goes through one ``JsonLlmCaller`` with the
  knowledge base's cache: at most ``concurrency`` calls in flight, and an interrupted build still caches
  the answers already being computed.
- **Elsewhere** (``heta-plugin-ray``): the driver answers what the cache holds and sends the rest, in batches
  of ``concurrency`` questions, to the executor's workers (``AskJson``). A worker asks the model with the
  same retries and validation and no cache; the driver caches each batch's answers as it returns, so a
  stopped build keeps every finished batch. A batch whose worker failed is ``call_failed`` for each of its
  questions: their documents stay pending and the next build asks again.

Either way the step gets one ``LlmOutcome`` per question, in order, and the same statistics.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
from heta_framework.common.models import Message
from heta_framework.common.retry import ConcurrencyLimiter
from heta_framework.kb.executor import BatchFailure, batched

from heta_plugin_graph.llm.calls import JsonLlmCaller, LlmOutcome, Validator, gather_calls

#: the statistic that is a maximum over calls, not a sum
PEAK = "llm_peak_concurrency"


def _message_tuple(messages: Iterable[Message]) -> tuple[Message, ...]:
    return tuple(messages)


@attrs.frozen
class JsonRequest:
    """One question: what it is about (the cache key's subject), the messages, the schema and the check.

    Pickled to workers elsewhere: ``validate`` must be a module-level function or a picklable object.
    """

    kind: str
    subject_text: str
    messages: tuple[Message, ...] = attrs.field(converter=_message_tuple)
    schema: Mapping[str, Any]
    validate: Validator


@attrs.frozen
class CallSettings:
    """How every question of a step is asked (the step's options)."""

    model_key: str
    prompt_version: str
    concurrency: int = 8
    max_attempts: int = 3
    timeout: float = 300.0

    def caller(self, client: Any, counter: Callable[[str, int], None], cache: Any) -> JsonLlmCaller:
        return JsonLlmCaller(
            client, counter=counter, cache=cache, prompt_version=self.prompt_version, concurrency=self.concurrency,
            max_attempts=self.max_attempts, timeout=self.timeout,
        )


@attrs.frozen
class AskJson:
    """A batch of ``JsonRequest`` -> their outcomes and the batch's statistics: the work ``ask_json`` fans out.

    ``prepare`` keeps one limiter per worker, so the worker never has more than ``concurrency`` calls in flight.
    """

    settings: CallSettings

    @property
    def key(self) -> str:
        return f"ask_json:{self.settings.model_key}:{self.settings.concurrency}"

    @property
    def models(self) -> tuple[str, ...]:
        return (self.settings.model_key,)

    def prepare(self, models: Mapping[str, Any]) -> tuple[Any, ConcurrencyLimiter]:
        return models[self.settings.model_key], ConcurrencyLimiter(self.settings.concurrency)

    async def run(self, prepared: tuple[Any, ConcurrencyLimiter], batch: Sequence[JsonRequest]) -> tuple[list[LlmOutcome], dict[str, int]]:
        client, limiter = prepared
        counts: Counter[str] = Counter()
        caller = self.settings.caller(client, lambda name, amount: counts.update({name: amount}), cache=None)
        caller.limiter = limiter
        outcomes = await gather_calls(_ask(caller, request) for request in batch)
        counts[PEAK] = limiter.peak
        return outcomes, dict(counts)


def _ask(caller: JsonLlmCaller, request: JsonRequest) -> Any:
    return caller.call(
        kind=request.kind, subject_text=request.subject_text, messages=request.messages, schema=request.schema,
        validate=request.validate,
    )


async def ask_json(
    context: Any, settings: CallSettings, requests: Sequence[JsonRequest], *, cache: Any,
    on_outcome: Callable[[int, LlmOutcome], None] | None = None,
) -> list[LlmOutcome]:
    """One outcome per request, in order; ``on_outcome(index, outcome)`` as each is known (progress, issues)."""
    done = on_outcome or (lambda index, outcome: None)
    if getattr(context, "executor_in_process", True):
        caller = settings.caller(context.get_component(settings.model_key), context.count, cache)

        async def one(index: int, request: JsonRequest) -> LlmOutcome:
            outcome = await _ask(caller, request)
            done(index, outcome)
            return outcome

        outcomes = await gather_calls(one(i, r) for i, r in enumerate(requests))
        context.stats[PEAK] = max(context.stats[PEAK], caller.limiter.peak)
        return outcomes
    return await _ask_elsewhere(context, settings, requests, cache, done)


async def _ask_elsewhere(
    context: Any, settings: CallSettings, requests: Sequence[JsonRequest], cache: Any, done: Callable[[int, LlmOutcome], None],
) -> list[LlmOutcome]:
    # the driver's caller only reads and writes the cache (its keys name the driver's client, as in process,
    # so either executor reuses the other's answers); the model is asked on the workers
    keeper = settings.caller(context.get_component(settings.model_key), context.count, cache)
    keys = [keeper.key(r.kind, r.subject_text, r.schema) for r in requests]
    outcomes: list[LlmOutcome | None] = [None] * len(requests)
    missing: list[int] = []
    for index, key in enumerate(keys):
        if (hit := keeper.cached(key)) is not None:
            outcomes[index] = hit
            done(index, hit)
        else:
            missing.append(index)
    batches = batched(missing, settings.concurrency)

    async def keep(batch_index: int, result: Any) -> None:
        members = batches[batch_index]
        if isinstance(result, BatchFailure):
            answered = [LlmOutcome("call_failed", error=result.error, attempts=result.attempts)] * len(members)
        else:
            answered, counts = result
            for name, amount in counts.items():
                if name == PEAK:
                    context.stats[PEAK] = max(context.stats[PEAK], amount)
                else:
                    context.count(name, amount)
        for index, outcome in zip(members, answered):
            keeper.keep(keys[index], outcome)
            outcomes[index] = outcome
            done(index, outcome)

    await context.map_batches(AskJson(settings), [[requests[i] for i in batch] for batch in batches], on_result=keep)
    answered = [outcome for outcome in outcomes if outcome is not None]
    if len(answered) != len(requests):  # an executor that broke its contract (one result per batch)
        raise RuntimeError(f"the executor returned {len(answered)} of {len(requests)} answers")
    return answered
