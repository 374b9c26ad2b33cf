"""The pure parts, on made-up vectors and graphs: k-means, one layer's incremental clustering, summaries, bridges."""

from __future__ import annotations

import numpy as np
from heta_framework.kb.graph_store import StoredChunk, StoredEntity, StoredRelation
from heta_framework.kb.search import QueryRequest
from heta_plugin_graph.visibility import FactVisibility
from heta_plugin_graphrag.communities import Community
from heta_plugin_hirag import bridges, summaries
from heta_plugin_hirag.engines import HiRagLocalQueryEngine
from heta_plugin_hirag.hierarchy import Hierarchy, Layer, LayerSettings, Node, plan_layer
from heta_plugin_hirag.kmeans import kmeans
from heta_plugin_hirag.layered import LayeredGraph
from heta_plugin_hirag.options import HiRagOptions

SETTINGS = LayerSettings(cluster_size=4)


def blobs(sizes: dict[str, int], seed: int = 1) -> tuple[list[Node], np.ndarray]:
    """Nodes named ``<blob><i>`` around one random direction per blob."""
    rng = np.random.default_rng(seed)
    nodes, rows = [], []
    for blob, size in sizes.items():
        centre = rng.normal(size=16)
        for i in range(size):
            node_id = f"{blob}{i}"
            nodes.append(Node(node_id, node_id, "thing", "", node_id, frozenset({blob})))
            rows.append(centre * 10 + rng.normal(size=16))
    order = sorted(range(len(nodes)), key=lambda i: nodes[i].id)
    return [nodes[i] for i in order], np.stack([rows[i] for i in order])


def test_kmeans_is_deterministic_and_finds_the_blobs():
    nodes, vectors = blobs({"a": 4, "b": 4, "c": 4})
    labels = kmeans(vectors, 3, seed=7)
    assert labels == kmeans(vectors, 3, seed=7) and sorted(set(labels)) == [0, 1, 2]
    groups = {}
    for node, label in zip(nodes, labels):
        groups.setdefault(label, set()).add(node.id[0])
    assert all(len(blob) == 1 for blob in groups.values())
    assert kmeans(vectors[:1], 5, seed=7) == [0]


def test_a_layer_reclusters_only_the_clusters_a_change_touches():
    nodes, vectors = blobs({"a": 4, "b": 4, "c": 4})
    first = plan_layer(1, nodes, vectors, None, SETTINGS)
    assert sorted(sorted({m[0] for m in g}) for g in first) == [["a"], ["b"], ["c"]]
    previous = Layer(1, {n.id: n.text_hash for n in nodes}, tuple(_clusters(first)))
    assert plan_layer(1, nodes, vectors, previous, SETTINGS) == first  # nothing changed: the same clusters, not re-clustered

    # a new node near blob a, and b1's text changed: only a's and b's clusters are clustered again
    grown, grown_vectors = blobs({"a": 5, "b": 4, "c": 4})
    grown = [Node(n.id, n.name, n.type, "changed", "changed " + n.text, n.documents) if n.id == "b1" else n for n in grown]
    again = plan_layer(1, grown, grown_vectors, previous, SETTINGS)
    c_cluster = next(g for g in first if g[0].startswith("c"))
    assert c_cluster in again  # untouched: kept as it was
    assert sorted(m for g in again for m in g) == sorted(n.id for n in grown)

    # removals only shrink their cluster
    fewer = [n for n in nodes if n.id != "a0"]
    shrunk = plan_layer(1, fewer, np.stack([vectors[i] for i, n in enumerate(nodes) if n.id != "a0"]), previous, SETTINGS)
    assert ["a1", "a2", "a3"] in shrunk and len(shrunk) == 3


def _clusters(groups):
    from heta_plugin_hirag.hierarchy import Cluster, cluster_id

    return [Cluster(cluster_id(1, g), 1, tuple(g), "x") for g in groups]


def test_extractive_summary_is_named_after_its_most_central_members():
    members = [Node(f"e{i}", f"Name {i}", "place" if i else "person", f"Description {i}.", "", frozenset()) for i in range(5)]
    summary = summaries.extractive(members)
    assert summary["name"] == "Name 0, Name 1, Name 2 and 2 more"
    assert summary["type"] == "place" and "Description 0" in summary["description"] and summary["description"].startswith("A group of 5")
    upper = Node("hirag:x", summary["name"], "place", summary["description"], "", frozenset(), layer=1)
    assert summaries.extractive([upper, members[4]])["name"] == "Name 0, Name 4"  # a summary member by its own first member


def test_summary_answers_are_checked():
    check = summaries.checker([Node("e1", "Pacific Ocean", "place", "", "", frozenset())])
    assert check({"name": "Oceans", "type": "concept", "description": "Large bodies of water."}) is None
    assert "not one of the given" in check({"name": " pacific ocean ", "type": "place", "description": "x"})
    assert check({"name": "", "type": "t", "description": "d"}) == "'name' must be a non-empty string"
    assert check(["not", "an", "object"]) == "the answer must be a JSON object"
    assert check({"name": "x" * 201, "type": "t", "description": "d"}) == "'name' must be at most 200 characters"


