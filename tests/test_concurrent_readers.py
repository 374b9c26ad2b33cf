"""Readers in another process while a build writes: the committed state or a retryable error, never a raw one.

Issue 13: 2 of 666 queries from another process raised FAISS's raw `RuntimeError ...
reconstruct_batch` while a build added documents. Real FAISS, Whoosh and SQLite files, the local
MiniLM model, a real reader subprocess that keeps one KnowledgeBase open the whole time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.plugins.registry import PluginRegistry

pytestmark = pytest.mark.slow

READER = textwrap.dedent(
    """
    import json, pathlib, sys, time
    from heta_framework.errors import KnowledgeBaseBusyError
    from heta_framework.kb import KnowledgeBase
    kb = KnowledgeBase.load(sys.argv[1])
    stop = pathlib.Path(sys.argv[2])
    counts = {"ok": 0, "busy": 0, "other": [], "modes": {}}
    words = ["otters", "rivers", "mountains", "storms", "forests"]
    index = 0
    def ask(mode, text):
        try:
            kb.sync.query(text, mode=mode, top_k=5)
            counts["ok"] += 1
        except KnowledgeBaseBusyError:
            counts["busy"] += 1
        except Exception as exc:
            counts["other"].append(f"{mode}: {type(exc).__name__}: {exc}"[:300])
        counts["modes"][mode] = counts["modes"].get(mode, 0) + 1
    ask("vector_search", "otters")
    print("ready", flush=True)
    while not stop.exists():
        word = words[index % len(words)]
        for mode in ("vector_search", "full_text_search", "sql_text_search"):
            ask(mode, word)
        index += 1
    # the writer has committed: this reader (opened before the builds) sees the new documents
    final = kb.sync.query("zebrafinchuniqueword", mode="full_text_search", top_k=10)
    counts["final_sources"] = [r.metadata.get("source", "") for r in final.results]
    counts["final_vector_count"] = len(kb.sync.query("zebra finch", mode="vector_search", top_k=500).results)
    print(json.dumps(counts), flush=True)
    kb.close()
    """
)


def _documents(folder: Path, start: int, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    topics = ["otters swim in rivers", "mountains rise over forests", "storms cross the sea", "rivers cut through mountains"]
    for index in range(start, start + count):
        (folder / f"note-{index:04d}.txt").write_text(
            f"Note {index}. {topics[index % len(topics)]}. " * 20 + (" zebrafinchuniqueword" if index == 99 else "")
        )
    return folder


def test_queries_from_another_process_while_builds_add_documents(tmp_path):
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_vector import EmbedChunks, IndexVectors

    recipe = Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[ParseDocuments(), SplitDocuments(chunk_size=60, chunk_overlap=10), PersistChunks(), EmbedChunks(), IndexVectors(), IndexFullText()],
    )
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=PluginRegistry.from_entry_points(strict=True))
    docs = _documents(tmp_path / "docs", 0, 20)
    kb.sync.build([docs])
    stop = tmp_path / "stop"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(kb.path), str(stop)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert reader.stdout.readline().strip() == "ready", reader.stderr.read()
        for batch in range(1, 5):
            report = kb.sync.build([_documents(docs, batch * 20, 20)])
            assert report.document_count == 20
        stop.touch()
        out, err = reader.communicate(timeout=300)
    finally:
        reader.kill()
    assert reader.returncode == 0, err
    counts = json.loads(out.strip().splitlines()[-1])
    assert counts["other"] == [], counts["other"]
    assert counts["ok"] >= 20, counts  # the reader really queried while the builds ran
    assert any(source.endswith("note-0099.txt") for source in counts["final_sources"]), counts["final_sources"]
    # nothing was lost: the FAISS index the reader reopened, and the writer's own, hold every chunk
    import sqlite3

    with sqlite3.connect(kb.path / "chunks.sqlite") as connection:
        chunks = connection.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    assert chunks > 200
    assert counts["final_vector_count"] == chunks
    assert len(kb.sync.query("zebra finch", mode="vector_search", top_k=500).results) == chunks
    kb.close()
