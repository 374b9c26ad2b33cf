"""LLM extraction through the real openai client and a scripted server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.testing.http import Reply, chat_completion_body, openai_error_body

from heta_plugin_graph import (
    BuildGraph,
    DeduplicateEntities,
    DeduplicateRelations,
    ExtractEntities,
    ExtractRelations,
    HetaGraphProcedure,
)

ENTITIES = {"OpenAI": "organization", "San Francisco": "location", "Sam Altman": "person", "Microsoft": "organization"}
RELATIONS = [("OpenAI", "San Francisco", "located_in"), ("Sam Altman", "OpenAI", "leads"), ("Microsoft", "OpenAI", "invests_in")]
DOCS = [
    SourceDocument(text="OpenAI is based in San Francisco. Sam Altman leads OpenAI.", id="d1", name="d1.txt"),
    SourceDocument(text="Microsoft invests in OpenAI.", id="d2", name="d2.txt"),
]


def doc(i: int, text: str) -> SourceDocument:
    return SourceDocument(text=text, id=f"doc{i}", name=f"doc{i}.txt")


def stats_of(report) -> dict:
    return {s.name: s.stats for s in report.steps}


async def test_valid_extraction_end_to_end(tmp_path, registry, server, make_models, world_factory, kind_of, base_steps):
    server.respond("chat/completions", world_factory(ENTITIES, RELATIONS))
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(models=make_models(server), steps=[*base_steps, HetaGraphProcedure()]), registry=registry)
    report = await kb.build(DOCS)
    assert report.issues == []
    stats = stats_of(report)
    chunks = stats["split_documents"]["chunks"]
    assert stats["extract_entities"]["llm_calls"] == chunks
    assert stats["extract_relations"]["llm_calls"] <= chunks
    assert stats["extract_entities"]["prompt_tokens"] == 50 * chunks and stats["extract_entities"]["completion_tokens"] == 20 * chunks
    extraction_requests = [r for r in server.requests if kind_of(r) in ("entities", "relations")]
    assert len(extraction_requests) <= 2 * chunks
    assert server.requests[0].json["model"] == "test-model"

    graph = kb.get_component("stores.graph")
    openai = graph.entities_by_name(["openai"])["openai"][0]
    assert openai.type == "organization"
    touching = {(r.source_id, r.type, r.target_id) for r in graph.relations_touching([openai.id])}
    assert len(touching) == 3
    assert {e[1] for e in graph.evidence("entity", [openai.id])[openai.id]} == {"d1", "d2"}

    response = await kb.query("Where is OpenAI based?", mode="heta_graph_search", top_k=5)
    relation = next(r for r in response.results if r.kind == "relation" and r.metadata["type"] == "located_in")
    assert relation.metadata["source"] == "OpenAI" and relation.metadata["target"] == "San Francisco"
    assert relation.evidence[0].id == "d1-00000" and relation.evidence[0].metadata["document_id"] == "d1"

    # deletion: the orphaned facts go, shared ones stay, and the language model is not asked anything
    microsoft = graph.entities_by_name(["Microsoft"])["microsoft"][0].id
    entity_vectors = kb.get_component("stores.vector").collection("graph_entities")
    assert entity_vectors.contains([microsoft]) == [True]
    before = len(server.requests)
    await kb.delete_documents(["d2"])
    assert len(server.requests) == before
    assert graph.entities_by_name(["Microsoft"]) == {}
    assert graph.entities_by_name(["OpenAI"])
    assert {e[1] for e in graph.evidence("entity", [openai.id])[openai.id]} == {"d1"}
    assert entity_vectors.contains([microsoft, openai.id]) == [False, True]
    kb.close()


async def test_invalid_answer_is_retried_with_the_validation_error(tmp_path, registry, server, make_models, world_factory, kind_of, base_steps):
    server.enqueue("chat/completions", body=chat_completion_body(json.dumps({"entities": [{"name": "", "type": "x", "description": ""}]})))
    server.respond("chat/completions", world_factory(ENTITIES, RELATIONS))
    recipe = Recipe(models=make_models(server), steps=[*base_steps, ExtractEntities(concurrency=1), ExtractRelations(), BuildGraph()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    report = await kb.build(DOCS[:1])
    assert report.issues == []
    entity_requests = [r for r in server.requests if kind_of(r) == "entities"]
    assert len(entity_requests) == 2
    retry_prompt = entity_requests[1].json["messages"]
    assert "entities[0].name must be a non-empty string" in retry_prompt[-1]["content"] or any(
        "entities[0].name must be a non-empty string" in m["content"] for m in retry_prompt
    )
    assert stats_of(report)["extract_entities"]["llm_calls"] == 2
    assert kb.get_component("stores.graph").entities_by_name(["OpenAI"])
    kb.close()


async def test_always_invalid_output_becomes_an_issue_and_the_build_goes_on(tmp_path, registry, server, make_models, world_factory, kind_of, text_of, base_steps):
    world = world_factory(ENTITIES, RELATIONS)

    def answer(request):
        if kind_of(request) == "entities" and "BROKEN" in text_of(request):
            return chat_completion_body("this is not JSON")
        return world(request)

    server.respond("chat/completions", answer)
    recipe = Recipe(models=make_models(server), steps=[*base_steps, HetaGraphProcedure()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    report = await kb.build([*DOCS, SourceDocument(text="BROKEN chunk about OpenAI.", id="bad", name="bad.txt")])
    issues = [i for i in report.issues if i.code == "invalid_llm_output"]
    assert len(issues) == 1
    issue = issues[0]
    assert issue.step == "extract_entities" and issue.subject.type == "chunk" and issue.subject.id == "bad-00000"
    assert issue.resolution.action == "skipped_chunk" and issue.details["attempt_count"] == "3"
    assert sum(1 for r in server.requests if kind_of(r) == "entities" and "BROKEN" in text_of(r)) == 3
    assert "heta_graph_search" in kb.available_queries
    assert kb.get_component("stores.graph").entities_by_name(["Sam Altman"])
    kb.close()


async def test_rate_limit_and_time_out_are_retried(tmp_path, registry, server, make_models, world_factory, kind_of, base_steps):
    server.enqueue("chat/completions", status=429, body=openai_error_body("slow down"), headers={"Retry-After": "0"})
    server.enqueue("chat/completions", body=chat_completion_body("{}"), delay=1.5)  # longer than the client's time-out
    server.respond("chat/completions", world_factory(ENTITIES, RELATIONS))
    recipe = Recipe(models=make_models(server, timeout=0.5), steps=[*base_steps, ExtractEntities(concurrency=1), ExtractRelations(concurrency=1), BuildGraph()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    report = await kb.build(DOCS[:1])
    assert report.issues == []
    assert sum(1 for r in server.requests if kind_of(r) == "entities") == 3
    assert kb.get_component("stores.graph").entities_by_name(["OpenAI"])
    kb.close()


async def test_server_errors_after_retries_become_issues(tmp_path, registry, server, make_models, world_factory, kind_of, base_steps):
    world = world_factory(ENTITIES, RELATIONS)
    server.respond("chat/completions", lambda r: Reply(status=503, body=openai_error_body("down")) if kind_of(r) == "relations" else world(r))
    recipe = Recipe(models=make_models(server), steps=[*base_steps, HetaGraphProcedure()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    report = await kb.build(DOCS)
    failed = [i for i in report.issues if i.code == "llm_call_failed"]
    assert failed and all(i.step == "extract_relations" for i in failed)
    assert "sk-test" not in json.dumps([i.message for i in report.issues])
    graph = kb.get_component("stores.graph")
    assert graph.entities_by_name(["OpenAI"]) and graph.counts()["relations"] == 0
    kb.close()


async def test_concurrency_option_bounds_requests_in_flight(tmp_path, registry, server, make_models, world_factory, base_steps):
    world = world_factory(ENTITIES, RELATIONS)
    server.respond("chat/completions", lambda r: Reply(body=world(r), delay=0.15))
    documents = [doc(i, f"Report {i}: OpenAI and Microsoft met in San Francisco.") for i in range(8)]
    recipe = Recipe(models=make_models(server), steps=[*base_steps, HetaGraphProcedure(concurrency=3)])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    report = await kb.build(documents)
    assert report.issues == []
    assert server.max_in_flight == 3
    assert stats_of(report)["extract_entities"]["llm_peak_concurrency"] == 3
    kb.close()


async def test_interrupted_build_resumes_from_the_cache(tmp_path, registry, server, make_models, world_factory, kind_of, text_of, base_steps):
    world = world_factory(ENTITIES, RELATIONS)
    server.respond("chat/completions", lambda r: Reply(body=world(r), delay=0.05))
    documents = [doc(i, f"Note {i}: OpenAI is based in San Francisco.") for i in range(6)]
    recipe = Recipe(models=make_models(server), steps=[*base_steps, HetaGraphProcedure(concurrency=2)])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    build = asyncio.create_task(kb.build(documents))
    while len(server.requests) < 3:
        await asyncio.sleep(0.01)
    build.cancel()
    try:
        await build
    except asyncio.CancelledError:
        pass
    kb.close()
    asked_before = [(kind_of(r), text_of(r)) for r in server.requests]

    resumed = KnowledgeBase.load(tmp_path / "kb", registry=registry, models=make_models(server))
    report = await resumed.build()
    asked = [(kind_of(r), text_of(r)) for r in server.requests]
    repeated = [key for key, count in Counter(asked).items() if count > 1]
    # the call in flight at the interruption was awaited and cached: nothing is asked twice
    assert repeated == []
    assert stats_of(report)["extract_entities"]["cache_hits"] == len(asked_before)
    assert report.issues == []

    before = len(server.requests)
    again = await resumed.build(rebuild=True)
    assert len(server.requests) == before  # zero calls: everything comes from the cache
    assert stats_of(again)["extract_entities"]["cache_hits"] == 6
    assert "llm_calls" not in stats_of(again)["extract_entities"]
    resumed.close()


async def test_dedup_merges_width_and_case_variants_and_rewrites_relations(tmp_path, registry, server, make_models, world_factory, base_steps):
    entities = {"ＯｐｅｎＡＩ": "Organization", "openai": "organization", "OpenAI Inc": "organization", "Microsoft": "organization"}
    relations = [("ＯｐｅｎＡＩ", "Microsoft", "partner_of"), ("OpenAI Inc", "Microsoft", "partner_of"), ("openai", "Microsoft", "partner_of")]
    server.respond("chat/completions", world_factory(entities, relations))
    documents = [
        doc(1, "ＯｐｅｎＡＩ works with Microsoft."),
        doc(2, "openai and Microsoft signed a deal."),
        doc(3, "OpenAI Inc partners with Microsoft."),
    ]
    steps = [*base_steps, ExtractEntities(), ExtractRelations(), DeduplicateEntities(similarity_threshold=0.75), DeduplicateRelations(), BuildGraph()]
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(models=make_models(server), steps=steps), registry=registry)
    report = await kb.build(documents)
    assert report.issues == []
    stats = stats_of(report)["deduplicate_entities"]
    assert stats["entities_in"] == 3  # exact: the two spellings of OpenAI are one record already
    assert stats["entities_merged"] == 1 and stats["entities_out"] == 2
    graph = kb.get_component("stores.graph")
    assert graph.counts()["entities"] == 2
    merged = graph.entities_by_name(["openai"]).get("openai") or graph.entities_by_name(["OpenAI Inc"])["openai inc"]
    evidence = graph.evidence("entity", [merged[0].id])[merged[0].id]
    assert {row[1] for row in evidence} == {"doc1", "doc2", "doc3"}
    assert graph.counts()["relations"] == 1
    kb.close()


async def test_unusable_dedup_answer_keeps_original_records(tmp_path, registry, server, make_models, world_factory, kind_of, base_steps):
    world = world_factory({"OpenAI": "organization", "OpenAI Inc": "organization"}, [])
    server.respond("chat/completions", lambda r: chat_completion_body('{"groups": "no"}') if kind_of(r) == "groups" else world(r))
    steps = [*base_steps, ExtractEntities(), ExtractRelations(), DeduplicateEntities(similarity_threshold=0.75), DeduplicateRelations(), BuildGraph()]
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(models=make_models(server), steps=steps), registry=registry)
    report = await kb.build([doc(1, "OpenAI hired people."), doc(2, "OpenAI Inc hired people.")])
    issues = [i for i in report.issues if i.step == "deduplicate_entities"]
    assert len(issues) == 1
    assert issues[0].code == "invalid_llm_output" and issues[0].subject.type == "dedup_group"
    assert issues[0].resolution.action == "kept_original_records"
    assert kb.get_component("stores.graph").counts()["entities"] == 2
    kb.close()


async def test_incremental_merge_of_a_second_document_set(tmp_path, registry, server, make_models, world_factory, kind_of, text_of, base_steps):
    world = world_factory({"OpenAI Inc": "organization", "OpenAI": "organization", "San Francisco": "location", "London": "location"},
                          [("OpenAI Inc", "San Francisco", "located_in"), ("OpenAI", "London", "has_office_in")])
    server.respond("chat/completions", world)
    recipe = Recipe(models=make_models(server), steps=[*base_steps, HetaGraphProcedure(mode="merge")])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    await kb.build([doc(1, "OpenAI Inc builds models in San Francisco.")])
    graph = kb.get_component("stores.graph")
    vectors = kb.get_component("stores.vector").collection("graph_entities")
    stored = graph.entities_by_name(["OpenAI Inc"])["openai inc"][0]
    stored_vector_meta = vectors.get_metadata([stored.id])[stored.id]
    first_requests = len(server.requests)

    report = await kb.build([doc(2, "OpenAI opened an office in London.")])
    second = server.requests[first_requests:]
    assert all("San Francisco" not in text_of(r) for r in second if kind_of(r) in ("entities", "relations"))
    assert any(kind_of(r) == "decisions" for r in second)
    merge = stats_of(report)["merge_graph_into_store"]
    assert merge["entities_matched_to_store"] == 1
    assert graph.entities_by_name(["OpenAI"]) == {}  # folded into the stored "OpenAI Inc"
    assert {row[1] for row in graph.evidence("entity", [stored.id])[stored.id]} == {"doc1", "doc2"}
    assert graph.counts()["entities"] == 3
    assert vectors.get_metadata([stored.id])[stored.id] == stored_vector_meta
    # only what is new was embedded: London (and "OpenAI" once, to find its stored twin) and the new relation
    assert merge["embedded_texts"] == 2 + merge.get("relations_embedded", 0)
    london = graph.entities_by_name(["London"])["london"][0]
    office = [r for r in graph.relations_touching([london.id])]
    assert office and office[0].source_id == stored.id
    kb.close()


async def test_chinese_chunks_with_the_language_model(tmp_path, registry, server, make_models, world_factory, kind_of, text_of, base_steps):
    world = world_factory({"上海市": "地点", "长江": "河流", "ＯｐｅｎＡＩ": "组织"}, [("长江", "上海市", "流经")])
    server.respond("chat/completions", world)
    recipe = Recipe(models=make_models(server), steps=[*base_steps, HetaGraphProcedure()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    report = await kb.build([SourceDocument(text="长江流经上海市，最终注入东海。ＯｐｅｎＡＩ在上海没有办公室。", id="zh", name="zh.txt")])
    # MiniLM is an English model: the build says so (the graph's facts are what this test is about)
    assert [i.code for i in report.issues] == ["embedding_model_language"]
    extraction = [r for r in server.requests if kind_of(r) == "entities"]
    assert "长江流经上海市" in text_of(extraction[0])
    assert "原文的语言" in extraction[0].json["messages"][0]["content"]  # the prompt asks for the text's language
    graph = kb.get_component("stores.graph")
    assert set(graph.entities_by_name(["上海市", "长江", "openai"])) == {"上海市", "长江", "openai"}
    response = await kb.query("长江流经哪里？", mode="heta_graph_search", top_k=5)
    relation = next(r for r in response.results if r.kind == "relation")
    assert relation.metadata["source"] == "长江" and relation.metadata["target"] == "上海市"
    assert relation.evidence[0].metadata["document_id"] == "zh"
    kb.close()


async def test_dedup_call_failing_after_retries_keeps_original_records(tmp_path, registry, server, make_models, world_factory, kind_of, base_steps):
    world = world_factory({"OpenAI": "organization", "OpenAI Inc": "organization"}, [])
    server.respond("chat/completions", lambda r: Reply(status=503, body=openai_error_body("down")) if kind_of(r) == "groups" else world(r))
    steps = [*base_steps, ExtractEntities(), ExtractRelations(), DeduplicateEntities(similarity_threshold=0.75), DeduplicateRelations(), BuildGraph()]
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(models=make_models(server), steps=steps), registry=registry)
    report = await kb.build([doc(1, "OpenAI hired people."), doc(2, "OpenAI Inc hired people.")])
    issues = [i for i in report.issues if i.step == "deduplicate_entities"]
    assert [i.code for i in issues] == ["llm_call_failed"] and issues[0].subject.type == "dedup_group"
    assert issues[0].resolution.action == "kept_original_records"
    assert sum(1 for r in server.requests if kind_of(r) == "groups") > 1  # retried before giving up
    assert kb.get_component("stores.graph").counts()["entities"] == 2  # the build went on with both records
    kb.close()


async def test_merge_decision_rate_limit_is_retried(tmp_path, registry, server, make_models, world_factory, kind_of, base_steps):
    world = world_factory({"OpenAI Inc": "organization", "OpenAI": "organization"}, [])
    limited: list[int] = []

    def answer(request):
        if kind_of(request) == "decisions" and not limited:
            limited.append(1)
            return Reply(status=429, body=openai_error_body("slow down"), headers={"Retry-After": "0"})
        return world(request)

    server.respond("chat/completions", answer)
    recipe = Recipe(models=make_models(server), steps=[*base_steps, HetaGraphProcedure(mode="merge")])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    await kb.build([doc(1, "OpenAI Inc builds models.")])
    report = await kb.build([doc(2, "OpenAI opened an office.")])
    assert report.issues == [] and limited == [1]
    assert sum(1 for r in server.requests if kind_of(r) == "decisions") == 2  # the 429, then the answer
    assert stats_of(report)["merge_graph_into_store"]["entities_matched_to_store"] == 1
    kb.close()
