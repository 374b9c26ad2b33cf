"""``heta`` sends its spans over OTLP when the environment names an endpoint (docs/observability.md).

A program that embeds Heta installs its own OpenTelemetry SDK; the ``heta`` command has no program around
it, so it does it here: when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT``) is set and no
tracer provider is installed yet (``opentelemetry-instrument`` installs one), an SDK provider with a batching
OTLP/HTTP exporter. The exporter reads the standard variables itself (headers, protocol, timeout), and the
SDK flushes what is left when the process exits. Without the ``otlp`` extra it warns once and goes on.
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
#: the service name spans carry unless ``OTEL_SERVICE_NAME`` says another
SERVICE_NAME = "heta"


def export_spans_if_configured() -> bool:
    """Install the OTLP exporter the environment asks for; ``True`` when spans will be sent."""
    if not any(os.environ.get(name) for name in ENDPOINT_VARIABLES) or os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    from opentelemetry import trace

    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return False  # someone installed a provider already (opentelemetry-instrument, a sitecustomize)
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry SDK is not installed: pip install 'heta-core[otlp]' "
                    "to send spans; running without them")
        return False
    provider = TracerProvider(resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", SERVICE_NAME)}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return True
