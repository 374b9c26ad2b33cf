"""``console_graph`` on a graph too big to load: one hub with 12,000 relations (a 10k-article knowledge base's
"London"), read through a store that refuses the whole-graph reads. A page reads one entity's relations and
only the entities on that page, whoever asks, and hidden documents' facts stay out."""

from __future__ import annotations

import pytest
from heta_framework.contracts.access import AccessScope
from heta_framework.contracts.graph_store import StoredChunk, StoredEntity, StoredRelation
from heta_server.console_graph import fact_evidence, neighbourhood
from heta_server.errors import ApiError

SPOKES = 12_000


class HubGraph:
    """The four reads the explorer may make, counted; ``entity_ids`` (the whole graph) is refused."""

    def __init__(self) -> None:
        self.entities = {"hub": StoredEntity("hub", "London", "place", "A city.")}
        self.relations = {}
        self.rows: dict[str, list[tuple[str, str, str]]] = {"hub": [("c-hub", "doc-0", "London is a city.")]}
        for n in range(SPOKES):
            spoke, relation, document = f"e{n:05d}", f"r{n:05d}", f"doc-{n % 100}"
            self.entities[spoke] = StoredEntity(spoke, f"Place {n}", "place", f"Place {n} near London.")
            self.relations[relation] = StoredRelation(relation, "hub", spoke, "near", "near", f"Place {n} is near London.")
            # every 7th relation has a second chunk of evidence; the hidden document supports spokes 0-99 alone
            self.rows[spoke] = [(f"c-{n}", document, f"Place {n}.")]
            self.rows[relation] = [(f"c-{n}", document, f"Place {n} is near London.")]
            if n % 7 == 0:
                self.rows[relation].append((f"c-{n}-b", "doc-1", f"Place {n}, again."))
            if n < 100:
                self.rows[spoke] = [(f"c-{n}", "hidden", f"Place {n}, secretly.")]
                self.rows[relation] = [(f"c-{n}", "hidden", "A secret.")]
        self.asked_entities = 0

    def entity_ids(self):
        raise AssertionError("the explorer must not read the whole graph")

    def get_entities(self, ids):
        self.asked_entities += len(ids)
        return {i: self.entities[i] for i in ids if i in self.entities}

    def get_relations(self, ids):
        return {i: self.relations[i] for i in ids if i in self.relations}

    def relations_touching(self, entity_ids):
        assert list(entity_ids) == ["hub"]
        return list(self.relations.values())

    def evidence(self, kind, ids):
        return {i: self.rows[i] for i in ids if i in self.rows}

    def get_chunks(self, ids):
        return {i: StoredChunk(i, "doc-1", f"text of {i}") for i in ids}


@pytest.fixture(scope="module")
def graph() -> HubGraph:
    return HubGraph()


def test_a_page_of_a_huge_neighbourhood_reads_only_that_page(graph):
    visible = frozenset(f"doc-{n}" for n in range(100))
    scope = AccessScope(principals=frozenset({"reader"}), visible=visible)
    graph.asked_entities = 0
    page = neighbourhood(graph, "hub", scope, offset=0, limit=25)
    assert len(page["relations"]) == 25 and len(page["entities"]) == 25
    assert page["total"] == SPOKES - 100 and page["next_offset"] == 25
    assert graph.asked_entities == 1 + 25  # the centre, then the page's other ends: not 12,000
    assert all(r["evidence"] == 2 for r in page["relations"])  # best supported first
    last = neighbourhood(graph, "hub", scope, offset=SPOKES - 100 - 10, limit=25)
    assert len(last["relations"]) == 10 and last["next_offset"] is None


def test_facts_only_a_hidden_document_supports_are_absent(graph):
    scope = AccessScope(principals=frozenset({"reader"}), visible=frozenset(f"doc-{n}" for n in range(100)))
    every = neighbourhood(graph, "hub", scope, limit=SPOKES)
    ids = {r["target"] for r in every["relations"]}
    assert not ids & {f"e{n:05d}" for n in range(100)}
    assert "secret" not in str(every).lower()
    with pytest.raises(ApiError) as refused:
        neighbourhood(graph, "e00005", scope)
    assert refused.value.status == 404 and refused.value.code == "UnknownFact"
    with pytest.raises(ApiError):
        fact_evidence(graph, "relation", "r00005", scope, {})
    allowed = AccessScope(principals=frozenset({"lab"}), visible=None)
    assert neighbourhood(graph, "hub", allowed)["total"] == SPOKES
