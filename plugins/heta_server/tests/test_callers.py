"""Every request runs as its caller: tokens from a hashed tokens file, principals on queries, readable documents only,
the write right, the access endpoint and the audit log (a real uvicorn, a real httpx client)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time

import pytest
from heta_framework.kb import KnowledgeBase
from heta_server.app import create_app
from heta_server.config import ServerConfig, ServerConfigError
from heta_server.tokens import TokensFileError, parse_tokens, read_tokens, token_hash

#: who is who in these tests: a public reader, a reader in the marine group, a writer in it, a writer outside it
PEOPLE = {
    "rita": {"principal": "rita", "kbs": ["*"], "rights": ["read"]},
    "mo": {"principal": "mo", "groups": ["group:marine"], "kbs": ["default"], "rights": ["read"]},
    "wendy": {"principal": "wendy", "groups": ["group:marine"], "kbs": ["default"], "rights": ["read", "write"]},
    "sam": {"principal": "sam", "kbs": ["*"], "rights": ["write"]},
}
#: words of the whales document only (the question itself names none of them)
QUESTION = "marine mammals breathing air in every ocean"


def wait_for(client, job: dict, headers: dict, prefix: str = "/api/v1", timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        current = client.get(f"{prefix}/jobs/{job['id']}", headers=headers).json()["job"]
        if current["status"] != "running":
            return current
        assert time.monotonic() < deadline, current
        time.sleep(0.1)


@pytest.fixture
def whales_for_marine(kb_copy):
    """The test knowledge base with the whales document readable by group:marine only."""
    with KnowledgeBase.load(kb_copy) as kb:
        kb.set_access(["whales"], ["group:marine"])
    return kb_copy


@pytest.fixture
def people(whales_for_marine, server_factory, tokens, tmp_path):
    table, headers = tokens(PEOPLE)
    running = server_factory(whales_for_marine, ServerConfig(tokens=table, audit_log=tmp_path / "audit.jsonl", audit_reads=True))
    return running, headers


def audit_records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_missing_wrong_or_unhashed_token_is_401(people):
    running, headers = people
    table_hash = token_hash(headers["rita"]["Authorization"].removeprefix("Bearer "))
    refused = [{}, {"Authorization": "Bearer tok-nobody-0123456789abcdef0123"}, {"Authorization": f"Bearer {table_hash}"},
               {"Authorization": headers["rita"]["Authorization"].replace("Bearer", "Basic")}]
    with running.client() as client:
        for header in refused:
            for method, path in [("GET", "/api/v1/modes"), ("POST", "/api/v1/kbs/default/query"), ("GET", "/api/v1/kbs"),
                                 ("GET", "/api/v1/documents")]:
                reply = client.request(method, path, json={"text": "x"}, headers=header)
                assert (reply.status_code, reply.json()["error"]["code"]) == (401, "Unauthorized"), (header, path)
        assert client.get("/api/v1/modes", headers=headers["rita"]).status_code == 200


def test_a_token_is_hashed_then_compared_with_every_entry_by_compare_digest(people, monkeypatch):
    running, headers = people
    stored = {token_hash(h["Authorization"].removeprefix("Bearer ")).encode() for h in headers.values()}
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    with running.client() as client:
        for name in ("rita", "sam"):  # the first entry and the last: the same work either way
            calls.clear()
            token = headers[name]["Authorization"].removeprefix("Bearer ")
            assert client.get("/api/v1/modes", headers=headers[name]).status_code == 200
            assert len(calls) == len(PEOPLE), "every entry is compared, whichever matches"
            assert {a for a, _ in calls} == {hashlib.sha256(token.encode()).hexdigest().encode()}  # the hash, not the token
            assert {b for _, b in calls} == stored
        calls.clear()
        assert client.get("/api/v1/modes", headers={"Authorization": "Bearer not-a-known-token-0123456789"}).status_code == 401
    assert len(calls) == len(PEOPLE) and not any(b"not-a-known-token" in a for a, _ in calls)


def test_the_tokens_file_is_toml_or_json_and_its_mistakes_are_named(tmp_path):
    digest = token_hash("a-token-of-thirty-two-characters!")
    entry = {"sha256": digest, "principal": "alice", "groups": ["group:hr"], "kbs": ["default"], "rights": ["write"]}
    (tmp_path / "tokens.json").write_text(json.dumps({"tokens": [entry]}))
    (tmp_path / "tokens.toml").write_text(
        f'[[tokens]]\nsha256 = "{digest}"\nprincipal = "alice"\ngroups = ["group:hr"]\nkbs = ["default"]\nrights = ["write"]\n'
    )
    for name in ("tokens.json", "tokens.toml"):
        caller = read_tokens(tmp_path / name).authenticate(b"a-token-of-thirty-two-characters!")
        assert caller is not None and caller.actor == "alice" and caller.principals == ("alice", "group:hr")
        assert caller.may_write and caller.may_use("default") and not caller.may_use("other")
    assert read_tokens(tmp_path / "tokens.toml").authenticate(digest.encode()) is None  # the stored hash is no token
    mistakes = {
        "never the token": ({**entry, "token": "a-token"}, "store the token's SHA-256"),
        "not a hash": ({**entry, "sha256": "a-token-of-thirty-two-characters!"}, "64 hexadecimal digits"),
        "hash of nothing": ({**entry, "sha256": hashlib.sha256(b"").hexdigest()}, "empty token"),
        "unknown right": ({**entry, "rights": ["admin"]}, "rights must be"),
        "no kbs": ({**entry, "kbs": []}, "kbs must be"),
        "bad principal": ({**entry, "principal": " alice"}, "tokens[0].principal"),
        "bad group": ({**entry, "groups": ["ok", "\u0000"]}, "control characters"),
        "missing rights": ({k: v for k, v in entry.items() if k != "rights"}, "misses rights"),
    }
    for bad, message in mistakes.values():
        with pytest.raises(TokensFileError, match=re.escape(message)):
            parse_tokens({"tokens": [bad]})
    with pytest.raises(TokensFileError, match="same sha256 as tokens\\[0\\]"):
        parse_tokens({"tokens": [entry, {**entry, "principal": "bob"}]})
    with pytest.raises(TokensFileError, match="lists no tokens"):
        parse_tokens({"tokens": []})
    (tmp_path / "broken.toml").write_text("[[tokens]\n")
    with pytest.raises(TokensFileError, match="not valid TOML"):
        read_tokens(tmp_path / "broken.toml")
    table = read_tokens(tmp_path / "tokens.toml")
    with pytest.raises(ServerConfigError, match="give one"):
        ServerConfig(token="x" * 32, tokens=table).check()
    ServerConfig(host="0.0.0.0", tokens=table).check()  # a tokens file is a token: the server may be exposed


def test_a_tokens_file_naming_a_knowledge_base_not_served_is_refused(built_kb):
    table = parse_tokens({"tokens": [{"sha256": token_hash("t" * 32), "principal": "a", "kbs": ["hr"], "rights": ["read"]}]})
    with KnowledgeBase.load(built_kb) as kb, pytest.raises(ServerConfigError, match="'hr' this server does not serve"):
        create_app(kb, ServerConfig(tokens=table), warm=False)


WRITES = [
    ("POST", "/documents", {"json": {"documents": [{"id": "new", "text": "A new note."}]}}),
    ("POST", "/documents/upload", {"files": {"file": ("new.txt", b"A new note.", "text/plain")}}),
    ("PUT", "/documents/penicillin/access", {"json": {"access": ["rita"]}}),
    ("DELETE", "/documents/penicillin", {}),
    ("POST", "/documents/remove", {"json": {"ids": ["penicillin"]}}),
    ("GET", "/jobs/0123456789abcdef", {}),
]


def test_a_read_only_token_gets_403_on_every_write_route(people):
    running, headers = people
    with running.client() as client:
        before = client.get("/api/v1/documents", headers=headers["rita"]).json()
        for prefix in ("/api/v1", "/api/v1/kbs/default"):
            for method, path, body in WRITES:
                reply = client.request(method, prefix + path, headers=headers["rita"], **body)
                assert reply.status_code == 403, (method, prefix + path, reply.text)
                error = reply.json()["error"]
                assert error["code"] == "Forbidden" and "write right" in error["message"]
        assert client.get("/api/v1/documents", headers=headers["rita"]).json() == before  # nothing changed
        # the same route answers a writer: the 403 is the right, not the route
        allowed = client.put("/api/v1/documents/penicillin/access", json={"access": ["rita"]}, headers=headers["sam"])
    assert allowed.status_code == 200 and allowed.json()["access"] == ["rita"]


def test_a_restricted_document_is_invisible_to_a_public_token_in_every_mode(people, whales_for_marine):
    running, headers = people
    with KnowledgeBase.load(whales_for_marine) as kb:
        modes = kb.available_queries
    assert {"vector_search", "full_text_search", "heta_graph_search", "hybrid_search", "memory_search"} <= set(modes)
    with running.client() as client:
        for mode in modes:
            body = {"text": QUESTION, "mode": mode, "top_k": 5, "options": {"update_access": False} if mode == "memory_search" else {}}
            public = client.post("/api/v1/query", json=body, headers=headers["rita"])
            marine = client.post("/api/v1/query", json=body, headers=headers["mo"])
            assert public.status_code == 200 and marine.status_code == 200, (mode, public.text, marine.text)
            assert "whale" not in public.text.lower(), mode  # no result, evidence, related entry or answer of it
            assert "whale" in marine.text.lower(), mode
        public = client.post("/api/v1/search", json={"query": QUESTION, "update_access": False}, headers=headers["rita"])
        marine = client.post("/api/v1/search", json={"query": QUESTION, "update_access": False}, headers=headers["mo"])
        assert "whale" not in public.text.lower() and "whales" in {r["memory"]["document_id"] for r in marine.json()["results"]}

        listed = {name: {d["id"] for d in client.get("/api/v1/documents", headers=headers[name]).json()["documents"]}
                  for name in ("rita", "mo")}
        assert listed == {"rita": {"penicillin", "fleming", "python"}, "mo": {"penicillin", "fleming", "python", "whales"}}
        hidden = client.get("/api/v1/documents/whales", headers=headers["rita"])
        unknown = client.get("/api/v1/documents/walrus", headers=headers["rita"])
        shown = client.get("/api/v1/documents/whales", headers=headers["mo"]).json()
        # a writer outside the group: the document does not exist for it either, and its id is not its to take
        sam = headers["sam"]
        removal = client.delete("/api/v1/documents/whales", headers=sam)
        bulk = client.post("/api/v1/documents/remove", json={"ids": ["whales"]}, headers=sam)
        change = client.put("/api/v1/documents/whales/access", json={"access": ["public"]}, headers=sam)
        overwrite = client.post("/api/v1/documents", json={"documents": [{"id": "whales", "text": "Mine now."}]}, headers=sam)
        still = client.get("/api/v1/documents/whales", headers=headers["mo"]).json()
    assert (hidden.status_code, unknown.status_code) == (404, 404)
    assert hidden.json()["error"]["message"].replace("whales", "ID") == unknown.json()["error"]["message"].replace("walrus", "ID")
    assert hidden.json()["error"]["code"] == unknown.json()["error"]["code"] == "UnknownDocument"
    assert shown["access"] == ["group:marine"] and shown["readers"] == ["group:marine"]
    for reply in (removal, bulk, change):
        assert (reply.status_code, reply.json()["error"]["code"]) == (404, "UnknownDocument"), reply.text
    assert (overwrite.status_code, overwrite.json()["error"]["code"]) == (403, "Forbidden")
    assert still == shown  # untouched


def test_without_tokens_a_loopback_caller_is_anonymous_and_may_write(whales_for_marine, server_factory):
    running = server_factory(whales_for_marine)
    with running.client() as client:
        found = client.post("/api/v1/query", json={"text": "whales krill blowhole", "mode": "full_text_search"}).json()
        listed = {d["id"] for d in client.get("/api/v1/documents").json()["documents"]}
        hidden = client.get("/api/v1/documents/whales")
        change = client.put("/api/v1/documents/python/access", json={"access": ["group:dev"]})
        after = {d["id"] for d in client.get("/api/v1/documents").json()["documents"]}
    assert found["results"] == [] and "whales" not in listed and hidden.status_code == 404
    assert change.status_code == 200 and change.json()["access"] == ["group:dev"]
    assert after == listed - {"python"}  # the anonymous caller wrote it out of its own sight


def test_writes_take_access_lists_and_the_audit_log_names_each_caller(people, tmp_path):
    running, headers = people
    wendy, rita = headers["wendy"], headers["rita"]
    with running.client() as client:
        added = client.post("/api/v1/documents", headers=wendy, json={"documents": [
            {"id": "reef", "text": "The coral reef shelters clownfish.", "access": ["group:marine"]},
            {"id": "kelp", "text": "Kelp forests grow fast along cold coasts."},
        ]})
        assert added.status_code == 202, added.text
        assert wait_for(client, added.json()["job"], wendy)["status"] == "done"
        uploaded = client.post("/api/v1/documents/upload", headers=wendy, files={"file": ("eels.txt", b"Eels cross the ocean to spawn.")},
                               data={"access": ["group:marine", "rita"]})
        assert uploaded.status_code == 202, uploaded.text
        assert wait_for(client, uploaded.json()["job"], wendy)["status"] == "done"
        reef = client.get("/api/v1/documents/reef", headers=wendy).json()
        kelp = client.get("/api/v1/documents/kelp", headers=wendy).json()
        eels = client.get("/api/v1/documents/eels.txt", headers=rita).json()
        assert (reef["access"], kelp["access"], kelp["readers"], eels["access"]) == (["group:marine"], None, ["public"], ["group:marine", "rita"])
        assert client.get("/api/v1/documents/reef", headers=rita).status_code == 404

        opened = client.put("/api/v1/documents/reef/access", json={"access": ["public"]}, headers=wendy)
        assert opened.status_code == 200 and opened.json()["readers"] == ["public"]
        seen = client.post("/api/v1/query", json={"text": "coral reef clownfish", "mode": "full_text_search"}, headers=rita).json()
        assert [r["metadata"]["document_id"] for r in seen["results"]] == ["reef"]
        closed = client.put("/api/v1/documents/reef/access", json={"access": None}, headers=wendy)  # the recipe's default: public
        assert closed.status_code == 200 and closed.json()["access"] is None and closed.json()["readers"] == ["public"]

        invalid = [
            client.put("/api/v1/documents/kelp/access", json={"access": [" padded"]}, headers=wendy),
            client.put("/api/v1/documents/kelp/access", json={"access": "group:marine"}, headers=wendy),
            client.put("/api/v1/documents/kelp/access", json={}, headers=wendy),
            client.post("/api/v1/documents", json={"documents": [{"text": "x", "access": ["bad\u0007"]}]}, headers=wendy),
            client.post("/api/v1/documents/upload", files={"file": ("x.txt", b"x")}, data={"access": ["x" * 300]}, headers=wendy),
        ]
        removal = client.delete("/api/v1/documents/kelp", headers=wendy)
        assert wait_for(client, removal.json()["job"], wendy)["status"] == "done"
    codes = [(r.status_code, r.json()["error"]["code"]) for r in invalid]
    assert codes == [(422, "InvalidAccessError"), (422, "InvalidRequest"), (422, "InvalidRequest"),
                     (422, "InvalidAccessError"), (422, "InvalidAccessError")]
    assert "job" not in str([r.json() for r in invalid])  # refused before any job

    records = audit_records(tmp_path / "audit.jsonl")
    writes = [(r["operation"], r["actor"]) for r in records if r["operation"] in ("build", "set_access", "remove")]
    assert writes == [("build", "wendy"), ("build", "wendy"), ("set_access", "wendy"), ("set_access", "wendy"), ("remove", "wendy")]
    set_access = [r for r in records if r["operation"] == "set_access"]
    assert [(r["documents"], r["access"]) for r in set_access] == [(["reef"], ["public"]), (["reef"], None)]
    reads = [r for r in records if r["operation"] == "query"]
    assert [(r["actor"], r["mode"], r["documents"]) for r in reads] == [("rita", "full_text_search", ["reef"])]
    assert {r["actor"] for r in records if r["operation"] == "read_document"} == {"wendy", "rita"}
    assert all(r["kb"] == str(running.kb.path) for r in records)
    assert "clownfish" not in (tmp_path / "audit.jsonl").read_text()  # ids and principals, never document or query text
