"""delete(dry_run=True) lists, delete() removes what cleanup plans name; raw inputs stay."""

from __future__ import annotations

import pytest
from heta_framework.errors import KnowledgeBaseError


async def test_dry_run_lists_and_keeps_everything(sql_kb, docs_dir):
    await sql_kb.build([docs_dir])
    root = sql_kb.path
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    plan = sql_kb.delete(dry_run=True)
    assert not plan.deleted
    assert {"objects/parsed", "objects/chunks", "chunks.sqlite", "run_record.json"} <= set(plan.paths)
    assert not any(p.startswith("objects/raw") for p in plan.paths)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before
    assert (await sql_kb.query("whales", mode="sql_text_search")).results


async def test_delete_removes_derived_data_and_allows_a_rebuild(sql_kb, docs_dir):
    # availability is cached per state of the published assets: each build and delete must refresh it
    assert "sql_text_search" not in sql_kb.available_queries
    await sql_kb.build([docs_dir])
    assert "sql_text_search" in sql_kb.available_queries
    raw = sorted(p.name for p in (sql_kb.path / "objects" / "raw").iterdir())
    plan = sql_kb.delete()
    assert plan.deleted
    for relative in plan.paths:
        assert not (sql_kb.path / relative).exists(), relative
    assert sorted(p.name for p in (sql_kb.path / "objects" / "raw").iterdir()) == raw
    assert (sql_kb.path / "recipe.toml").exists()
    assert sql_kb.available_queries == []
    # raw inputs were kept, so the same knowledge base rebuilds without the source files
    report = await sql_kb.build()
    assert report.document_count == 3
    assert (await sql_kb.query("whales", mode="sql_text_search")).results


async def test_delete_one_document(sql_kb, docs_dir):
    await sql_kb.build([docs_dir])
    whale_id = next(d.id for d in sql_kb.documents.values() if d.name == "whales.md")
    await sql_kb.delete_documents([whale_id])
    assert whale_id not in sql_kb.documents
    assert not (await sql_kb.query("whales blowhole", mode="sql_text_search")).results
    assert (await sql_kb.query("fox", mode="sql_text_search")).results
    with pytest.raises(KnowledgeBaseError, match="Unknown document id"):
        await sql_kb.delete_documents(["nope"])


def test_object_keys_cannot_escape_the_folder(sql_kb):
    with pytest.raises(ValueError):
        sql_kb.objects.put_bytes("../outside.txt", b"x")
