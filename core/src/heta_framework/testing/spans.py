"""Read the spans Heta makes, in a test: ``capture = capture_spans()`` then ``capture.named("heta.query")``.

OpenTelemetry lets a process set its tracer provider once, so the first call installs an SDK provider with
an in-memory exporter for the whole process, and each call clears what earlier tests left. The provider
records only while a capture is open (``with capture_spans() as capture:``): after it, spans are dropped
at once, so the other tests of a pytest worker pay nothing and keep nothing. Needs ``opentelemetry-sdk``
(in heta-core's ``test`` extra).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

_state: dict[str, Any] = {}


def _install() -> tuple[Any, Any]:
    """The process's provider, made once: an in-memory exporter and the switch its sampler reads."""
    if "exporter" not in _state:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

        switch = {"on": False}

        class WhileCapturing(Sampler):
            def should_sample(self, parent_context: Any, trace_id: int, name: str, kind: Any = None, attributes: Any = None,
                              links: Any = None, trace_state: Any = None) -> SamplingResult:
                if not switch["on"]:
                    return SamplingResult(Decision.DROP)
                # the sampler hands the span its start attributes: pass them on
                return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

            def get_description(self) -> str:
                return "heta test capture"

        exporter = InMemorySpanExporter()
        provider = TracerProvider(sampler=WhileCapturing())
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        if trace.get_tracer_provider() is not provider:
            raise RuntimeError("another tracer provider was installed first: capture_spans() needs to install its own")
        _state.update(exporter=exporter, switch=switch)
    return _state["exporter"], _state["switch"]


class SpanCapture:
    """The finished spans since the capture opened, with helpers to walk their tree."""

    def __init__(self, exporter: Any, switch: dict[str, bool]):
        self._exporter = exporter
        self._switch = switch

    def __enter__(self) -> SpanCapture:
        self._exporter.clear()
        self._switch["on"] = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._switch["on"] = False

    @property
    def spans(self) -> list[Any]:
        return list(self._exporter.get_finished_spans())

    def named(self, name: str) -> list[Any]:
        return [span for span in self.spans if span.name == name]

    def one(self, name: str) -> Any:
        found = self.named(name)
        assert len(found) == 1, f"expected one span {name!r}, found {len(found)}: {sorted(s.name for s in self.spans)}"
        return found[0]

    def children(self, parent: Any) -> list[Any]:
        """The spans whose parent is ``parent``, in the order they started."""
        span_id = parent.context.span_id
        return sorted((s for s in self.spans if s.parent is not None and s.parent.span_id == span_id), key=lambda s: s.start_time)

    def descendants(self, parent: Any) -> list[Any]:
        found: list[Any] = []
        for child in self.children(parent):
            found += [child, *self.descendants(child)]
        return found

    def tree(self, root: Any) -> tuple[str, tuple[Any, ...]]:
        """``(name, (child trees...))``: the shape of the trace under ``root``, children in start order."""
        return root.name, tuple(self.tree(child) for child in self.children(root))

    def attribute_values(self) -> Iterator[Any]:
        """Every attribute value of every span and span event (what a test checks for leaks)."""
        for span in self.spans:
            yield from (span.attributes or {}).values()
            for event in span.events:
                yield from (event.attributes or {}).values()
            if span.status.description:
                yield span.status.description


def capture_spans() -> SpanCapture:
    """A capture to open with ``with``; spans recorded inside it are kept until the next capture opens."""
    exporter, switch = _install()
    return SpanCapture(exporter, switch)


def names(spans: Sequence[Any]) -> list[str]:
    return [span.name for span in spans]
