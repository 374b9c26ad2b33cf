"""``wiki_agent_search`` through the scripted server: the index, a page, a search and a raw source, all as the caller
may see them."""

from __future__ import annotations

import json

from heta_framework.testing.http import tool_messages
from heta_plugin_wiki.testing import PlanModel, tool_turns

MODE = "wiki_agent_search"


def test_the_model_reads_the_index_a_page_a_search_and_a_source(agent_kb, server):
    server.respond("chat/completions", PlanModel([
        [("read_wiki_index", {})],
        [("read_page", {"page_id": "wiki:ocean"}), ("search_wiki", {"query": "Amazon River", "mode": "wiki_full_text_search"})],
        [("read_source", {"document_id": "ocean"})],
    ]))
    response = agent_kb.sync.query("What lives in the Pacific Ocean?", mode=MODE)
    server.check()
    turns = tool_turns(server)
    assert {t["function"]["name"] for t in turns[0].json["tools"]} == {"read_wiki_index", "search_wiki", "read_page", "read_source"}
    index = json.loads(tool_messages(turns[1])[0]["content"])
    assert index["results"] == [] and "(wiki:ocean)" in index["note"] and "(wiki:shanghai)" in index["note"]
    page, search = (json.loads(m["content"]) for m in tool_messages(turns[2])[1:])
    assert [r["id"] for r in page["results"]][:1] == ["wiki:ocean#0"] and "wiki:rivers" in page["note"]
    assert search["results"][0]["document_id"] == "rivers"
    calls = response.metadata["tool_calls"]
    assert [c["tool"] for c in calls] == ["read_wiki_index", "read_page", "search_wiki", "read_source"]
    assert calls[0]["result_ids"] == []  # the index is read, not cited
    assert calls[3]["result_ids"] and all(i.startswith("ocean") for i in calls[3]["result_ids"])
    kinds = {r.kind for r in response.results}
    assert kinds == {"wiki_section", "chunk"} and response.issues == []


def test_a_filtered_caller_sees_only_their_pages_in_the_index_and_cannot_read_others(agent_kb, server):
    server.respond("chat/completions", PlanModel([
        [("read_wiki_index", {}), ("read_page", {"page_id": "wiki:ocean"}), ("read_source", {"document_id": "ocean"}),
         ("read_page", {"page_id": "wiki:rivers"})],
    ]))
    response = agent_kb.sync.query("rivers", mode=MODE, filters={"document_id": "rivers"})
    replies = [json.loads(m["content"]) for m in tool_messages(tool_turns(server)[1])]
    assert "(wiki:rivers)" in replies[0]["note"] and "wiki:ocean" not in replies[0]["note"]
    assert replies[1] == {"error": "no readable page 'wiki:ocean'"} and replies[2] == {"error": "no readable document 'ocean'"}
    assert "wiki:ocean" not in replies[3].get("note", "")  # the rivers page's link to ocean is not shown
    assert {r.document_id for r in response.results} == {"rivers"}
