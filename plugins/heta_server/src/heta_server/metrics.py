"""``GET /metrics``: the server in the Prometheus text format (``prometheus-client``).

Each app has a registry of its own, not the library's global one, so two servers in one process (the tests
start many) count apart. Two kinds of metric:

- counted per request by ``RequestMetrics`` (an ASGI middleware): requests by route and status, errors by
  their code, latency per query mode;
- read at scrape time from what the knowledge bases already keep (``ServedCollector``): model calls, tokens
  and cost (``kb.usage_totals``), and the progress of a running build job.

Labels stay bounded: a route is its template (``/api/v1/kbs/{kb_name}/query``), a knowledge base or a mode
that this server does not serve is ``unknown``, an error code is a class name. A caller sees the series of
the knowledge bases it may use, as with ``GET /api/v1/kbs``. Names: docs/observability.md.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from heta_server.config import DEFAULT_KB
from heta_server.request_log import NOTE_KEY
from heta_server.response_status import ResponseStatus
from heta_server.route_note import UNKNOWN, route_of
from heta_server.tenants import Tenants

#: query latency buckets, in seconds: a cached vector search takes milliseconds, a multi-hop answer seconds
QUERY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
#: an error body is read for its code only when it is this small (ours are; a big one is not an error of ours)
ERROR_BODY_LIMIT = 16_384


class ServerMetrics:
    """The app's registry and the metrics counted per request."""

    def __init__(self, tenants: Tenants):
        self.tenants = tenants
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "heta_http_requests", "HTTP requests answered, by route template, method and status.",
            ["method", "route", "status"], registry=self.registry,
        )
        self.errors = Counter(
            "heta_http_errors", "Error answers by their error code (the JSON body's error.code) and status.",
            ["code", "status"], registry=self.registry,
        )
        self.query_seconds = Histogram(
            "heta_query_duration_seconds", "Time to answer a query request (retrieval, and the answer when asked), by mode.",
            ["kb", "mode"], buckets=QUERY_BUCKETS, registry=self.registry,
        )
        self.registry.register(ServedCollector(tenants))

    def exposition(self, caller: Any) -> bytes:
        """The text a scrape gets: every series but those of knowledge bases the caller may not use."""
        allowed = set(self.tenants.usable(caller)) if caller is not None else set(self.tenants.names)
        return generate_latest(_Only(self.registry, allowed | {UNKNOWN, ""}))

    content_type = CONTENT_TYPE_LATEST


class _Only:
    """A registry view that leaves out the samples whose ``kb`` label names a knowledge base not allowed."""

    def __init__(self, registry: CollectorRegistry, allowed: set[str]):
        self._registry, self._allowed = registry, allowed

    def collect(self) -> Iterator[Metric]:
        for metric in self._registry.collect():
            metric.samples = [s for s in metric.samples if s.labels.get("kb", "") in self._allowed]
            yield metric


class ServedCollector:
    """Model usage and build progress of every knowledge base served, read when scraped."""

    def __init__(self, tenants: Tenants):
        self.tenants = tenants

    def describe(self) -> list[Metric]:
        return []  # the families depend on what is served: collected fresh each time

    def collect(self) -> Iterator[Metric]:
        calls = CounterMetricFamily("heta_model_calls", "Model calls since the server started, by knowledge base, model and kind.",
                                    labels=["kb", "model", "kind"])
        tokens = CounterMetricFamily("heta_model_tokens", "Tokens the model servers reported: direction input (prompt or embedded) "
                                     "or output (completion).", labels=["kb", "model", "direction"])
        texts = CounterMetricFamily("heta_model_items", "Texts embedded, documents reranked and images read.", labels=["kb", "model", "kind"])
        cost = CounterMetricFamily("heta_model_cost", "Cost of the model calls from the recipe's prices (per million tokens).",
                                   labels=["kb", "model"])
        running = GaugeMetricFamily("heta_build_running", "1 while a build or removal job of the knowledge base runs.", labels=["kb", "kind"])
        done = GaugeMetricFamily("heta_build_progress_done", "Items the running job's current stage has done.", labels=["kb", "stage"])
        total = GaugeMetricFamily("heta_build_progress_total", "Items the running job's current stage has in all (when known).",
                                  labels=["kb", "stage"])
        finished = CounterMetricFamily("heta_jobs_finished", "Write jobs finished since the server started, by kind and status.",
                                       labels=["kb", "kind", "status"])
        for tenant in self.tenants:
            name = tenant.name
            for model, usage in tenant.kb.usage_totals["models"].items():
                kind = str(usage.get("kind"))
                calls.add_metric([name, model, kind], usage.get("calls", 0))
                tokens.add_metric([name, model, "input"], usage.get("prompt_tokens", usage.get("tokens", 0)))
                tokens.add_metric([name, model, "output"], usage.get("completion_tokens", 0))
                texts.add_metric([name, model, kind], usage.get("texts", usage.get("documents", usage.get("images", 0))))
                if "cost" in usage:
                    cost.add_metric([name, model], usage["cost"])
            job = tenant.jobs.running()
            for kind in ("build", "remove"):
                running.add_metric([name, kind], 1.0 if job is not None and job.kind == kind else 0.0)
            if job is not None and job.stages:
                stage = job.stages[-1]
                done.add_metric([name, stage.description], stage.done)
                if stage.total is not None:
                    total.add_metric([name, stage.description], stage.total)
            for (kind, status), count in sorted(tenant.jobs.finished_counts.items()):
                finished.add_metric([name, kind, status], count)
        yield from (calls, tokens, texts, cost, running, done, total, finished)


class RequestMetrics:
    """Counts each HTTP request once it is answered (a streamed answer when its stream ends)."""

    def __init__(self, app: Any, *, metrics: ServerMetrics):
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        holder = scope.get(NOTE_KEY)
        if not isinstance(holder, dict):  # the request log (outside) shares its note; without it, one of our own
            holder = {}
            scope = {**scope, NOTE_KEY: holder}
        started = time.perf_counter()
        status = ResponseStatus(send, default=500)  # 500: what the client gets if the app raises before answering
        error_body: list[bytes] = []

        async def sending(message: dict) -> None:
            if message["type"] == "http.response.body" and status.code >= 400 and sum(map(len, error_body)) < ERROR_BODY_LIMIT:
                error_body.append(message.get("body", b""))  # its error code labels the count
            await status(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self._count(scope, status.code, time.perf_counter() - started, holder, b"".join(error_body))

    def _count(self, scope: dict, status: int, seconds: float, holder: dict, body: bytes) -> None:
        route, kb_name = self._route(scope)
        method = scope.get("method", "?")
        self.metrics.requests.labels(method, route, str(status)).inc()
        if status >= 400:
            self.metrics.errors.labels(_error_code(body, status), str(status)).inc()
        elif holder.get("mode") is not None and kb_name is not None:
            tenant = next((t for t in self.metrics.tenants if t.name == kb_name), None)
            mode = str(holder["mode"])
            if tenant is None or mode not in tenant.kb.query_engines.modes:
                mode = UNKNOWN  # a mode the client made up is not a new series
            self.metrics.query_seconds.labels(kb_name if tenant is not None else UNKNOWN, mode).observe(seconds)

    def _route(self, scope: dict) -> tuple[str, str | None]:
        return route_of(scope, self.metrics.tenants.names, DEFAULT_KB)


def _error_code(body: bytes, status: int) -> str:
    try:
        code = json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return f"HTTP{status}"
    return code if isinstance(code, str) and code.isidentifier() and len(code) <= 64 else f"HTTP{status}"
