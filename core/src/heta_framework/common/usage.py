"""What model calls a piece of work made: calls, embedded texts, tokens and cost, by model.

Counting happens at one place, the metered model clients (``metered_models``), into every ``UsageMeter``
that is open in the current context: a query opens one (``response.usage``), a build one per run and one
per step (``report.usage``), and each knowledge base keeps one for its lifetime (``heta serve`` shows it).
Context variables carry the open meters, so concurrent queries on one event loop never mix their counts,
and tasks a step fans out (which copy the context) count into the step that started them.

A provider that learns token counts inside its own client (an embeddings API reports them) hands them
over with ``report_tokens``; the metered client adds them to the call it is making.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import attrs

from heta_framework.common.models import ModelPrices

#: the meters open in this context, outermost first
_open_meters: ContextVar[tuple[UsageMeter, ...]] = ContextVar("heta_usage_meters", default=())
#: the model call in progress in this context (its own tokens, reported from inside the client)
_current_call: ContextVar[CallTokens | None] = ContextVar("heta_usage_call", default=None)


@attrs.define
class CallTokens:
    """Tokens a client reported during one call: ``input`` (prompt or embedded) and ``output`` (completion)."""

    input: int = 0
    output: int = 0
    reported: bool = False


@attrs.define
class ModelUsage:
    kind: str
    calls: int = 0
    #: texts embedded (embedding models), documents scored (rerankers), images read (vision)
    items: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    #: whether the provider reported tokens for every call (else the token counts are a lower bound)
    tokens_known: bool = True
    prices: ModelPrices | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "calls": self.calls}
        if self.kind == "embedding":
            data["texts"] = self.items
            if self.tokens_known:
                data["tokens"] = self.input_tokens
        elif self.kind == "reranker":
            data["documents"] = self.items
        else:
            if self.kind == "vision":
                data["images"] = self.items
            data["prompt_tokens"] = self.input_tokens
            data["completion_tokens"] = self.output_tokens
        if self.prices is not None and self.tokens_known and self.kind != "reranker":
            data["cost"] = round(self.prices.cost(self.input_tokens, self.output_tokens), 8)
        return data


class UsageMeter:
    """Usage by model name. Safe to add to from several threads (a sync facade's loop, a server's)."""

    def __init__(self) -> None:
        self._models: dict[str, ModelUsage] = {}
        self._lock = threading.Lock()

    def add(
        self, model_name: str, kind: str, *, items: int = 0, input_tokens: int = 0, output_tokens: int = 0, tokens_known: bool = True,
        prices: ModelPrices | None = None,
    ) -> None:
        with self._lock:
            usage = self._models.get(model_name)
            if usage is None:
                usage = self._models[model_name] = ModelUsage(kind, prices=prices)
            usage.calls += 1
            usage.items += items
            usage.input_tokens += input_tokens
            usage.output_tokens += output_tokens
            usage.tokens_known = usage.tokens_known and tokens_known

    def to_dict(self) -> dict[str, Any]:
        """``{"models": {name: {...}}, "totals": {...}}``: the shape of every ``usage`` Heta reports."""
        with self._lock:
            models = {name: usage.to_dict() for name, usage in sorted(self._models.items())}
        return {"models": models, "totals": totals(models)}


def totals(models: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The sums over models: ``llm_calls`` counts language and vision calls; ``cost`` only when some model has prices."""
    result: dict[str, Any] = {
        "model_calls": 0, "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "embedded_texts": 0, "embedding_tokens": 0,
    }
    cost = None
    for usage in models.values():
        result["model_calls"] += usage.get("calls", 0)
        if usage.get("kind") in ("language", "vision"):
            result["llm_calls"] += usage.get("calls", 0)
        result["prompt_tokens"] += usage.get("prompt_tokens", 0)
        result["completion_tokens"] += usage.get("completion_tokens", 0)
        result["embedded_texts"] += usage.get("texts", 0)
        result["embedding_tokens"] += usage.get("tokens", 0)
        if "cost" in usage:
            cost = (cost or 0.0) + usage["cost"]
    if cost is not None:
        result["cost"] = round(cost, 8)
    return result


def add_usage(*usages: Mapping[str, Any]) -> dict[str, Any]:
    """Several ``usage`` dicts as one (an evaluation's queries, a server's requests)."""
    models: dict[str, dict[str, Any]] = {}
    for usage in usages:
        for name, counts in (usage.get("models") or {}).items():
            merged = models.setdefault(name, {"kind": counts.get("kind")})
            for key, value in counts.items():
                if key != "kind" and isinstance(value, int | float):
                    merged[key] = round(merged.get(key, 0) + value, 8) if key == "cost" else merged.get(key, 0) + value
    return {"models": dict(sorted(models.items())), "totals": totals(models)}


def usage_attributes(usage: Mapping[str, Any]) -> dict[str, Any]:
    """A query's or a build's usage totals as span attributes (``heta.usage.llm_calls``, ...)."""
    return {f"heta.usage.{name}": value for name, value in usage.get("totals", {}).items()}


EMPTY_USAGE: Mapping[str, Any] = {"models": {}, "totals": totals({})}


@contextmanager
def metering() -> Iterator[UsageMeter]:
    """Count every model call made in this context (and tasks started from it) until the block ends."""
    meter = UsageMeter()
    token = _open_meters.set((*_open_meters.get(), meter))
    try:
        yield meter
    finally:
        _open_meters.reset(token)


@contextmanager
def model_call() -> Iterator[CallTokens]:
    """The metered client's frame around one call: what ``report_tokens`` hands over lands here."""
    tokens = CallTokens()
    handle = _current_call.set(tokens)
    try:
        yield tokens
    finally:
        _current_call.reset(handle)


def report_tokens(*, input_tokens: int = 0, output_tokens: int = 0) -> None:
    """For provider code: the tokens the server said this call used (summed when a call makes several requests)."""
    tokens = _current_call.get()
    if tokens is not None:
        tokens.input += int(input_tokens or 0)
        tokens.output += int(output_tokens or 0)
        tokens.reported = True


def record_call(
    model_name: str, kind: str, *, items: int = 0, input_tokens: int = 0, output_tokens: int = 0, tokens_known: bool = True,
    prices: ModelPrices | None = None, lifetime: UsageMeter | None = None,
) -> None:
    """One finished call, into every open meter and the knowledge base's ``lifetime`` one."""
    meters = _open_meters.get()
    for meter in (*meters, *((lifetime,) if lifetime is not None else ())):
        meter.add(model_name, kind, items=items, input_tokens=input_tokens, output_tokens=output_tokens, tokens_known=tokens_known, prices=prices)
