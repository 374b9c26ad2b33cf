from __future__ import annotations

import json

from heta_framework.kb import KnowledgeBase


async def test_build_and_query_real_documents(tmp_path, registry, sql_recipe, real_documents):
    DOCUMENTS = real_documents
    kb = KnowledgeBase.create(tmp_path / "kb", sql_recipe, registry=registry)
    report = await kb.build([DOCUMENTS])
    assert report.document_count == 52  # 48 articles, one Word document, one workbook, one slide deck, one image
    # core alone reads none of the last three: the workbook needs heta-plugin-sheets, the deck heta-plugin-office,
    # the image a vision model or OCR
    issues = sorted((issue.code, kb.document(issue.subject.id).name) for issue in report.issues)
    assert issues == [
        ("needs_vision_model", "mariana-trench.png"),
        ("unsupported_document_type", "planets.xlsx"),
        ("unsupported_document_type", "space-race.pptx"),
    ]
    assert kb.available_queries == ["sql_text_search"]
    response = await kb.query("who discovered penicillin", mode="sql_text_search", top_k=5)
    names = [r.metadata["name"] for r in response.results]
    assert any(name.startswith(("penicillin", "alexander-fleming")) for name in names[:3])
    top = response.results[0]
    assert top.metadata["source"].startswith(str(DOCUMENTS.resolve()))
    parsed = json.loads((tmp_path / "kb" / "objects" / "parsed" / f"{top.document_id}.json").read_text())
    assert parsed["text"][top.metadata["start"] : top.metadata["end"]] == top.text  # offsets are true


async def test_chinese_query_finds_chinese_chunk(sql_kb, docs_dir):
    await sql_kb.build([docs_dir])
    response = await sql_kb.query("上海", mode="sql_text_search")
    assert [r.metadata["name"] for r in response.results] == ["shanghai.txt"]


async def test_filters_are_parameterised_and_applied(sql_kb, docs_dir):
    await sql_kb.build([docs_dir])
    everything = await sql_kb.query("whales fox", mode="sql_text_search")
    assert {r.metadata["name"] for r in everything.results} == {"fox.txt", "whales.md"}
    only = await sql_kb.query("whales fox", mode="sql_text_search", filters={"name": "whales.md"})
    assert [r.metadata["name"] for r in only.results] == ["whales.md"]
    hostile = await sql_kb.query("fox", mode="sql_text_search", filters={"name') OR 1=1 --": "x"})
    assert hostile.results == ()
    injected = await sql_kb.query('fox" OR text MATCH "*', mode="sql_text_search")
    assert [r.metadata["name"] for r in injected.results] == ["fox.txt"]
