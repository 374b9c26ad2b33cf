"""``heta`` sends its spans to the OTLP endpoint the environment names (the ``otlp`` extra, docs/observability.md).

A real ``heta query`` process, with ``OTEL_EXPORTER_OTLP_ENDPOINT`` pointing at a scripted collector on
127.0.0.1: the SDK's OTLP/HTTP exporter posts the spans there, protobuf-encoded, when the process exits.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from heta_framework.testing.http import Reply, ScriptedServer
from heta_framework.testing.sample_kb import build_sample_kb

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otlp extra (opentelemetry-exporter-otlp-proto-http)")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402

QUESTION = "who discovered penicillin"


def heta(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "heta_framework.cli.main", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_heta_query_exports_its_spans_over_otlp_http(tmp_path):
    kb = build_sample_kb(tmp_path / "kb")
    with ScriptedServer(prefix="") as collector:
        collector.respond("/v1/traces", lambda request: Reply(status=200, body=b""))
        done = heta("--kb", str(kb), "query", QUESTION, "--mode", "sql_text_search",
                    env={"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, "OTEL_SERVICE_NAME": "heta-test", "HETA_TRACE_QUERY_TEXT": ""})
        assert done.returncode == 0, done.stderr
        posts = collector.requests_to("/v1/traces")
    assert posts, "no spans reached the collector"
    assert posts[0].header("content-type") == "application/x-protobuf"
    spans, services = [], set()
    for post in posts:
        exported = ExportTraceServiceRequest.FromString(post.body)
        for resource_spans in exported.resource_spans:
            services |= {a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"}
            spans += [span for scope in resource_spans.scope_spans for span in scope.spans]
    assert services == {"heta-test"}
    by_name = {span.name: span for span in spans}
    assert {"heta.query", "heta.query.mode sql_text_search", "heta.store sql.search_text"} <= set(by_name)
    assert by_name["heta.query.mode sql_text_search"].parent_span_id == by_name["heta.query"].span_id
    assert b"penicillin" not in b"".join(post.body for post in posts)  # the query's text stays home


def test_without_an_endpoint_nothing_is_installed_and_nothing_sent(tmp_path):
    from heta_framework.cli.telemetry import export_spans_if_configured

    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        assert not os.environ.get(name)
    assert export_spans_if_configured() is False
