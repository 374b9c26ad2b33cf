"""Files that are not ordinary documents: each becomes an issue with a stable code and the build goes on.

Issue 13: an unreadable file crashed the build with a raw traceback; hidden files, symlink loops,
FIFOs and unreadable folders were skipped with no issue; invalid UTF-8 became silent garbage.
Unreadable files are real: the build runs in a subprocess without CAP_DAC_OVERRIDE (setpriv),
so root is refused like any other user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from heta_framework.kb import KnowledgeBase


def _issues(report, code):
    return [i for i in report.issues if i.code == code]


async def test_hidden_files_and_folders_are_skipped_with_an_issue_unless_named(sql_kb, docs_dir):
    (docs_dir / ".draft.txt").write_text("A hidden draft about herons.")
    (docs_dir / ".git").mkdir()
    (docs_dir / ".git" / "notes.txt").write_text("Inside a hidden folder.")
    report = await sql_kb.build([docs_dir])
    assert report.document_count == 3
    hidden = _issues(report, "hidden_file_skipped")
    assert sorted(Path(i.subject.id).name for i in hidden) == [".draft.txt", ".git"]
    assert all(i.severity == "info" for i in hidden)
    # a hidden file named directly is read
    report = await sql_kb.build([docs_dir / ".draft.txt"])
    assert report.document_count == 1 and {r.name for r in sql_kb.documents.values()} >= {".draft.txt"}


async def test_symlinks_are_followed_loops_and_broken_links_are_issues(sql_kb, docs_dir, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "owls.txt").write_text("Owls hunt at night and see well in the dark.")
    (docs_dir / "linked-folder").symlink_to(outside)
    (docs_dir / "fox-again.txt").symlink_to(docs_dir / "fox.txt")
    (docs_dir / "nested").mkdir()
    (docs_dir / "nested" / "loop").symlink_to(docs_dir)
    (docs_dir / "ping").symlink_to(docs_dir / "pong")
    (docs_dir / "pong").symlink_to(docs_dir / "ping")
    (docs_dir / "dangling.txt").symlink_to(tmp_path / "nothing-here.txt")
    report = await sql_kb.build([docs_dir])
    names = sorted(r.name for r in sql_kb.documents.values())
    # the file link is the same document as its target (resolved path), the folder link is followed
    assert names == ["fox.txt", "owls.txt", "shanghai.txt", "whales.md"]
    assert next(r for r in sql_kb.documents.values() if r.name == "owls.txt").source == str((outside / "owls.txt").resolve())
    loops = sorted(Path(i.subject.id).name for i in _issues(report, "symlink_loop"))
    assert loops == ["loop", "ping", "pong"]
    assert [Path(i.subject.id).name for i in _issues(report, "broken_symlink")] == ["dangling.txt"]


@pytest.mark.timeout(60)
async def test_a_fifo_is_never_opened(sql_kb, docs_dir):
    os.mkfifo(docs_dir / "pipe.txt")  # opening it would block the build for ever
    report = await sql_kb.build([docs_dir])
    assert report.document_count == 3
    [issue] = _issues(report, "not_a_regular_file")
    assert "FIFO" in issue.message and issue.subject.id.endswith("pipe.txt")


async def test_invalid_utf8_is_kept_with_replacement_characters_and_flagged(sql_kb, docs_dir):
    (docs_dir / "broken.txt").write_bytes("Zürich lies on a lake. ".encode() * 4 + b"The \xc3\x28 byte and \xa0\xa1 are broken. Grebes nest here.")
    (docs_dir / "legacy.txt").write_bytes("Café crème, naïve façade, déjà vu, garçon, résumé, très bien.".encode("latin-1") * 3)
    report = await sql_kb.build([docs_dir])
    [broken] = _issues(report, "invalid_utf8")
    assert "broken.txt" in broken.message and "3 invalid UTF-8 byte sequence(s)" in broken.message
    [legacy] = _issues(report, "encoding_guessed")
    assert "legacy.txt" in legacy.message and "read as" in legacy.message
    hits = (await sql_kb.query("grebes", mode="sql_text_search")).results
    assert hits and "\ufffd" in hits[0].text and "Zürich" in hits[0].text


async def test_random_bytes_are_skipped_not_indexed_as_garbage(sql_kb, docs_dir):
    import random

    noise = random.Random(13)
    (docs_dir / "noise.txt").write_bytes(bytes(noise.randrange(1, 256) for _ in range(2000)))
    report = await sql_kb.build([docs_dir])
    assert [i.code for i in report.issues if "noise.txt" in i.message] == ["binary_document"]
    assert "noise.txt" not in {r.metadata.get("name") for r in (await sql_kb.query("the", mode="sql_text_search", top_k=20)).results}


BUILD_WITHOUT_DAC = textwrap.dedent(
    """
    import json, sys
    from heta_framework.kb import KnowledgeBase
    kb = KnowledgeBase.load(sys.argv[1])
    report = kb.sync.build([sys.argv[2]], prune=True)
    print(json.dumps({"documents": report.document_count,
                      "issues": [[i.code, i.subject.id, i.message] for i in report.issues]}))
    kb.close()
    """
)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv to drop CAP_DAC_OVERRIDE")
def test_unreadable_files_and_folders_are_issues_and_the_build_goes_on(sql_kb, docs_dir):
    (docs_dir / "secret.txt").write_text("Nobody may read this.")
    (docs_dir / "locked").mkdir()
    (docs_dir / "locked" / "inside.txt").write_text("Nor this.")
    kb_path = sql_kb.path
    sql_kb.close()
    # a first build (with the capability) takes in secret.txt, so prune has something it must keep
    first = KnowledgeBase.load(kb_path)
    first.sync.build([docs_dir])
    first.close()
    os.chmod(docs_dir / "secret.txt", 0)
    os.chmod(docs_dir / "locked", 0)
    (docs_dir / "newer.txt").write_text("A newer readable note about cormorants.")
    try:
        result = subprocess.run(
            ["setpriv", "--bounding-set=-dac_override,-dac_read_search", sys.executable, "-c", BUILD_WITHOUT_DAC, str(kb_path), str(docs_dir)],
            capture_output=True, text=True, timeout=120,
        )
    finally:
        os.chmod(docs_dir / "secret.txt", 0o644)
        os.chmod(docs_dir / "locked", 0o755)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    codes = {(code, Path(subject).name) for code, subject, _ in report["issues"]}
    assert ("unreadable_file", "secret.txt") in codes
    assert ("unreadable_folder", "locked") in codes
    assert any("Permission denied" in message for _, _, message in report["issues"])
    assert report["documents"] == 1  # newer.txt
    kb = KnowledgeBase.load(kb_path)
    # an unreadable file is not a vanished one: prune kept it
    assert {r.name for r in kb.documents.values()} >= {"secret.txt", "newer.txt", "fox.txt"}
    kb.close()
