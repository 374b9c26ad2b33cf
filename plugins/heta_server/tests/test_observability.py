"""/metrics scraped while queries run, per-knowledge-base usage, and traces that continue the caller's traceparent."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing.spans import capture_spans
from heta_server.config import ServerConfig
from prometheus_client.parser import text_string_to_metric_families

QUESTIONS = ["Who discovered penicillin?", "Where do whales live?", "Who created Python?", "What is an antibiotic?"]
MODES = ["vector_search", "full_text_search", "hybrid_search"]


@pytest.fixture
def zoo_kb(tmp_path):
    from heta_plugin_fulltext import IndexFullText

    kb = KnowledgeBase.create(tmp_path / "zoo", Recipe(steps=[ParseDocuments(), SplitDocuments(), IndexFullText()]),
                              registry=PluginRegistry.from_entry_points())
    kb.sync.build([SourceDocument(id="otters", text="Sea otters float on their backs in the cold ocean and hold hands.")])
    kb.close()
    return tmp_path / "zoo"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, sorted labels) -> value, from the Prometheus text."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(scraped: dict, name: str, **labels: str) -> float:
    return scraped.get((name, tuple(sorted(labels.items()))), 0.0)


def total(scraped: dict, name: str, **labels: str) -> float:
    """The sum over the series of ``name`` whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in scraped.items() if n == name and wanted <= set(ls))


def test_metrics_scraped_during_a_load_count_requests_latency_per_mode_errors_and_model_calls(kb_copy, server_factory):
    running = server_factory(kb_copy)
    asks = [(q, m) for q in QUESTIONS for m in MODES] * 2
    scrapes: list[str] = []
    done = threading.Event()

    def scrape_while_loaded() -> None:
        with running.client() as client:
            while not done.is_set():
                reply = client.get("/metrics")
                assert reply.status_code == 200
                assert reply.headers["content-type"].startswith("text/plain")
                scrapes.append(reply.text)
                time.sleep(0.02)

    def ask(item: tuple[str, str]) -> int:
        question, mode = item
        with running.client() as client:
            return client.post("/api/v1/query", json={"text": question, "mode": mode, "top_k": 3}).status_code

    scraper = threading.Thread(target=scrape_while_loaded)
    scraper.start()
    try:
        with ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(ask, asks))
        with running.client() as client:
            unavailable = client.post("/api/v1/query", json={"text": "x", "mode": "no_such_mode"})
            invalid = client.post("/api/v1/query", json={"text": "x", "top_k": 0, "mode": "vector_search"})
            usage = client.get("/api/v1/usage").json()["usage"]
            final = samples(client.get("/metrics").text)
    finally:
        done.set()
        scraper.join()
    assert statuses == [200] * len(asks)
    assert len(scrapes) >= 2
    # every scrape parses, and a counter never goes back
    counts = [total(samples(text), "heta_http_requests_total", route="/api/v1/query") for text in scrapes]
    assert counts == sorted(counts)

    assert value(final, "heta_http_requests_total", method="POST", route="/api/v1/query", status="200") == len(asks)
    for mode in MODES:
        observed = value(final, "heta_query_duration_seconds_count", kb="default", mode=mode)
        assert observed == len(QUESTIONS) * 2, mode
        assert value(final, "heta_query_duration_seconds_bucket", kb="default", mode=mode, le="+Inf") == observed
        assert value(final, "heta_query_duration_seconds_sum", kb="default", mode=mode) > 0
    errors = {status: code for status, code in [(unavailable.status_code, unavailable.json()["error"]["code"]),
                                                (invalid.status_code, invalid.json()["error"]["code"])]}
    for status, code in errors.items():
        assert value(final, "heta_http_errors_total", code=code, status=str(status)) == 1, (code, status)
    # a mode the client made up is no series of its own
    assert not [labels for (name, labels) in final if name.startswith("heta_query_duration") and ("mode", "no_such_mode") in labels]
    # model calls: every vector and hybrid query embeds its text once (the local MiniLM model)
    model = "local/all-MiniLM-L6-v2"
    embedded = value(final, "heta_model_calls_total", kb="default", model=model, kind="embedding")
    assert embedded == usage["models"][model]["calls"] == usage["totals"]["model_calls"]
    assert embedded >= 2 * len(QUESTIONS) * 2  # vector_search and hybrid_search (the warm-up may add one)
    assert value(final, "heta_model_items_total", kb="default", model=model, kind="embedding") == usage["models"][model]["texts"]
    assert value(final, "heta_build_running", kb="default", kind="build") == 0


