"""The hierarchy over a real nlp-built graph and ``lean_rag_query`` on it, offline: what is stored, where, and what
each level_mode returns; adding and deleting documents re-aggregates only what they touch."""

from __future__ import annotations

import pytest
from heta_framework.errors import HetaError
from heta_framework.kb import KnowledgeBase, SourceDocument
from heta_framework.plugins.registry import PluginRegistry
from heta_plugin_graph.testing import offline_models
from heta_plugin_leanrag.testing import MODE, hierarchy_of, recipe, step_stats

CURIE = SourceDocument(id="curie", name="curie.txt", text="Marie Curie discovered polonium in Paris. Marie Curie taught at the Sorbonne.")


def ask(kb, text: str, top_k: int = 10, **options):
    return kb.sync.query(text, mode=MODE, top_k=top_k, options=options)


def test_the_mode_appears_once_the_hierarchy_is_built(tmp_path, leanrag_registry, offline_kb):
    unbuilt = KnowledgeBase.create(tmp_path / "kb", recipe(offline_models()), registry=leanrag_registry)
    assert MODE not in unbuilt.available_queries
    unbuilt.close()
    assert MODE in offline_kb.available_queries
    asset = next(a for a in offline_kb.search_assets if a.kind == "leanrag_hierarchy")
    assert asset.store == "stores.objects" and asset.metadata["vectors"]["collection"] == "leanrag_aggregates"


def test_every_entity_climbs_to_one_root_through_clusters_of_two_or_more(offline_kb):
    stored = hierarchy_of(offline_kb)
    graph = offline_kb.get_component("stores.graph")
    entity_ids = set(graph.entity_ids())
    aggregates, parents = stored["aggregates"], stored["parents"]
    assert set(parents) == entity_ids  # every base entity has an aggregate above it
    roots = [a for a, record in aggregates.items() if record["parent"] is None]
    assert len(roots) == 1 and aggregates[roots[0]]["level"] == len(stored["layers"]) >= 2
    for aggregate_id, record in aggregates.items():
        assert len(record["members"]) >= 2 and record["origin"] == "extractive"
        below = [m for m in record["members"]]
        assert all((parents.get(m) if m in entity_ids else aggregates[m]["parent"]) == aggregate_id for m in below)
        assert record["documents"] and set(record["documents"]) <= {"ocean", "rivers", "space", "shanghai"}
    # an extractive aggregate is written from its most central members: its name names them
    level_one = [r for r in aggregates.values() if r["level"] == 1]
    names = {e.id: e.name for e in graph.get_entities(list(entity_ids)).values()}
    assert all(names[r["members"][0]] in r["name"] for r in level_one)


def test_relations_between_aggregates_rest_on_relations_crossing_their_clusters(offline_kb):
    stored = hierarchy_of(offline_kb)
    graph = offline_kb.get_component("stores.graph")
    assert stored["relations"]
    for record in stored["relations"].values():
        source, target = (stored["aggregates"][record[k]] for k in ("source", "target"))
        assert source["level"] == target["level"] == record["level"]
        for relation in graph.get_relations(record["base_relation_ids"]).values():
            leaves = [stored["parents"][relation.source_id], stored["parents"][relation.target_id]]
            assert leaves[0] != leaves[1]  # it crosses two clusters of level 1
        assert record["description"] and record["documents"]


def test_aggregates_stay_out_of_the_graph_and_its_modes(offline_kb):
    stored = hierarchy_of(offline_kb)
    graph = offline_kb.get_component("stores.graph")
    assert not set(stored["aggregates"]) & set(graph.entity_ids())
    entity_vectors = offline_kb.get_component("stores.vector").collection("graph_entities")
    assert not any(entity_vectors.contains(sorted(stored["aggregates"])))
    assert len(offline_kb.get_component("stores.vector").collection("leanrag_aggregates")) == len(stored["aggregates"])
    graph_search = offline_kb.sync.query("oceans and rivers", mode="heta_graph_search", top_k=20)
    assert {r.kind for r in graph_search.results} <= {"entity", "relation"}
    assert not any(r.id.removeprefix("entity:") in stored["aggregates"] for r in graph_search.results)


