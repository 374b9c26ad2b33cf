"""Adding, uploading and removing documents over HTTP: background jobs, one write at a time, the KB writer lock."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from heta_server.config import ServerConfig


def wait_for(client, job: dict, timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        current = client.get(f"/api/v1/jobs/{job['id']}").json()["job"]
        if current["status"] != "running":
            return current
        assert time.monotonic() < deadline, current
        time.sleep(0.1)


@pytest.fixture
def writable(kb_copy, server_factory):
    return server_factory(kb_copy, ServerConfig(max_upload_bytes=200_000))


def test_add_text_documents_with_importance_and_tags(writable):
    body = {"documents": [{"id": "kite", "text": "The red kite is a bird of prey that nests in tall oak trees.",
                           "importance": 8, "tags": ["birds"], "metadata": {"author": "Ada"}}]}
    with writable.client() as client:
        reply = client.post("/api/v1/documents", json=body)
        assert reply.status_code == 202
        job = wait_for(client, reply.json()["job"])
        assert job["status"] == "done", job
        assert job["result"]["document_count"] == 1
        assert job["progress"], "each step reports progress"
        record = client.get("/api/v1/documents/kite").json()
        assert record["metadata"] == {"importance": 8, "tags": ["birds"], "author": "Ada"} and record["state"] == "built"
        found = client.post("/api/v1/search", json={"query": "red kite bird of prey", "top_k": 1, "tags": ["birds"]}).json()
    assert found["results"][0]["memory"]["document_id"] == "kite"
    assert found["results"][0]["importance_score_normalized"] == 0.8


def test_upload_a_file_with_metadata_then_remove_it(writable):
    with writable.client() as client:
        reply = client.post(
            "/api/v1/documents/upload",
            files={"file": ("otters.md", b"# Otters\n\nSea otters hold hands while they sleep.", "text/markdown")},
            data={"importance": "3", "tags": "animals, sea", "metadata": '{"year": 2024}'},
        )
        assert reply.status_code == 202, reply.text
        assert wait_for(client, reply.json()["job"])["status"] == "done"
        record = client.get("/api/v1/documents/otters.md").json()
        assert record["metadata"] == {"year": 2024, "importance": 3.0, "tags": ["animals", "sea"]}
        hits = client.post("/api/v1/query", json={"text": "otters hold hands", "mode": "full_text_search"}).json()["results"]
        assert hits[0]["metadata"]["document_id"] == "otters.md"

        removal = client.delete("/api/v1/documents/otters.md")
        assert removal.status_code == 202
        assert wait_for(client, removal.json()["job"])["result"] == {"removed": ["otters.md"]}
        assert client.get("/api/v1/documents/otters.md").status_code == 404
        after = client.post("/api/v1/query", json={"text": "otters hold hands", "mode": "full_text_search"}).json()["results"]
        assert all(r["metadata"]["document_id"] != "otters.md" for r in after)
        unknown = client.delete("/api/v1/documents/never-was")
    # an unknown document is the documented 404, answered at once: no job is started
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "UnknownDocument") and "job" not in unknown.json()


def test_bad_document_ids_are_422_before_any_job_and_an_upload_keeps_its_base_name(writable):
    with writable.client() as client:
        refused = [
            client.post("/api/v1/documents", json={"documents": [{"id": bad, "text": "x"}]})
            for bad in ("a/../b", "nul\u0000id", "x" * 4097, "   ")
        ] + [client.post("/api/v1/documents/upload", files={"file": ("a.txt", b"a", "text/plain")}, data={"id": "../up"})]
        # refused at once, before any job exists (no "job" in the answer)
        assert [(r.status_code, r.json()["error"]["code"], "job" in r.json()) for r in refused] == [(422, "InvalidDocumentIdError", False)] * 5

        reply = client.post("/api/v1/documents/upload", files={"file": ("/etc/passwd", b"root is the first user", "text/plain")})
        assert reply.status_code == 202, reply.text
        assert wait_for(client, reply.json()["job"])["status"] == "done"
        record = client.get("/api/v1/documents/passwd").json()
    assert record["name"] == "passwd" and "/etc" not in record["source"]


def test_an_oversize_upload_and_bad_metadata_are_refused(writable):
    with writable.client() as client:
        big = client.post("/api/v1/documents/upload", files={"file": ("big.txt", b"x" * 300_000, "text/plain")})
        bad = client.post("/api/v1/documents", json={"documents": [{"text": "x", "importance": 11}]})
        bad_tags = client.post("/api/v1/documents/upload", files={"file": ("a.txt", b"a", "text/plain")}, data={"metadata": "[1]"})
        empty = client.post("/api/v1/documents", json={"documents": []})
    assert (big.status_code, big.json()["error"]["code"]) == (413, "PayloadTooLarge")
    assert (bad.status_code, bad.json()["error"]["code"]) == (422, "InvalidRequest")
    assert "importance" in bad.json()["error"]["message"]
    assert (bad_tags.status_code, bad_tags.json()["error"]["code"]) == (422, "InvalidRequest")
    assert empty.status_code == 422


def test_a_second_write_while_a_build_runs_is_refused_and_queries_keep_working(writable):
    documents = [{"id": f"note-{i}", "text": f"Field note {i}: the heron waited by the pond for fish number {i}."} for i in range(40)]
    with writable.client() as client:
        first = client.post("/api/v1/documents", json={"documents": documents})
        assert first.status_code == 202
        second = client.post("/api/v1/documents", json={"documents": [{"id": "late", "text": "Too late."}]})
        removal = client.delete("/api/v1/documents/penicillin")
        during = client.post("/api/v1/query", json={"text": "penicillin", "mode": "full_text_search"})
        job = wait_for(client, first.json()["job"])
        after = client.post("/api/v1/documents", json={"documents": [{"id": "late", "text": "Now in time."}]})
        assert wait_for(client, after.json()["job"])["status"] == "done"
        ids = {d["id"] for d in client.get("/api/v1/documents").json()["documents"]}
    for refused in (second, removal):
        assert refused.status_code == 409
        error = refused.json()["error"]
        assert error["code"] == "WriteInProgress" and error["details"]["job_id"] == first.json()["job"]["id"]
    assert during.status_code == 200 and during.json()["results"]
    assert job["status"] == "done"
    assert {f"note-{i}" for i in range(40)} | {"late", "penicillin"} <= ids


def test_a_write_while_another_process_holds_the_writer_lock_is_a_409(writable):
    # a real second process holds the lock, as a `heta build` would
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(writable.kb.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with writable.client() as client:
            reply = client.post("/api/v1/documents", json={"documents": [{"id": "x", "text": "x"}]})
    finally:
        holder.communicate("release\n", timeout=30)
    assert reply.status_code == 409
    assert reply.json()["error"]["code"] == "KnowledgeBaseLockedError"
    with writable.client() as client:
        later = client.post("/api/v1/documents", json={"documents": [{"id": "x", "text": "x"}]})
        assert wait_for(client, later.json()["job"])["status"] == "done"


HOLD_LOCK = """
import sys
from heta_framework.kb.lock import WriterLock
lock = WriterLock(sys.argv[1], "built").acquire()
print("held", flush=True)
sys.stdin.readline()
lock.release()
"""


def _serve(kb_path, port: int) -> subprocess.Popen:
    import httpx

    process = subprocess.Popen([sys.executable, "-m", "heta_framework.cli.main", "--kb", str(kb_path), "serve", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, "heta serve did not start"
        time.sleep(0.1)


@pytest.mark.slow
def test_jobs_outlive_a_killed_server(kb_copy):
    import socket

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    server = _serve(kb_copy, port)
    try:
        done = httpx.post(f"{url}/api/v1/documents", json={"documents": [{"id": "kite", "text": "The red kite nests in oak trees."}]}).json()["job"]
        while httpx.get(f"{url}/api/v1/jobs/{done['id']}").json()["job"]["status"] == "running":
            time.sleep(0.1)
        many = [{"id": f"note-{n}", "text": f"Note {n}: " + "whales sing long songs across the ocean. " * 40} for n in range(40)]
        killed = httpx.post(f"{url}/api/v1/documents", json={"documents": many}).json()["job"]
        server.kill()  # SIGKILL while the build runs: no shutdown handler, nothing flushed
        server.wait()
        assert killed["status"] == "running"
        server = _serve(kb_copy, port)
        finished = httpx.get(f"{url}/api/v1/jobs/{done['id']}").json()["job"]
        interrupted = httpx.get(f"{url}/api/v1/jobs/{killed['id']}").json()["job"]
        unknown = httpx.get(f"{url}/api/v1/jobs/no-such-job")
    finally:
        server.kill()
        server.wait()
    assert finished["status"] == "done" and finished["result"]["document_count"] == 1
    assert interrupted["status"] == "interrupted" and interrupted["error"]["code"] == "ServerStopped"
    states = interrupted["document_states"]
    assert set(states) == {d["id"] for d in many}
    assert set(states.values()) <= {"pending", "absent", "built"}  # what the knowledge base really holds for each
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "UnknownJob")