def test_a_build_job_shows_in_the_metrics_and_its_model_calls_in_the_usage(kb_copy, server_factory):
    running = server_factory(kb_copy)
    with running.client() as client:
        before = client.get("/api/v1/usage").json()["usage"]
        job = client.post("/api/v1/documents", json={"documents": [{"id": "otter", "text": "Sea otters hold hands while they sleep."}]})
        job_id = job.json()["job"]["id"]
        deadline = time.monotonic() + 120
        while (state := client.get(f"/api/v1/jobs/{job_id}").json()["job"])["status"] == "running":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        after = client.get("/api/v1/usage").json()["usage"]
        scraped = samples(client.get("/metrics").text)
    assert state["status"] == "done"
    assert state["result"]["usage"]["totals"]["embedded_texts"] >= 1  # the job's build report carries its usage
    model = "local/all-MiniLM-L6-v2"
    grew = after["models"][model]["texts"] - before.get("models", {}).get(model, {}).get("texts", 0)
    assert grew == state["result"]["usage"]["models"][model]["texts"]
    assert value(scraped, "heta_jobs_finished_total", kb="default", kind="build", status="done") == 1
    assert value(scraped, "heta_build_running", kb="default", kind="build") == 0


def test_each_caller_scrapes_only_its_knowledge_bases(kb_copy, zoo_kb, server_factory, tokens):
    table, headers = tokens({
        "keeper": {"principal": "keeper", "kbs": ["zoo"], "rights": ["read"]},
        "both": {"principal": "auditor", "kbs": ["*"], "rights": ["read"]},
    })
    running = server_factory(kb_copy, ServerConfig(tokens=table), kbs={"zoo": zoo_kb})
    with running.client() as client:
        assert client.get("/metrics").status_code == 401  # behind the token, like the API
        client.post("/api/v1/kbs/zoo/query", json={"text": "otters", "mode": "full_text_search"}, headers=headers["keeper"])
        client.post("/api/v1/query", json={"text": "penicillin", "mode": "vector_search"}, headers=headers["both"])
        keeper = client.get("/metrics", headers=headers["keeper"]).text
        both = client.get("/metrics", headers=headers["both"]).text
        assert client.get("/api/v1/kbs/default/usage", headers=headers["keeper"]).status_code == 404
    assert 'kb="zoo"' in keeper and 'kb="default"' not in keeper
    assert 'kb="zoo"' in both and 'kb="default"' in both
    assert value(samples(both), "heta_http_errors_total", code="Unauthorized", status="401") == 1


def test_a_request_with_a_traceparent_continues_the_callers_trace(kb_copy, server_factory):
    running = server_factory(kb_copy)
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with capture_spans() as capture, running.client() as client:
        reply = client.post("/api/v1/query", json={"text": "Who discovered penicillin?", "mode": "hybrid_search", "top_k": 2},
                            headers={"traceparent": f"00-{trace_id}-{parent_id}-01"})
        assert reply.status_code == 200
        deadline = time.monotonic() + 10
        while not capture.named("POST /api/v1/query") and time.monotonic() < deadline:
            time.sleep(0.01)  # the server span ends just after the response is sent
    server = capture.one("POST /api/v1/query")
    assert format(server.context.trace_id, "032x") == trace_id
    assert format(server.parent.span_id, "016x") == parent_id and server.parent.is_remote
    assert server.attributes["http.route"] == "/api/v1/query"
    assert server.attributes["http.response.status_code"] == 200
    assert server.attributes["heta.kb"] == "default" and server.attributes["heta.query.mode"] == "hybrid_search"
    query = capture.one("heta.query")
    assert query.parent.span_id == server.context.span_id
    assert {s.name for s in capture.descendants(query)} >= {"heta.query.mode hybrid_search", "heta.query.mode vector_search"}
    # the query's text is in no span
    assert not [v for v in capture.attribute_values() if "penicillin" in str(v)]
