"""Pages written by the language model through the scripted server: within the token budget, one call per new input,
none for unchanged or already-seen input, and an extractive page when the reply is unusable."""

from __future__ import annotations

import json

from heta_framework.kb import KnowledgeBase, SourceDocument
from heta_framework.testing.http import Reply, chat_completion_body
from heta_plugin_graph.testing import DOCUMENTS, scripted_language_models
from heta_plugin_wiki.testing import is_page_request, page_reply, recipe, wiki_issues
from heta_plugin_wiki.wiki import persist

OCEAN = DOCUMENTS[0]
OCEAN_CHANGED = SourceDocument(id="ocean", name="ocean.txt", text="Sea otters float in kelp forests of the Pacific Ocean.")


def stats(report):
    return next((s.stats for s in report.steps if s.name == "build_wiki_pages"), {})


def page_calls(server) -> list:
    return [r for r in server.requests_to("chat/completions") if is_page_request(r)]


def test_model_pages_cost_one_call_per_new_input_and_none_for_input_seen_before(tmp_path, wiki_registry, server):
    server.respond("chat/completions", page_reply)
    models = scripted_language_models(server)
    with KnowledgeBase.create(tmp_path / "kb", recipe(models, max_tokens=300, max_input_chars=50), registry=wiki_registry) as kb:
        first = kb.sync.build(list(DOCUMENTS))
        assert wiki_issues(first) == [] and stats(first)["llm_calls"] == len(DOCUMENTS) == len(page_calls(server))
        request = page_calls(server)[0].json
        assert request["max_tokens"] == 300
        shown = request["messages"][-1]["content"].split("\n\n", 1)[1]
        assert len(shown) <= 50  # the document is cut to max_input_chars
        objects = kb.get_component("stores.objects")
        page = persist.load_page(objects, "ocean")
        assert page.origin == "model" and page.title == "Page of ocean.txt" and page.document_id == "ocean"

        assert stats(kb.sync.build(list(DOCUMENTS))).get("llm_calls", 0) == 0  # nothing changed
        changed = kb.sync.build([OCEAN_CHANGED])
        assert stats(changed)["llm_calls"] == 1 and "Sea otters" in persist.load_page(objects, "ocean").sections[0].text
        back = kb.sync.build([OCEAN])  # the text it had before: the cache answers
        assert stats(back).get("llm_calls", 0) == 0 and stats(back)["llm_cache_hits"] == 1
        assert persist.load_page(objects, "ocean").sections[0].text.startswith("The Pacific Ocean")
        assert len(page_calls(server)) == len(DOCUMENTS) + 1
        assert kb.sync.query("sea otters", mode="wiki_full_text_search").results == ()  # the restored page replaced it


def test_an_unusable_reply_gives_an_extractive_page_and_an_issue(tmp_path, wiki_registry, server):
    def answer(request):
        if "ocean.txt" in request.json["messages"][-1]["content"]:
            return Reply(body=chat_completion_body(json.dumps({"title": "No sections", "summary": "", "sections": []})))
        return page_reply(request)

    server.respond("chat/completions", answer)
    with KnowledgeBase.create(tmp_path / "kb", recipe(scripted_language_models(server)), registry=wiki_registry) as kb:
        report = kb.sync.build(list(DOCUMENTS))
        assert [(i.code, i.subject.id) for i in wiki_issues(report)] == [("wiki_page_invalid_output", "ocean")]
        objects = kb.get_component("stores.objects")
        assert persist.load_page(objects, "ocean").origin == "extractive"
        assert persist.load_page(objects, "rivers").origin == "model"


def test_use_language_model_false_writes_extractive_pages_with_a_model_configured(tmp_path, wiki_registry, server):
    with KnowledgeBase.create(tmp_path / "kb", recipe(scripted_language_models(server), use_language_model=False),
                              registry=wiki_registry) as kb:
        kb.sync.build(list(DOCUMENTS))
        assert page_calls(server) == [] and persist.load_page(kb.get_component("stores.objects"), "space").origin == "extractive"


def test_page_calls_in_flight_stay_within_concurrency(tmp_path, wiki_registry, server):
    server.respond("chat/completions", lambda request: Reply(body=page_reply(request).body, delay=0.2))
    with KnowledgeBase.create(tmp_path / "kb", recipe(scripted_language_models(server), concurrency=2), registry=wiki_registry) as kb:
        kb.sync.build(list(DOCUMENTS))
    assert len(page_calls(server)) == len(DOCUMENTS) and server.max_in_flight == 2
