"""Document management in the Python API (issue 11, section 2): prune, one document per content,
removed documents stay removed, dry runs, and the source file's mtime and size on the record."""

from __future__ import annotations

import os
import shutil

from heta_framework.kb import KnowledgeBase


def _by_name(kb: KnowledgeBase, name: str):
    return next(record for record in kb.documents.values() if record.name == name)


async def _sql_hits(kb: KnowledgeBase, text: str) -> set[str]:
    return {r.metadata["document_id"] for r in (await kb.query(text, mode="sql_text_search", top_k=10)).results}


async def test_prune_removes_documents_whose_file_disappeared(sql_kb, docs_dir):
    await sql_kb.build([docs_dir])
    fox = _by_name(sql_kb, "fox.txt")
    (docs_dir / "fox.txt").unlink()
    await sql_kb.build([docs_dir])  # without prune a removed file stays searchable
    assert fox.id in sql_kb.documents
    report = await sql_kb.build([docs_dir], prune=True)
    assert fox.id not in sql_kb.documents
    assert report.ingest.stats["documents_pruned"] == 1
    assert [i.code for i in report.issues if i.subject.id == fox.id] == ["document_pruned"]
    assert await _sql_hits(sql_kb, "fox") == set()
    assert not (sql_kb.path / "objects" / fox.raw_key).exists()
    assert {r.name for r in sql_kb.documents.values()} == {"whales.md", "shanghai.txt"}


async def test_prune_only_touches_the_folders_it_was_given(sql_kb, docs_dir, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "owls.txt").write_text("Owls hunt at night.")
    await sql_kb.build([docs_dir, other])
    shutil.rmtree(docs_dir)
    docs_dir.mkdir()
    await sql_kb.build([docs_dir], prune=True)
    assert {r.name for r in sql_kb.documents.values()} == {"owls.txt"}


async def test_the_same_content_through_two_paths_is_one_document(sql_kb, docs_dir):
    (docs_dir / "copies").mkdir()
    shutil.copy(docs_dir / "fox.txt", docs_dir / "copies" / "fox-copy.txt")
    report = await sql_kb.build([docs_dir])
    assert report.document_count == 3
    duplicates = [i for i in report.issues if i.code == "duplicate_document_content"]
    assert len(duplicates) == 1 and "fox-copy.txt" in duplicates[0].message and "fox.txt" in duplicates[0].message
    assert len(await _sql_hits(sql_kb, "fox")) == 1
    # a moved file is not a duplicate of the document it was: it is taken in again, and prune drops the old one
    (docs_dir / "fox.txt").unlink()
    report = await sql_kb.build([docs_dir], prune=True)
    assert {r.name for r in sql_kb.documents.values()} == {"fox-copy.txt", "whales.md", "shanghai.txt"}
    assert len(await _sql_hits(sql_kb, "fox")) == 1


async def test_a_removed_document_does_not_come_back_unless_changed_or_forced(sql_kb, docs_dir):
    await sql_kb.build([docs_dir])
    whale = _by_name(sql_kb, "whales.md")
    removed = await sql_kb.delete_documents([whale.id])
    assert [r.id for r in removed] == [whale.id]
    assert whale.id in sql_kb.removed_documents
    report = await sql_kb.build([docs_dir])
    assert whale.id not in sql_kb.documents
    assert [i.code for i in report.issues] == ["document_previously_removed"]
    assert await _sql_hits(sql_kb, "whales") == set()
    # force brings it back
    await sql_kb.build([docs_dir], force=True)
    assert whale.id in sql_kb.documents and whale.id not in sql_kb.removed_documents
    assert await _sql_hits(sql_kb, "whales") == {whale.id}
    # removed again, then the file changes: the new content is taken in
    await sql_kb.delete_documents([whale.id])
    (docs_dir / "whales.md").write_text("# Whales\n\nWhales sing long songs under water.")
    await sql_kb.build([docs_dir])
    assert whale.id in sql_kb.documents
    assert await _sql_hits(sql_kb, "songs") == {whale.id}


async def test_delete_documents_dry_run_returns_what_would_go_and_removes_nothing(sql_kb, docs_dir):
    await sql_kb.build([docs_dir])
    fox = _by_name(sql_kb, "fox.txt")
    before = sorted(p.relative_to(sql_kb.path).as_posix() for p in sql_kb.path.rglob("*") if p.name != "writer.lock")
    would = await sql_kb.delete_documents([fox.id, fox.id], dry_run=True)
    assert would == [fox]
    assert sorted(p.relative_to(sql_kb.path).as_posix() for p in sql_kb.path.rglob("*") if p.name != "writer.lock") == before
    assert await _sql_hits(sql_kb, "fox") == {fox.id}
    assert sql_kb.removed_documents == {}


async def test_the_record_carries_the_files_mtime_and_size(sql_kb, docs_dir):
    os.utime(docs_dir / "fox.txt", (1_600_000_000, 1_600_000_000))
    await sql_kb.build([docs_dir])
    fox = _by_name(sql_kb, "fox.txt")
    assert fox.modified == 1_600_000_000
    assert fox.size == (docs_dir / "fox.txt").stat().st_size
    assert fox.added is not None and fox.updated == fox.added
    # a touched but unchanged file updates the mtime only; a changed one is taken in again
    os.utime(docs_dir / "fox.txt", (1_700_000_000, 1_700_000_000))
    await sql_kb.build([docs_dir])
    touched = _by_name(sql_kb, "fox.txt")
    assert touched.modified == 1_700_000_000 and touched.updated == fox.updated
    # reopened from disk, the fields are still there
    again = KnowledgeBase.load(sql_kb.path, registry=sql_kb.registry)
    assert again.document(fox.id).modified == 1_700_000_000
    again.close()


async def test_catalogs_written_before_file_times_existed_still_prune(sql_kb, docs_dir):
    import json

    await sql_kb.build([docs_dir])
    catalog_file = sql_kb.path / "catalog.json"
    old_style = {
        doc_id: {k: v for k, v in entry.items() if k not in ("modified", "added", "updated")}
        for doc_id, entry in json.loads(catalog_file.read_text()).items()
    }
    catalog_file.write_text(json.dumps(old_style))
    sql_kb.close()
    kb = KnowledgeBase.load(sql_kb.path, registry=sql_kb.registry)
    assert all(record.modified is None and record.from_file for record in kb.documents.values())
    (docs_dir / "fox.txt").unlink()
    await kb.build([docs_dir], prune=True)
    assert {r.name for r in kb.documents.values()} == {"whales.md", "shanghai.txt"}
    assert all(record.modified is not None for record in kb.documents.values())
    kb.close()
