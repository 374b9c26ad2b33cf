"""OpenTelemetry spans for builds, queries, store calls and model calls, through ``opentelemetry-api`` only.

The API is a no-op until a program (or ``opentelemetry-instrument``) installs an SDK ``TracerProvider``, so
Heta never configures exporters itself and costs next to nothing when nobody listens (docs/observability.md).

What a span may carry is decided here, once: names, counts, sizes, modes, model names. Never an API key,
never a query's text unless ``HETA_TRACE_QUERY_TEXT=1`` (``query_text_attributes``), never an exception's
message (it may quote either): a failed span says only the exception's type.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, Status, StatusCode

#: spans of every Heta component come from this instrumentation scope (filter on it in a backend)
TRACER_NAME = "heta"
#: ``1``/``true``/``yes``: put the query's text on query spans (off by default: a query may be private)
QUERY_TEXT_ENV = "HETA_TRACE_QUERY_TEXT"
#: how much of a query's text a span keeps when the text is turned on
QUERY_TEXT_LIMIT = 500

# a ProxyTracer: it follows whatever provider the program installs later, so it can be made at import
_tracer = trace.get_tracer(TRACER_NAME)

AttributeValue = str | bool | int | float


def query_text_enabled() -> bool:
    return os.environ.get(QUERY_TEXT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def query_text_attributes(text: str) -> dict[str, str]:
    """``{"heta.query.text": text}`` when the user turned query text on, else nothing."""
    return {"heta.query.text": text[:QUERY_TEXT_LIMIT]} if query_text_enabled() else {}


def _clean(attributes: Mapping[str, Any]) -> dict[str, AttributeValue]:
    """The attributes OpenTelemetry accepts: ``None`` left out, anything else not a scalar as its ``str``."""
    return {
        name: value if isinstance(value, str | bool | int | float) else str(value)
        for name, value in attributes.items()
        if value is not None
    }


def tracing_installed() -> bool:
    """Whether a program installed a tracer provider (the SDK); until then every span is a no-op."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


class _NoSpan:
    """The span of a process without a tracer provider: nothing to start, record or end."""

    __slots__ = ()

    def __enter__(self) -> Span:
        return trace.INVALID_SPAN

    def __exit__(self, *exc_info: object) -> None:
        return None


_NO_SPAN = _NoSpan()


def span(name: str, attributes: Mapping[str, Any] | None = None) -> AbstractContextManager[Span]:
    """A child of the current span for the ``with`` block. An exception marks it failed with its type only, and
    goes on: the message is not recorded (it may quote a key or the query)."""
    if not tracing_installed():  # the API's no-op path costs ~10 us a span on a busy machine; this, a type check
        return _NO_SPAN
    return _recording(name, attributes)


@contextmanager
def _recording(name: str, attributes: Mapping[str, Any] | None) -> Iterator[Span]:
    with _tracer.start_as_current_span(
        name, attributes=_clean(attributes or {}), record_exception=False, set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as exc:
            if current.is_recording():
                current.set_attribute("error.type", type(exc).__name__)
                current.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            raise


def set_attributes(current: Span, attributes: Mapping[str, Any]) -> None:
    """Add attributes known only once the work is done (result counts, tokens), on a span that records."""
    if current.is_recording():
        current.set_attributes(_clean(attributes))


def store_span(operation: str, store: str, attributes: Mapping[str, Any] | None = None) -> AbstractContextManager[Span]:
    """A span around one store call (``heta.store vector.search``): the query engines wrap their reads in it.
    ``store`` is the component key (``stores.vector``); ``attributes`` what a user filters by (collection, top_k)."""
    if not tracing_installed():
        return _NO_SPAN
    return span(f"heta.store {operation}", {"heta.store": store, "heta.store.operation": operation, **(attributes or {})})


def trace_headers() -> dict[str, str]:
    """The W3C ``traceparent`` (and ``tracestate``) of the current span, for an outgoing HTTP request; empty
    when no span records (no SDK installed), so nothing is sent then."""
    if not trace.get_current_span().get_span_context().is_valid:
        return {}
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


@contextmanager
def continued_from(headers: Mapping[str, str] | MutableMapping[str, str]) -> Iterator[None]:
    """Make the trace an incoming request names (its ``traceparent``) the current one for the ``with`` block."""
    token = otel_context.attach(propagate.extract(headers))
    try:
        yield
    finally:
        otel_context.detach(token)
