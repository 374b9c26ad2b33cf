"""The console's JSON (``/api/v1/console/...``) against a real knowledge base with a document only a group may read.

Every answer is the caller's view: the outsider never meets the lab note, its chunks, or the graph facts
only it supports, in the catalog, a document view, the graph explorer or the home page's counts.
"""

from __future__ import annotations

import json
import secrets
import shutil
from pathlib import Path

import pytest
from heta_framework.kb import KnowledgeBase, SourceDocument

PEOPLE = {
    "outsider": {"principal": "outsider", "kbs": ["*"], "rights": ["read"]},
    "chemist": {"principal": "chemist", "groups": ["group:lab"], "kbs": ["*"], "rights": ["read"]},
}
#: readable by group:lab only; it also speaks of Alexander Fleming, an entity the public documents support too
LAB_NOTE = SourceDocument(
    id="lab-note", name="lab-note.md", access=["group:lab"],
    text="# Lab note\n\nAlexander Fleming kept the secret formula for penicillin broth, corn steep liquor and lactose, "
         "at the Peoria lab in Illinois for many long and patient years of careful work.",
)
#: words only the lab note says
SECRET_WORDS = ("Peoria", "steep", "lactose", "secret formula", "Illinois")


@pytest.fixture(scope="module")
def lab_kb(built_kb, tmp_path_factory, server_documents) -> Path:
    path = tmp_path_factory.mktemp("console-api") / "kb"
    shutil.copytree(built_kb, path)
    kb = KnowledgeBase.load(path)
    kb.sync.build([LAB_NOTE])
    kb.close()
    return path


@pytest.fixture(scope="module")
def lab(lab_kb, server_starter):
    """(server, {name: headers}) with the outsider and chemist tokens."""
    from heta_server.config import ServerConfig
    from heta_server.tokens import parse_tokens, token_hash

    raw = {name: f"tok-{name}-{secrets.token_hex(16)}" for name in PEOPLE}
    table = parse_tokens({"tokens": [{"sha256": token_hash(raw[name]), **entry} for name, entry in PEOPLE.items()]})
    running = server_starter(lab_kb, ServerConfig(tokens=table))
    yield running, {name: {"Authorization": f"Bearer {token}"} for name, token in raw.items()}
    running.stop()


def get(lab, who: str, path: str, **params):
    running, headers = lab
    with running.client(headers=headers[who]) as client:
        return client.get("/api/v1/console" + path, params=params)


def no_secret(data) -> None:
    text = json.dumps(data)
    for word in SECRET_WORDS:
        assert word not in text, word
    assert "lab-note" not in text


def test_the_summary_counts_what_the_caller_may_read(lab, server_documents):
    documents = len(server_documents["documents"])
    outsider = get(lab, "outsider", "/summary").json()
    chemist = get(lab, "chemist", "/summary").json()
    assert outsider["documents"]["total"] == documents and chemist["documents"]["total"] == documents + 1
    assert chemist["chunks"] == outsider["chunks"] + 1
    assert chemist["entities"] > outsider["entities"] > 0  # the lab note's own entities (Peoria, ...) count for the chemist only
    assert outsider["folder"] == "kb" and "/" not in outsider["folder"]  # never the server's absolute path
    assert outsider["may_write"] is False and outsider["answers"] is False
    assert outsider["last_build"]["status"] == "done" and outsider["last_build"]["documents"] == 0  # the last run built only the lab note
    assert chemist["last_build"]["documents"] == 1
    unavailable = {row["mode"]: row for row in outsider["modes"] if not row["available"]}
    assert "chunk_text_index" in " ".join(unavailable["sql_text_search"]["reasons"])
    no_secret(outsider)


def test_the_default_mode_is_the_one_the_api_runs_without_a_mode(lab):
    running, headers = lab
    with running.client(headers=headers["outsider"]) as client:
        ran = client.post("/api/v1/query", json={"text": "penicillin", "top_k": 3}).json()["metadata"]["mode"]
    assert get(lab, "outsider", "/summary").json()["default_mode"] == ran


def test_the_catalog_pages_filters_and_hides(lab):
    first = get(lab, "outsider", "/documents", limit=2).json()
    assert [d["name"] for d in first["documents"]] == ["fleming.md", "penicillin.md"]
    assert first["total"] == 4 and first["next_offset"] == 2
    second = get(lab, "outsider", "/documents", limit=2, offset=2).json()
    assert [d["name"] for d in second["documents"]] == ["python.md", "whales.md"] and second["next_offset"] is None
    row = first["documents"][1]
    assert row["state"] == "built" and row["chunks"] == 1 and row["size"] > 100 and row["added"] and row["issues"] == []
    assert [d["id"] for d in get(lab, "outsider", "/documents", q="WHAL").json()["documents"]] == ["whales"]
    assert "lab-note" in [d["id"] for d in get(lab, "chemist", "/documents").json()["documents"]]
    no_secret(get(lab, "outsider", "/documents").json())