class ChainGraph:
    """The GraphStore reads LayeredGraph uses, over a chain a-b-c-...: entity i relates to i+1, each from its own document."""

    def __init__(self, names: str):
        self.entities = {n: StoredEntity(n, n.upper(), "thing", "") for n in names}
        self.relations = {f"r{a}{b}": StoredRelation(f"r{a}{b}", a, b, "next", "next", f"{a} then {b}") for a, b in zip(names, names[1:])}

    def entity_ids(self):
        return sorted(self.entities)

    def get_entities(self, ids):
        return {i: self.entities[i] for i in ids if i in self.entities}

    def relations_touching(self, ids):
        wanted = set(ids)
        return [r for r in self.relations.values() if r.source_id in wanted or r.target_id in wanted]

    def get_relations(self, ids):
        return {i: self.relations[i] for i in ids if i in self.relations}

    def evidence(self, kind, ids):
        return {i: [(f"chunk-{i}", f"doc-{i}", "")] for i in ids}

    def get_chunks(self, ids):
        return {}


def community(cid: str, members: str, graph: ChainGraph) -> Community:
    inside = [r.id for r in graph.relations.values() if r.source_id in members and r.target_id in members]
    return Community(cid, 0, None, tuple(members), tuple(inside), cid)


def test_bridges_are_shortest_paths_to_the_nearest_communities_and_rest_on_every_document_they_touch():
    graph = ChainGraph("abcdefghij")
    view = LayeredGraph(graph, Hierarchy())
    communities = [community("c1", "abc", graph), community("c2", "def", graph), community("c3", "ghij", graph)]
    settings = bridges.BridgeSettings(key_entities=1, max_hops=4, max_bridges=5)
    change = bridges.build(view, communities, None, settings)
    data = change.data
    assert data["key_entities"]["c1"] == ["b"]  # the best connected member
    assert data["bridges"]["c1"]["c2"]["nodes"] == ["b", "c", "d", "e"] and data["bridges"]["c1"]["c2"]["edges"] == ["rbc", "rcd", "rde"]
    assert data["bridges"]["c1"]["c2"]["document_ids"] == ["doc-b", "doc-c", "doc-d", "doc-e", "doc-rbc", "doc-rcd", "doc-rde"]
    assert "c3" not in data["bridges"]["c1"]  # b to h is 6 hops: further than max_hops
    assert change.sources_recomputed == 3

    # the same graph again: every community's bridges are kept; a change at the far end re-searches only nearby ones
    assert bridges.build(view, communities, data, settings).sources_kept == 3
    longer = ChainGraph("abcdefghijk")
    moved = [community("c1", "abc", longer), community("c2", "def", longer), community("c3", "ghijk", longer)]
    change = bridges.build(LayeredGraph(longer, Hierarchy()), moved, data, settings)
    # k joins c3 (key entity h, 2 hops from the change): c3 is searched again; b and e are more than 4 hops away
    assert change.sources_kept == 2 and change.sources_recomputed == 1
    assert change.data["bridges"]["c1"] == data["bridges"]["c1"] and change.data["bridges"]["c2"] == data["bridges"]["c2"]
    assert change.data["bridges"]["c3"]["c2"]["nodes"] == ["h", "g", "f", "e"]


class _Chunks:
    """Only what the sources read of a graph store: chunk texts by id."""

    def get_chunks(self, ids):
        return {i: StoredChunk(id=i, document_id=f"doc-{i}", text=f"text of {i}") for i in ids}


def test_sources_rank_a_chunk_by_all_the_chosen_entities_it_supports():
    # upstream takes chunks entity by entity; a short generic name ranked first would put its chunk before
    # the one that is evidence of three of the query's entities
    entities = [{"entity_id": "generic", "layer": 0, "score": 0.62}, {"entity_id": "curie", "layer": 0, "score": 0.60},
                {"entity_id": "nobel", "layer": 0, "score": 0.58}, {"entity_id": "radium", "layer": 0, "score": 0.41},
                {"entity_id": "hirag-summary:x", "layer": 1, "score": 0.9}]
    evidence = {"generic": [("c-hub", "doc-c-hub", "")], "curie": [("c-gold", "d", ""), ("c-hub", "d", "")],
                "nobel": [("c-gold", "d", ""), ("c-gold", "d", "")], "radium": [("c-gold", "d", ""), ("c-other", "d", "")]}
    engine = HiRagLocalQueryEngine()
    results = engine._sources(_Chunks(), entities, evidence, ["c-report", "c-gold"], FactVisibility(),
                              QueryRequest(text="q", mode=engine.mode, top_k=10), HiRagOptions())
    assert [r.id for r in results] == ["c-gold", "c-hub", "c-other", "c-report"]  # the report's chunk after every entity's
    assert [r.metadata["supports"] for r in results] == [3, 2, 1, 0]
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
