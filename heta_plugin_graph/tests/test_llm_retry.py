"""Chunks whose extraction failed because the model was unreachable are retried by the next plain build, and only they."""

from __future__ import annotations

from collections import Counter

from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.testing.http import Reply, openai_error_body

from heta_plugin_graph import HetaGraphProcedure

ENTITIES = {"OpenAI": "organization", "San Francisco": "location", "Microsoft": "organization", "Seattle": "location"}
RELATIONS = [("OpenAI", "San Francisco", "located_in"), ("Microsoft", "Seattle", "located_in")]
DOCS = [
    SourceDocument(text="OpenAI is based in San Francisco.", id="sf", name="sf.txt"),
    SourceDocument(text="Microsoft is based in Seattle.", id="seattle", name="seattle.txt"),
]


async def test_a_plain_build_retries_exactly_the_failed_extractions(tmp_path, registry, server, make_models, world_factory, kind_of, text_of, base_steps):
    world = world_factory(ENTITIES, RELATIONS)
    down = {"on": True}

    def answer(request):
        # the server is "down" for the Seattle chunk only, during the first build
        if down["on"] and "Seattle" in text_of(request):
            return Reply(status=503, body=openai_error_body("server down"))
        return world(request)

    server.respond("chat/completions", answer)
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(models=make_models(server), steps=[*base_steps, HetaGraphProcedure()]), registry=registry)
    first = await kb.build(DOCS)
    failed = [i for i in first.issues if i.code == "llm_call_failed"]
    assert [i.subject.id for i in failed] == ["seattle-00000"] and failed[0].step == "extract_entities"
    assert kb.documents["seattle"].state == "pending" and kb.documents["sf"].state == "built"
    graph = kb.get_component("stores.graph")
    assert graph.entities_by_name(["OpenAI"]) and not graph.entities_by_name(["Microsoft"])

    down["on"] = False
    before = len(server.requests)
    second = await kb.build()  # a plain build: no new sources
    assert second.document_count == 1
    asked = Counter((kind_of(r), "Seattle" in text_of(r)) for r in server.requests[before:] if kind_of(r) in ("entities", "relations"))
    assert asked == {("entities", True): 1, ("relations", True): 1}  # nothing asked again for the chunk that succeeded
    assert not [i for i in second.issues if i.code == "llm_call_failed"]
    assert kb.documents["seattle"].state == "built"
    graph = kb.get_component("stores.graph")
    assert graph.entities_by_name(["Microsoft"]) and graph.entities_by_name(["OpenAI"])
    assert graph.counts()["relations"] == 2

    third = await kb.build()
    assert third.document_count == 0  # nothing left to retry
    kb.close()
