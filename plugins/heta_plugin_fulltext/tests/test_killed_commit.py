"""SIGKILL inside a Whoosh commit: the index still opens, and the resumed build equals a clean one.

Issue 13 asks that a crash half way leave the knowledge base readable and the build resumable.
The riskiest moment for the text index is its commit: Whoosh has written the new segment files
and not yet the table of contents that names them. A real writer process is killed right there
(its second commit, so the first batch is committed and the second half-written).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, StoreConfig
from heta_plugin_fulltext import IndexFullText

KILLED_IN_COMMIT = textwrap.dedent(
    """
    import os, signal, sys
    import whoosh.index
    from heta_framework.kb import KnowledgeBase
    write_toc = whoosh.index.TOC.write
    commits = []
    def die_before_the_second_toc(self, storage, indexname):
        commits.append(1)
        if len(commits) == 2:  # segment files written, the table of contents that names them not
            os.kill(os.getpid(), signal.SIGKILL)
        return write_toc(self, storage, indexname)
    whoosh.index.TOC.write = die_before_the_second_toc
    kb = KnowledgeBase.load(sys.argv[1])
    kb.sync.build([sys.argv[2]])
    """
)

QUERIES = ["otters rivers", "mountain storms", "document 7", "forests", "sea crossing"]


def _recipe() -> Recipe:
    # batches of 40 chunks: several commits in one step
    return Recipe(
        stores={"text": StoreConfig(type="whoosh")},
        steps=[ParseDocuments(), SplitDocuments(chunk_size=40, chunk_overlap=0), IndexFullText(batch_size=40)],
    )


def _documents(folder: Path, indexes: range) -> Path:
    folder.mkdir(exist_ok=True)
    topics = ["otters swim in rivers", "mountains meet storms", "forests grow slowly", "ships are crossing the sea"]
    for index in indexes:
        (folder / f"doc-{index:02d}.txt").write_text(
            " ".join(f"Document {index} line {line}: {topics[(index + line) % 4]}." for line in range(12))
        )
    return folder


def _answers(kb: KnowledgeBase) -> list[list[tuple[str, float]]]:
    """Every hit of each query as (file name and chunk number, score), ties by name: ids hash the
    folder's path, and equal scores come in the index's internal order."""
    return [
        sorted(
            (
                (f"{Path(r.metadata['source']).name}#{r.id.rsplit('-', 1)[1]}", round(r.score, 6))
                for r in kb.sync.query(q, mode="full_text_search", top_k=500).results
            ),
            key=lambda hit: (-hit[1], hit[0]),
        )
        for q in QUERIES
    ]


def test_a_writer_killed_inside_a_whoosh_commit_resumes_to_the_clean_index(tmp_path):
    docs = _documents(tmp_path / "docs", range(10))
    kb = KnowledgeBase.create(tmp_path / "killed", _recipe())
    kb.sync.build([docs])
    before = kb.get_component("stores.text").count()
    kb.close()
    _documents(docs, range(10, 30))
    writer = subprocess.run(
        [sys.executable, "-c", KILLED_IN_COMMIT, str(kb.path), str(docs)], capture_output=True, text=True, env={**os.environ}
    )
    assert writer.returncode == -9, writer.stderr  # it really died inside the commit

    killed = KnowledgeBase.load(kb.path)
    # readable: the first batch of the new documents is committed, the half-written second is not there at all
    assert killed.get_component("stores.text").count() == before + 40
    response = killed.sync.query("otters rivers", mode="full_text_search", top_k=500)
    assert len(response.results) == len({r.id for r in response.results}) > 0
    report = killed.sync.build([docs])
    assert report.document_count == 20

    # the same two builds without the kill
    clean = KnowledgeBase.create(tmp_path / "clean", _recipe())
    first = _documents(tmp_path / "first", range(10))
    clean.sync.build([first])
    _documents(first, range(10, 30))
    clean.sync.build([first])
    assert killed.get_component("stores.text").count() == clean.get_component("stores.text").count()
    # the resumed batch replaced its own first copy, whose deleted postings still weigh in BM25's
    # statistics until segments merge: the same hits at once, the same scores after compact
    assert [{hit for hit, _ in answer} for answer in _answers(killed)] == [
        {hit for hit, _ in answer} for answer in _answers(clean)
    ]
    killed.compact()
    clean.compact()
    assert _answers(killed) == _answers(clean)
    assert all(_answers(clean))
    killed.close()
    clean.close()