def test_a_document_view_has_its_chunks_with_locations_and_entities(lab):
    data = get(lab, "outsider", "/documents/penicillin").json()
    assert data["chunks"] == 1 and data["chunk_texts"][0]["text"].startswith("# Penicillin")
    assert data["chunk_texts"][0]["location"] == "penicillin.md"
    assert data["chunk_texts"][0]["start"] == 0 and data["chunk_texts"][0]["end"] > 100
    assert "Alexander Fleming" in [e["name"] for e in data["entities"]]
    no_secret(data)


def test_a_document_the_caller_may_not_read_is_unknown(lab):
    hidden = get(lab, "outsider", "/documents/lab-note")
    missing = get(lab, "outsider", "/documents/no-such-document")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["error"]["code"] == missing.json()["error"]["code"] == "UnknownDocument"
    shown = get(lab, "chemist", "/documents/lab-note").json()
    assert "Peoria" in shown["chunk_texts"][0]["text"]


def entity_named(lab, who: str, name: str) -> dict | None:
    found = get(lab, who, "/graph/entities", q=name, limit=20).json()["entities"]
    return next((e for e in found if e["name"] == name), None)


def test_an_entity_only_a_hidden_document_supports_does_not_exist_for_the_outsider(lab):
    peoria = entity_named(lab, "chemist", "Peoria")
    assert peoria is not None
    assert entity_named(lab, "outsider", "Peoria") is None  # the graph search filters too
    for path in (f"/graph/entity/{peoria['id']}", f"/graph/entity/{peoria['id']}/summary"):
        refused = get(lab, "outsider", path)
        assert refused.status_code == 404 and refused.json()["error"]["code"] == "UnknownFact"
    assert get(lab, "outsider", "/graph/evidence", kind="entity", id=peoria["id"]).status_code == 404
    assert get(lab, "chemist", f"/graph/entity/{peoria['id']}").json()["entity"]["name"] == "Peoria"


def test_a_shared_entity_shows_the_outsider_only_readable_evidence_and_neighbours(lab):
    fleming = entity_named(lab, "chemist", "Alexander Fleming")
    seen_by_chemist = get(lab, "chemist", f"/graph/entity/{fleming['id']}", limit=100).json()
    seen_by_outsider = get(lab, "outsider", f"/graph/entity/{fleming['id']}", limit=100).json()
    assert seen_by_chemist["total"] > seen_by_outsider["total"] > 0  # the lab note's relations are the chemist's only
    assert seen_by_chemist["entity"]["evidence"] == seen_by_outsider["entity"]["evidence"] + 1
    assert "Peoria" in json.dumps(seen_by_chemist)
    no_secret(seen_by_outsider)  # the description too: rebuilt from the evidence the outsider may read
    evidence = get(lab, "outsider", "/graph/evidence", kind="entity", id=fleming["id"]).json()
    assert evidence["evidence"] and {item["document_id"] for item in evidence["evidence"]} == {"penicillin", "fleming"}
    assert evidence["evidence"][0]["location"].endswith(".md") and evidence["evidence"][0]["text"]
    no_secret(evidence)
    assert "lab-note" in {item["document_id"] for item in get(lab, "chemist", "/graph/evidence", kind="entity", id=fleming["id"]).json()["evidence"]}
    relation = seen_by_outsider["relations"][0]
    relation_evidence = get(lab, "outsider", "/graph/evidence", kind="relation", id=relation["id"]).json()
    assert relation_evidence["fact"]["id"] == relation["id"] and relation_evidence["total"] == relation["evidence"]
    hidden_relation = next(r for r in seen_by_chemist["relations"] if r["id"] not in {o["id"] for o in seen_by_outsider["relations"]})
    assert get(lab, "outsider", "/graph/evidence", kind="relation", id=hidden_relation["id"]).status_code == 404