def test_level_modes_match_base_entities_aggregates_or_both(offline_kb):
    base = ask(offline_kb, "Albert Einstein relativity", level_mode=0)
    assert base.metadata["level_mode"] == 0
    assert {h["id"].split(":")[0] for h in base.metadata["hits"]} == {"entity"}
    assert base.results[0].kind == "entity" and base.results[0].document_id is None
    assert "space" in base.results[0].metadata["document_ids"] and base.results[0].evidence[0].document_id == "space"
    aggregates = ask(offline_kb, "Albert Einstein relativity", level_mode=1)
    assert {h["id"].split(":")[0] for h in aggregates.metadata["hits"]} == {"aggregate"}
    assert all(r.kind in ("aggregate", "aggregate_relation") for r in aggregates.results)
    assert "space" in aggregates.results[0].metadata["document_ids"]
    both = ask(offline_kb, "Albert Einstein relativity")
    assert {h["id"].split(":")[0] for h in both.metadata["hits"]} == {"entity", "aggregate"}
    scores = [r.score for r in both.results]
    assert scores == sorted(scores, reverse=True)


def test_chains_climb_only_to_the_lowest_common_ancestor(offline_kb):
    stored = hierarchy_of(offline_kb)
    response = ask(offline_kb, "Albert Einstein relativity Berlin", entity_top_k=2, level_mode=0)
    first, second = (h["id"].removeprefix("entity:") for h in response.metadata["hits"])
    parent = stored["parents"][first]
    assert stored["parents"][second] == parent  # two entities of one sentence share their cluster
    assert response.metadata["paths"] == [[f"entity:{first}", f"aggregate:{parent}", f"entity:{second}"]]
    kinds = {r.id: r.kind for r in response.results}
    assert kinds[f"aggregate:{parent}"] == "aggregate" and not any(r.metadata.get("level", 0) > 1 for r in response.results)
    assert any(k == "relation" for k in kinds.values())  # the relation between the two matched entities
    one = ask(offline_kb, "Albert Einstein relativity Berlin", entity_top_k=1, level_mode=0)
    assert len(one.metadata["paths"][0]) == stored["aggregates"][parent]["level"] + len(stored["layers"])  # the whole chain to the root


def test_a_path_between_two_clusters_carries_the_relation_between_their_aggregates(offline_kb):
    stored = hierarchy_of(offline_kb)
    relation_id, record = next(iter(stored["relations"].items()))
    names = [stored["aggregates"][record[k]]["name"] for k in ("source", "target")]
    response = ask(offline_kb, " ".join(names), level_mode=1, entity_top_k=4)
    relation = next(r for r in response.results if r.id == f"aggregate_relation:{relation_id}")
    assert relation.metadata["origin"] == "extractive" and relation.evidence
    assert relation.text.startswith(f"{names[0]} —related to→ {names[1]}") or relation.text.startswith(f"{names[1]} —related to→ {names[0]}")
    assert "reasoning_path_information:" in response.metadata["context"]


def test_results_carry_provenance_and_the_context(offline_kb):
    response = ask(offline_kb, "Which ocean do blue whales feed in?", top_k=20)
    for result in response.results:
        assert result.metadata["document_ids"] and result.sources == (MODE,)
        for chunk in result.evidence:
            assert chunk.kind == "chunk" and chunk.document_id in result.metadata["document_ids"]
            assert chunk.metadata["source"] and chunk.metadata["evidence_for"] == result.id
    context = response.metadata["context"]
    for section in ("entity_information:", "aggregation_entity_information:", "reasoning_path_information:", "text_units:"):
        assert section in context
    assert 0 < len(response.metadata["text_units"]) <= 5 and response.metadata["counts"]["hits"] == 10


def test_budgets_bound_what_is_returned(offline_kb):
    text = "Pacific Ocean whales coral reefs"
    assert len(ask(offline_kb, text, entity_top_k=1).metadata["hits"]) == 1
    assert not [r for r in ask(offline_kb, text, max_relations=0).results if "relation" in r.kind]
    assert all(not r.evidence for r in ask(offline_kb, text, max_evidence=0).results)
    assert all(len(r.evidence) <= 1 for r in ask(offline_kb, text, max_evidence=1).results)
    assert len(ask(offline_kb, text, text_unit_k=1).metadata["text_units"]) == 1
    assert len(ask(offline_kb, text, top_k=2).results) == 2


