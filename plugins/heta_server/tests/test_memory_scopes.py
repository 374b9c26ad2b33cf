"""memory_search per caller: ``related`` rests only on what the caller may read, and one caller's reads never change
another's recency (the access log is kept per principal set)."""

from __future__ import annotations

import sqlite3
import time

import attrs
import pytest
from heta_framework.kb import KnowledgeBase
from heta_server.config import ServerConfig
from heta_server.memory_access import ACCESS_FILE, ANONYMOUS, AccessLog, scope_key
from heta_server.memory_related import related_chunks

PENICILLIN = {"query": "Who discovered penicillin?", "top_k": 1, "weight_recency": 0, "weight_importance": 0, "weight_relevance": 1,
              "update_access": False}


@pytest.fixture
def fleming_for_biologists(kb_copy):
    with KnowledgeBase.load(kb_copy) as kb:
        kb.set_access(["fleming"], ["group:bio"])
    return kb_copy


def test_related_names_only_documents_the_caller_may_read(fleming_for_biologists, server_factory, tokens):
    table, headers = tokens({"rita": {"principal": "rita", "kbs": ["*"], "rights": ["read"]},
                             "bea": {"principal": "bea", "groups": ["group:bio"], "kbs": ["*"], "rights": ["read"]}})
    running = server_factory(fleming_for_biologists, ServerConfig(tokens=table))
    with running.client() as client:
        search = {name: client.post("/api/v1/search", json=PENICILLIN, headers=h) for name, h in headers.items()}
        query = {name: client.post("/api/v1/query", json={"text": PENICILLIN["query"], "mode": "memory_search", "top_k": 1,
                                                           "options": {k: v for k, v in PENICILLIN.items() if k not in ("query", "top_k")}},
                                   headers=h) for name, h in headers.items()}
    for name in ("rita", "bea"):
        assert [r["memory"]["document_id"] for r in search[name].json()["results"]] == ["penicillin"]
    # the biologist is shown Fleming's chunk through the entities it shares with penicillin's; the public reader
    # is shown nothing of it: no id, no text, no link count or relation that rests on it
    assert "fleming-00000" in [r["id"] for r in search["bea"].json()["related"]]
    assert "fleming-00000" in [r["id"] for r in query["bea"].json()["metadata"]["related"]]
    for reply in (search["rita"], query["rita"]):
        assert reply.status_code == 200
        related = reply.json()["related"] if "related" in reply.json() else reply.json()["metadata"]["related"]
        assert all(r["document_id"] != "fleming" for r in related)
        assert "Scottish" not in reply.text and "St Mary" not in reply.text


@attrs.frozen
class Relation:
    id: str
    source_id: str
    target_id: str


@attrs.frozen
class Chunk:
    document_id: str
    text: str = "text"
    metadata: dict = attrs.field(factory=dict)


class TinyGraph:
    """Entity A is in the result chunk r; the relation A-B only hidden document H supports; A-C is supported by W."""

    evidence_rows = {
        ("entity", "A"): [("r", "R", "")],
        ("entity", "B"): [("v", "V", "")],
        ("entity", "C"): [("x", "X", "")],
        ("relation", "A-B"): [("h", "H", "")],
        ("relation", "A-C"): [("w", "W", "")],
    }
    relations = [Relation("A-B", "A", "B"), Relation("A-C", "A", "C")]

    def facts_of_documents(self, document_ids):
        entities = {fact for (kind, fact), rows in self.evidence_rows.items() if kind == "entity" and any(r[1] in document_ids for r in rows)}
        return entities, set()

    def evidence(self, kind, ids):
        return {fact: list(self.evidence_rows[(kind, fact)]) for fact in ids if (kind, fact) in self.evidence_rows}

    def relations_touching(self, entity_ids):
        return [r for r in self.relations if r.source_id in entity_ids or r.target_id in entity_ids]

    def get_chunks(self, ids):
        return {chunk_id: Chunk(chunk_id.upper()) for chunk_id in ids}


@attrs.frozen
class Result:
    id: str
    document_id: str


def test_a_link_only_a_hidden_document_supports_is_not_followed():
    everyone = {c.id: c.via_relation for c in related_chunks(TinyGraph(), [Result("r", "R")], 10)}
    assert everyone == {"h": "relation:A-B", "v": "relation:A-B", "w": "relation:A-C", "x": "relation:A-C"}
    without_h = {c.id: (c.via_relation, c.links) for c in related_chunks(TinyGraph(), [Result("r", "R")], 10, lambda d: d != "H")}
    # neither H's chunk nor B's, which only H's relation reaches; C's side stays
    assert without_h == {"w": ("relation:A-C", 1), "x": ("relation:A-C", 1)}


def test_one_callers_reads_do_not_change_another_callers_recency(kb_copy, server_factory, tokens):
    table, headers = tokens({"alice": {"principal": "alice", "kbs": ["*"], "rights": ["read"]},
                             "bob": {"principal": "bob", "kbs": ["*"], "rights": ["read"]}})
    running = server_factory(kb_copy, ServerConfig(tokens=table))
    ask = {"query": "penicillin and Fleming", "top_k": 3, "update_access": False, "related": False}

    def seen(client, who: str) -> list[tuple]:
        results = client.post("/api/v1/search", json=ask, headers=headers[who]).json()["results"]
        return [(r["memory"]["id"], r["memory"]["last_access"], r["recency_score"]) for r in results]

    with running.client() as client:
        bob_before = seen(client, "bob")
        started = time.time()
        for _ in range(3):
            assert client.post("/api/v1/search", json={**ask, "update_access": True}, headers=headers["alice"]).status_code == 200
        alice_after = seen(client, "alice")
        bob_after = seen(client, "bob")
    assert all(last < started for _, last, _ in bob_before)  # never read: as old as the documents
    assert all(last >= started for _, last, _ in alice_after)  # alice's reads are recorded, for alice
    assert [(i, last) for i, last, _ in bob_after] == [(i, last) for i, last, _ in bob_before]
    assert [r for *_, r in bob_after] == pytest.approx([r for *_, r in bob_before], rel=1e-4)
    log = AccessLog(kb_copy / ACCESS_FILE)
    ids = [i for i, *_ in alice_after]
    assert set(log.last_access(ids, scope_key(["alice"]))) == set(ids)
    assert log.last_access(ids, scope_key(["bob"])) == {}
    # (the anonymous set may hold the shared test knowledge base's earlier reads, none of alice's)
    assert all(when < started for when in log.last_access(ids, ANONYMOUS).values())
    log.close()


def test_access_times_from_before_access_control_are_the_anonymous_callers(tmp_path):
    path = tmp_path / ACCESS_FILE
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE last_access (chunk_id TEXT PRIMARY KEY, accessed REAL NOT NULL, count INTEGER NOT NULL DEFAULT 1)")
        db.execute("INSERT INTO last_access VALUES ('kite-00000', 1000.0, 3)")
    db.close()
    log = AccessLog(path)
    assert log.last_access(["kite-00000"]) == {"kite-00000": 1000.0}  # the anonymous set
    assert log.last_access(["kite-00000"], scope_key(["alice"])) == {}
    log.record(["kite-00000"], 2000.0, scope_key(["alice"]))
    log.close()
    reopened = AccessLog(path)
    assert reopened.last_access(["kite-00000"]) == {"kite-00000": 1000.0}
    assert reopened.last_access(["kite-00000"], scope_key(["alice"])) == {"kite-00000": 2000.0}
    reopened.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'last_access'").fetchall() == []  # moved once
    db.close()