def test_a_neighbourhood_comes_a_page_at_a_time(lab):
    fleming = entity_named(lab, "outsider", "Alexander Fleming")
    whole = get(lab, "outsider", f"/graph/entity/{fleming['id']}", limit=100).json()
    assert whole["total"] >= 3 and whole["next_offset"] is None
    pages, offset = [], 0
    while offset is not None:
        page = get(lab, "outsider", f"/graph/entity/{fleming['id']}", limit=2, offset=offset).json()
        assert len(page["relations"]) <= 2
        pages += page["relations"]
        offset = page["next_offset"]
    assert [r["id"] for r in pages] == [r["id"] for r in whole["relations"]]
    evidence_counts = [r["evidence"] for r in whole["relations"]]
    assert evidence_counts == sorted(evidence_counts, reverse=True)  # best supported first
    ends = {e["id"] for e in whole["entities"]} | {fleming["id"]}
    assert all(r["source"] in ends and r["target"] in ends for r in whole["relations"])
    assert fleming["id"] not in {e["id"] for e in whole["entities"]}


def test_evaluation_results_are_shown_only_to_a_caller_who_reads_every_document(lab, lab_kb):
    from heta_framework.evaluation.report import ModeSummary, report_dict, write_summary

    out = lab_kb.parent / "heta-eval"
    out.mkdir(exist_ok=True)
    rows = [ModeSummary("kb", "full_text_search", 12, {"ndcg@10": 0.75, "recall@10": 0.9}, 4.2, 9.1),
            ModeSummary("other-kb", "vector_search", 12, {"ndcg@10": 0.5}, 8.0, 12.0)]
    report = report_dict("self", 10, rows, {})
    report["files"] = {"results": str(out / "results.jsonl"), "chart": str(out / "chart.png")}
    write_summary(out, report)
    (out / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n-not-really-a-chart")
    try:
        assert get(lab, "outsider", "/eval").json() == {"report": None, "hidden": True}
        shown = get(lab, "chemist", "/eval").json()
        assert shown["hidden"] is False
        data = shown["report"]
        assert data["dataset"] == "self" and data["k"] == 10
        assert [(r["recipe"], r["mode"]) for r in data["results"]] == [("kb", "full_text_search")]  # this knowledge base's rows
        assert data["chart"].startswith("data:image/png;base64,")
        assert str(out) not in json.dumps(shown)  # the summary's own absolute paths stay on the server
    finally:
        shutil.rmtree(out)
    assert get(lab, "chemist", "/eval").json() == {"report": None, "hidden": False}


def test_the_static_files_are_served_with_their_types_and_the_page_forbids_inline_script(lab):
    from heta_server.console_static import STATIC_FILES

    running, _ = lab
    with running.client() as client:  # no token: the page and its files open, and hold no data
        page = client.get("/")
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert "<script" in page.text and all('src="/static/' in tag for tag in page.text.split("<script")[1:])
        for name, media_type in STATIC_FILES.items():
            answer = client.get(f"/static/{name}")
            assert answer.status_code == 200 and answer.headers["content-type"] == media_type, name
        assert client.get("/static/console/nope.js").status_code == 401  # not a page file: it needs the token
        assert client.get("/api/v1/console/summary").status_code == 401
    with running.client(headers=lab[1]["chemist"]) as client:  # and even with it, only the listed files exist
        for name in ("console/nope.js", "%2e%2e/app.py", "..%2Fapp.py", "vendor/README.md"):
            assert client.get(f"/static/{name}").status_code == 404, name


def test_a_chunk_link_opens_the_page_that_holds_the_chunk():
    from heta_framework.builtin.steps.split import chunks_key
    from heta_framework.contracts.documents import Chunk, DocumentRecord, chunk_to_dict
    from heta_server.console_documents import document_view

    chunks = [chunk_to_dict(Chunk(id=f"long-{i:05d}", document_id="long", text=f"Part {i}.", index=i, start=i * 10, end=i * 10 + 8,
                                  source="/data/long.pdf", page=i // 3 + 1)) for i in range(120)]

    class Objects:
        def exists(self, key):
            return key == chunks_key("long")

        def get_json(self, key):
            return chunks

    class Record:
        runs: list = []

    class FakeKB:
        objects, run_record = Objects(), Record()

        def readers(self, document_id):
            return ("public",)

    record = DocumentRecord(id="long", source="/data/long.pdf", name="long.pdf", content_hash="h", size=10, raw_key="raw/long.pdf")
    first = document_view(FakeKB(), record, limit=50)
    assert [c["id"] for c in first["chunk_texts"]][:2] == ["long-00000", "long-00001"] and first["next_offset"] == 50
    opened = document_view(FakeKB(), record, limit=50, chunk="long-00077")
    assert opened["offset"] == 50 and "long-00077" in [c["id"] for c in opened["chunk_texts"]]
    assert opened["chunk_texts"][27]["location"] == "long.pdf p.26"  # the chunk's page, as `heta query` says it
    assert document_view(FakeKB(), record, limit=50, chunk="elsewhere")["offset"] == 0


def test_removed_documents_are_listed_only_to_callers_who_could_read_them(tmp_path, server_factory, tokens):
    from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
    from heta_framework.kb import Recipe
    from heta_framework.plugins.registry import PluginRegistry
    from heta_plugin_fulltext import IndexFullText
    from heta_server.config import ServerConfig

    kb = KnowledgeBase.create(tmp_path / "small", Recipe(steps=[ParseDocuments(), SplitDocuments(), IndexFullText()]),
                              registry=PluginRegistry.from_entry_points(strict=True))
    kb.sync.build([SourceDocument(id="kept", name="kept.md", text="Kept for good."),
                   SourceDocument(id="gone", name="gone-plan.md", text="A plan nobody keeps.", access=["group:lab"])])
    kb.sync.delete_documents(["gone"])
    kb.close()
    table, headers = tokens(PEOPLE)
    running = server_factory(tmp_path / "small", ServerConfig(tokens=table))
    with running.client(headers=headers["chemist"]) as client:
        rows = client.get("/api/v1/console/documents").json()["documents"]
    assert [(r["name"], r["state"]) for r in rows] == [("kept.md", "built"), ("gone-plan.md", "removed")]
    assert rows[1]["updated"] > 0 and rows[1]["chunks"] == 0
    with running.client(headers=headers["outsider"]) as client:
        data = client.get("/api/v1/console/documents").json()
    assert [r["name"] for r in data["documents"]] == ["kept.md"] and "gone" not in json.dumps(data)


def test_a_restricted_caller_sees_only_the_build_issues_about_its_documents():
    from heta_framework.contracts.access import AccessScope
    from heta_server.console_summary import last_build

    def issue(kind: str, subject: str, message: str) -> dict:
        return {"step": "embed_chunks", "subject": {"type": kind, "id": subject}, "code": "embedding_failed", "severity": "warning",
                "message": message, "resolution": None, "details": {}}

    class Record:
        last_run = {"id": 3, "status": "done", "started": 1.0, "finished": 2.0, "document_ids": ["open", "secret"], "steps": {
            "02-embed_chunks": {"issues": [issue("document", "open", "open.md was empty"), issue("document", "secret", "secret.md: Peoria"),
                                           issue("chunk", "secret-00001", "the Peoria chunk failed")]}}}

    class FakeKB:
        run_record = Record()

    everyone = last_build(FakeKB(), AccessScope())
    assert everyone["issue_count"] == 3 and everyone["documents"] == 2
    outsider = last_build(FakeKB(), AccessScope(principals=frozenset({"outsider"}), visible=frozenset({"open"})))
    assert [i["message"] for i in outsider["issues"]] == ["open.md was empty"] and outsider["documents"] == 1
    assert "Peoria" not in json.dumps(outsider) and "secret" not in json.dumps(outsider)


def test_the_newest_evaluation_about_this_knowledge_base_is_the_one_shown(tmp_path):
    import os

    from heta_framework.evaluation.report import ModeSummary, report_dict, write_summary
    from heta_server.console_eval import eval_chart, eval_report

    def evaluation(folder: Path, recipe: str, dataset: str, when: float) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        write_summary(folder, report_dict(dataset, 5, [ModeSummary(recipe, "vector_search", 3, {"ndcg@5": 0.5}, 1.0, 2.0),
                                                       ModeSummary("someone-else", "vector_search", 3, {"ndcg@5": 0.1}, 1.0, 2.0)], {}))
        os.utime(folder / "summary.json", (when, when))

    # `heta eval --recipe starter --out out` built out/kb-starter; later `heta --kb out/kb-starter eval` ran from out/
    kb = tmp_path / "out" / "kb-starter"
    kb.mkdir(parents=True)
    assert eval_report(kb) is None
    evaluation(tmp_path / "out", "starter", "first", 1_000)
    assert eval_report(kb)["dataset"] == "first"
    evaluation(tmp_path / "out" / "heta-eval", "kb-starter", "second", 2_000)
    report = eval_report(kb)
    assert report["dataset"] == "second" and [r["recipe"] for r in report["results"]] == ["kb-starter"]
    assert report["finished"] == 2_000 and eval_chart(kb) is None
    evaluation(tmp_path / "out" / "heta-eval", "another-kb", "third", 3_000)  # about another knowledge base: not this one's
    assert eval_report(kb)["dataset"] == "first"
