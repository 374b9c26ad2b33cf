"""The command line of heta-server: `heta build --meta` (importance and tags for memory_search) and `heta serve`'s options."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.cli.main import cli
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.kb.sources import file_document_id
from heta_framework.plugins.registry import PluginRegistry


def test_build_meta_sets_importance_and_tags(tmp_path):
    from heta_plugin_fulltext import IndexFullText

    KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[ParseDocuments(), SplitDocuments(), IndexFullText()]),
                         registry=PluginRegistry.from_entry_points()).close()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "kite.txt").write_text("The red kite nests in oak trees.")
    (notes / "owl.txt").write_text("The red owl hunts at night.")
    runner = CliRunner()
    result = runner.invoke(cli, ["--kb", str(tmp_path / "kb"), "build", str(notes / "kite.txt"), "--meta", "importance=8",
                                 "--meta", "tags=birds, trees", "--meta", "author=Ada"])
    assert result.exit_code == 0, result.output
    assert runner.invoke(cli, ["--kb", str(tmp_path / "kb"), "build", str(notes / "owl.txt"), "--meta", "importance=2"]).exit_code == 0
    with KnowledgeBase.load(tmp_path / "kb") as kb:
        kite = kb.document(file_document_id((notes / "kite.txt").resolve()))  # the id a plain build gives the file
        assert kite.metadata == {"importance": 8, "tags": ["birds", "trees"], "author": "Ada"}
        assert kite.source == str((notes / "kite.txt").resolve())
        response = kb.sync.query("red", mode="memory_search",
                                 options={"weight_recency": 0, "weight_relevance": 0, "update_access": False})
        assert [r.metadata["importance_score_normalized"] for r in response.results] == [0.8, 0.2]
        tagged = kb.sync.query("red", mode="memory_search", options={"tags": ["trees"], "update_access": False})
        assert [r.document_id for r in tagged.results] == [kite.id]

    bad = runner.invoke(cli, ["--kb", str(tmp_path / "kb"), "build", str(notes), "--meta", "importance=11"])
    assert bad.exit_code == 2 and "importance must be a number from 0 to 10" in bad.output
    malformed = runner.invoke(cli, ["--kb", str(tmp_path / "kb"), "build", str(notes), "--meta", "importance"])
    assert malformed.exit_code == 2 and "KEY=VALUE" in malformed.output


def test_heta_serve_refuses_bad_settings_cleanly_and_never_says_serving_first(tmp_path, monkeypatch):
    KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[ParseDocuments(), SplitDocuments()]),
                         registry=PluginRegistry.from_entry_points()).close()
    monkeypatch.delenv("HETA_SERVER_TOKEN", raising=False)
    latin1 = tmp_path / "token.txt"
    latin1.write_bytes("s\xe9cret-token-of-length-32-chars!".encode("latin-1"))
    unhashed = tmp_path / "unhashed.toml"
    unhashed.write_text('[[tokens]]\ntoken = "secret-token-of-length-32-chars!"\nprincipal = "a"\nkbs = ["*"]\nrights = ["read"]\n')
    (tmp_path / "ok.txt").write_text("secret-token-of-length-32-chars!\n")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"tokens": [{"sha256": "ab" * 32, "principal": "a", "kbs": ["hr"], "rights": ["read"]}]}))
    runner = CliRunner()
    kb = ["--kb", str(tmp_path / "kb"), "serve"]
    cases = {
        "a raw token in the tokens file": (kb + ["--tokens", str(unhashed)], "store the token's SHA-256"),
        "tokens and a token file": (kb + ["--tokens", str(elsewhere), "--token-file", str(tmp_path / "ok.txt")], "give one"),
        "a knowledge base not served": (kb + ["--tokens", str(elsewhere)], "'hr' this server does not serve"),
        "kb-dir without a name": (kb + ["--kb-dir", str(tmp_path / "kb")], "NAME=PATH"),
        "kb-dir named default": (kb + ["--kb-dir", f"default={tmp_path / 'kb'}"], "is the --kb knowledge base's"),
        "one folder twice": (kb + ["--kb-dir", f"again={tmp_path / 'kb'}"], "same knowledge-base folder"),
        "audit reads without a file": (kb + ["--audit-reads"], "--audit-reads needs --audit-log"),
        "nan body": (kb + ["--max-body-mb", "nan"], "is not a size"),
        "inf upload": (kb + ["--max-upload-mb", "inf"], "is not a size"),
        "latin-1 token file": (kb + ["--token-file", str(latin1)], "is not UTF-8 text"),
        "exposed without a token": (kb + ["--host", "0.0.0.0", "--port", "0"], "a token is required"),
        "MCP writes without a token": (kb + ["--mcp-writes"], "--mcp-writes needs a token"),
    }
    for name, (args, message) in cases.items():
        result = runner.invoke(cli, args)
        assert result.exit_code != 0, name
        assert message in result.output, (name, result.output)
        assert "Traceback" not in result.output and (result.exception is None or isinstance(result.exception, SystemExit)), name
        assert "Serving" not in result.output, (name, result.output)  # nothing claims to serve what will not start


@pytest.mark.slow
def test_heta_serve_with_a_tokens_file_named_knowledge_bases_and_an_audit_log(kb_copy, tmp_path):
    """The options end to end: a real `heta serve` process, a real client."""
    import socket
    import subprocess
    import sys
    import time

    import httpx
    from heta_plugin_fulltext import IndexFullText
    from heta_server.tokens import token_hash

    zoo = KnowledgeBase.create(tmp_path / "zoo", Recipe(steps=[ParseDocuments(), SplitDocuments(), IndexFullText()]),
                               registry=PluginRegistry.from_entry_points())
    zoo.sync.build([SourceDocument(id="otters", text="Sea otters hold hands while they sleep.")])
    zoo.close()
    keeper, medic = "keeper-token-0123456789abcdef", "medic-token-0123456789abcdef"
    (tmp_path / "tokens.toml").write_text(
        f'[[tokens]]\nsha256 = "{token_hash(keeper)}"\nprincipal = "keeper"\nkbs = ["zoo"]\nrights = ["write"]\n\n'
        f'[[tokens]]\nsha256 = "{token_hash(medic)}"\nprincipal = "medic"\nkbs = ["default"]\nrights = ["read"]\n'
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    audit_file = tmp_path / "audit.jsonl"
    server = subprocess.Popen(
        [sys.executable, "-m", "heta_framework.cli.main", "--kb", str(kb_copy), "serve", "--port", str(port), "--no-warm",
         "--tokens", str(tmp_path / "tokens.toml"), "--kb-dir", f"zoo={tmp_path / 'zoo'}", "--audit-log", str(audit_file), "--audit-reads"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "heta serve did not start"
            time.sleep(0.1)
        as_keeper = {"Authorization": f"Bearer {keeper}"}
        as_medic = {"Authorization": f"Bearer {medic}"}
        assert httpx.get(f"{url}/api/v1/kbs", headers=as_keeper).json()["kbs"] == [{"name": "zoo", "default": False}]
        job = httpx.post(f"{url}/api/v1/kbs/zoo/documents", headers=as_keeper,
                         json={"documents": [{"id": "lions", "text": "Lions rest in the shade.", "access": ["keeper"]}]}).json()["job"]
        while (job := httpx.get(f"{url}/api/v1/kbs/zoo/jobs/{job['id']}", headers=as_keeper).json()["job"])["status"] == "running":
            time.sleep(0.1)
        assert job["status"] == "done", job
        assert httpx.post(f"{url}/api/v1/query", headers=as_keeper, json={"text": "x"}).status_code == 404
        # --no-warm: this first query of the default knowledge base loads its embedding model (seconds), as documented
        medic_query = httpx.post(f"{url}/api/v1/query", headers=as_medic, json={"text": "penicillin", "mode": "full_text_search"},
                                 timeout=120)
        assert medic_query.status_code == 200 and medic_query.json()["results"]
        assert httpx.post(f"{url}/api/v1/documents", headers=as_medic, json={"documents": [{"text": "x"}]}).status_code == 403
    finally:
        server.terminate()
        server.wait(timeout=60)
    records = [json.loads(line) for line in audit_file.read_text().splitlines()]
    assert [(r["operation"], r["actor"], r["kb"]) for r in records] == [
        ("build", "keeper", str((tmp_path / "zoo").resolve())), ("query", "medic", str(kb_copy.resolve())),
    ]