def test_filters_narrow_every_result_to_the_documents_named(offline_kb):
    response = ask(offline_kb, "oceans and rivers", top_k=30, level_mode=2)
    assert {d for r in response.results for d in r.metadata["document_ids"]} > {"rivers"}
    only = offline_kb.sync.query("oceans and rivers", mode=MODE, top_k=30, filters={"document_id": "rivers"})
    assert only.results
    for result in only.results:
        assert result.metadata["document_ids"] == ["rivers"]
        assert all(chunk.document_id == "rivers" for chunk in result.evidence)
        if result.kind == "aggregate" and result.metadata["origin"] == "rebuilt":
            assert "Great Barrier Reef" not in result.text  # what other documents say is not shown
    by_source = offline_kb.sync.query("oceans and rivers", mode=MODE, top_k=30, filters={"source": "ocean.txt"})
    assert by_source.results and all(chunk.document_id == "ocean" for r in by_source.results for chunk in r.evidence)
    assert all(r.evidence for r in by_source.results)


@pytest.mark.parametrize("options", [{"level_mode": 3}, {"level_mode": -1}, {"entity_top_k": 0}, {"max_relations": -1},
                                     {"text_unit_k": "5"}, {"levels": 1}])
def test_bad_options_are_refused(offline_kb, options):
    with pytest.raises(HetaError):
        ask(offline_kb, "oceans", **options)


def test_adding_a_document_reaggregates_only_the_clusters_it_reaches(kb_copy):
    kb = kb_copy()
    before = hierarchy_of(kb)
    report = kb.sync.build([CURIE])
    stats, after = step_stats(report), hierarchy_of(kb)
    assert report.issues == [] and stats["layers_clustered_afresh"] == 0
    assert 0 < stats["nodes_assigned"] and stats["clusters_kept"] > 0
    assert 0 < stats["aggregates_made"] < len(after["aggregates"])
    unchanged = set(before["aggregates"]) & set(after["aggregates"])
    assert unchanged and all(before["aggregates"][a]["content_hash"] == after["aggregates"][a]["content_hash"] for a in unchanged)
    graph = kb.get_component("stores.graph")
    sorbonne = next(e for e in graph.get_entities(graph.entity_ids()).values() if e.name == "Sorbonne")
    assert sorbonne.id in after["parents"] and "curie" in after["aggregates"][after["parents"][sorbonne.id]]["documents"]
    assert stats["aggregate_vectors_written"] == sum(1 for a, r in after["aggregates"].items()
                                                     if before["aggregates"].get(a, {}).get("text_hash") != r["text_hash"])
    response = ask(kb, "Who taught at the Sorbonne?")
    assert response.results[0].document_id is None and "curie" in response.results[0].metadata["document_ids"]
    again = kb.sync.build(rebuild=True)
    assert step_stats(again)["aggregates_made"] == 0 and hierarchy_of(kb) == after  # nothing changed: nothing made


def test_deleting_a_document_removes_what_rested_on_it(kb_copy):
    kb = kb_copy()
    before = hierarchy_of(kb)
    kb.sync.delete_documents(["space"])
    after = hierarchy_of(kb)
    assert not any("space" in r["documents"] for r in (*after["aggregates"].values(), *after["relations"].values()))
    graph = kb.get_component("stores.graph")
    assert set(after["parents"]) == set(graph.entity_ids())
    assert not any("Einstein" in r["name"] or "Einstein" in r["description"] for r in after["aggregates"].values())
    assert set(after["aggregates"]) != set(before["aggregates"])
    vectors = kb.get_component("stores.vector").collection("leanrag_aggregates")
    assert len(vectors) == len(after["aggregates"])
    response = ask(kb, "Albert Einstein relativity", top_k=20)
    assert not any("space" in r.metadata["document_ids"] for r in response.results)


def test_the_installed_entry_point_registers_the_step_and_the_mode():
    registry = PluginRegistry.from_entry_points(only=["leanrag"])
    assert registry.owner("steps", "leanrag_aggregate") == registry.owner("query_engines", MODE) == "heta-plugin-leanrag"
