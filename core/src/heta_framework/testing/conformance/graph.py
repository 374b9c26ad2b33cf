"""``GraphStoreSuite``: what every ``stores.graph`` backend (``GraphStore``) must do."""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import pytest

from heta_framework.contracts.graph_links import chunk_links_from_reads
from heta_framework.contracts.stores import ChunkLink, GraphStore, RemovedFacts, StoredChunk, StoredEntity, StoredRelation
from heta_framework.testing.conformance.base import StoreSuiteBase, assert_relative_inside, run_in_threads
from heta_framework.testing.conformance.samples import HOSTILE_STRINGS, UNICODE_TEXTS

# --- a draft as the suite writes it: any object of this shape satisfies GraphFacts ---------


@attrs.frozen
class Evidence:
    chunk_id: str
    document_id: str
    description: str = ""


@attrs.frozen
class Entity:
    id: str
    name: str
    type: str = "thing"
    description: str = ""
    attributes: Mapping[str, Any] = attrs.field(factory=dict)
    aliases: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()


@attrs.frozen
class Relation:
    id: str
    source_id: str
    target_id: str
    type: str = "related_to"
    name: str = "related to"
    description: str = ""
    evidence: tuple[Evidence, ...] = ()


@attrs.frozen
class Draft:
    entities: Sequence[Entity] = ()
    relations: Sequence[Relation] = ()


def evidence(*chunk_ids: str, description: str = "") -> tuple[Evidence, ...]:
    """Evidence from chunks named ``<document>:<n>``."""
    return tuple(Evidence(chunk_id, chunk_id.split(":")[0], description) for chunk_id in chunk_ids)


def chunks_for(draft: Draft) -> list[StoredChunk]:
    ids = {e.chunk_id: e.document_id for fact in (*draft.entities, *draft.relations) for e in fact.evidence}
    return [StoredChunk(chunk_id, document_id, f"text of {chunk_id}", {"source": document_id}) for chunk_id, document_id in ids.items()]


def small_graph() -> Draft:
    """alice -knows-> bob -works_at-> acme; alice in doc a, bob in a and b, acme in b."""
    return Draft(
        entities=(
            Entity("alice", "Alice", "person", "Alice is a person.", {"age": 30}, ("Ally",), evidence("a:1", description="Alice, from a.")),
            Entity("bob", "Bob", "person", "Bob is a person.", evidence=evidence("a:1", "b:1")),
            Entity("acme", "Acme", "company", "Acme makes things.", evidence=evidence("b:1", description="Acme, from b.")),
        ),
        relations=(
            Relation("alice-bob", "alice", "bob", "knows", "knows", "Alice knows Bob.", evidence("a:1")),
            Relation("bob-acme", "bob", "acme", "works_at", "works at", "Bob works at Acme.", evidence("b:1")),
        ),
    )


def tangled_graph(seed: int = 7) -> Draft:
    """Entities with plain, hostile and non-Latin ids, related at random, with evidence in 15 chunks of 5
    documents: many ties in link counts and several paths to a chunk (``chunk_links``' ordering rules)."""
    rng = random.Random(seed)
    ids = [f"e{i:02d}" for i in range(24)] + list(HOSTILE_STRINGS) + list(UNICODE_TEXTS.values())
    chunks = [Evidence(f"d{d} chunk {c}", f"d{d}") for d in range(5) for c in range(3)]
    entities = tuple(Entity(i, f"name {n}", evidence=tuple(rng.sample(chunks, rng.randint(1, 3)))) for n, i in enumerate(ids))
    relations = tuple(
        Relation(f"r{n:03d} {source}", source, target, evidence=tuple(rng.sample(chunks, rng.randint(1, 2))))
        for n in range(70) for source, target in [rng.sample(ids, 2)]
    )
    return Draft(entities, relations)


class GraphStoreSuite(StoreSuiteBase):
    """Subclass it and provide ``store_factory``: ``root -> store`` (the same store again for the same root)."""

    def write(self, store: Any, draft: Draft, **options: Any) -> RemovedFacts:
        return store.write_draft(draft, chunks_for(draft), **options)

    # --- shape -------------------------------------------------------------------------

    def test_satisfies_the_protocol(self, store, kb_root):
        assert isinstance(store, GraphStore)
        self.write(store, small_graph())
        store.flush()
        assert_relative_inside(store.relative_paths(), kb_root, server_backed=self.server_backed)

    def test_empty_store(self, store):
        assert store.get_entities(["alice"]) == {}
        assert store.get_relations(["alice-bob"]) == {}
        assert store.relations_touching(["alice"]) == []
        assert store.evidence("entity", ["alice"]) == {}
        assert store.get_chunks(["a:1"]) == {}
        assert store.counts() == {"entities": 0, "relations": 0, "evidence": 0, "chunks": 0}
        assert store.fact_types() == {"entity": {}, "relation": {}}
        assert store.entity_ids() == []
        assert store.delete_documents(["a"]) == RemovedFacts()

    # --- writing and reading -------------------------------------------------------------

    def test_write_then_read_every_kind(self, store):
        assert self.write(store, small_graph()) == RemovedFacts()
        alice = store.get_entities(["alice", "missing"])
        assert alice == {"alice": StoredEntity("alice", "Alice", "person", "Alice is a person.", {"age": 30}, ("Ally",))}
        assert alice["alice"].attributes == {"age": 30}
        assert store.get_relations(["bob-acme"]) == {"bob-acme": StoredRelation("bob-acme", "bob", "acme", "works_at", "works at", "Bob works at Acme.")}
        assert sorted(r.id for r in store.relations_touching(["bob"])) == ["alice-bob", "bob-acme"]
        assert [r.id for r in store.relations_touching(["alice", "alice"])] == ["alice-bob"]
        assert store.evidence("entity", ["bob"]) == {"bob": [("a:1", "a", ""), ("b:1", "b", "")]}
        assert store.evidence("relation", ["alice-bob"]) == {"alice-bob": [("a:1", "a", "")]}
        assert store.evidence("relation", ["bob"]) == {}  # kinds are separate
        assert store.get_chunks(["a:1"]) == {"a:1": StoredChunk("a:1", "a", "text of a:1", {"source": "a"})}
        assert store.get_chunks(["a:1"])["a:1"].metadata == {"source": "a"}
        assert store.counts() == {"entities": 3, "relations": 2, "evidence": 6, "chunks": 2}
        assert store.fact_types() == {"entity": {"company": 1, "person": 2}, "relation": {"knows": 1, "works_at": 1}}
        assert store.entity_ids() == ["acme", "alice", "bob"]
        store.delete_documents(["b"])  # acme and bob-acme lose their only evidence: their types go with them
        assert store.fact_types() == {"entity": {"person": 2}, "relation": {"knows": 1}}
        assert store.entity_ids() == ["alice", "bob"]

    def test_a_stored_entity_keeps_its_name_and_description(self, store):
        self.write(store, small_graph())
        again = Draft(entities=(Entity("alice", "ALICE", "person", "Another description.", evidence=evidence("c:1")),
                                Entity("dora", "Dora", "person", "", evidence=evidence("c:1"))))
        self.write(store, again)
        stored = store.get_entities(["alice"])["alice"]
        assert (stored.name, stored.description) == ("Alice", "Alice is a person.")
        assert [row[0] for row in store.evidence("entity", ["alice"])["alice"]] == ["a:1", "c:1"]
        self.write(store, Draft(entities=(Entity("dora", "Dora", "person", "Dora, described later.", evidence=evidence("c:2")),)))
        assert store.get_entities(["dora"])["dora"].description == "Dora, described later."

    def test_replace_documents_drops_their_old_evidence_first(self, store):
        self.write(store, small_graph())
        # document a now says only that alice exists: bob keeps b's evidence, alice-bob loses its only one
        removed = self.write(store, Draft(entities=(Entity("alice", "Alice", "person", evidence=evidence("a:2")),)), replace_documents=["a"])
        assert removed.relation_ids == ("alice-bob",) and removed.entity_ids == ()
        assert store.evidence("entity", ["bob"]) == {"bob": [("b:1", "b", "")]}
        assert store.get_relations(["alice-bob"]) == {}
        assert store.evidence("relation", ["alice-bob"]) == {}

    def test_delete_documents_removes_unsupported_facts(self, store):
        self.write(store, small_graph())
        reported: list[RemovedFacts] = []
        removed = store.delete_documents(["b"], on_orphans=reported.append)
        assert set(removed.entity_ids) == {"acme"}
        assert set(removed.relation_ids) == {"bob-acme"}  # its evidence and an endpoint went
        assert removed.evidence_rows == 3
        assert reported == [removed]
        assert set(store.get_entities(["alice", "bob", "acme"])) == {"alice", "bob"}
        assert store.get_chunks(["b:1", "a:1"]).keys() == {"a:1"}
        assert store.counts() == {"entities": 2, "relations": 1, "evidence": 3, "chunks": 1}

    def test_a_relation_goes_with_either_endpoint(self, store):
        draft = Draft(
            entities=(Entity("x", "X", evidence=evidence("a:1")), Entity("y", "Y", evidence=evidence("b:1"))),
            relations=(Relation("x-y", "x", "y", evidence=evidence("a:1", "b:1")),),
        )
        self.write(store, draft)
        removed = store.delete_documents(["b"])
        assert removed.entity_ids == ("y",) and removed.relation_ids == ("x-y",)
        assert store.relations_touching(["x"]) == []

    def test_a_surviving_entity_takes_a_description_from_remaining_evidence(self, store):
        draft = Draft(entities=(Entity("e", "E", description="From a.", evidence=(
            Evidence("a:1", "a", "From a."), Evidence("b:1", "b", "Short b."), Evidence("c:1", "c", "The longest, from c."))),))
        self.write(store, draft)
        store.delete_documents(["a"])
        assert store.get_entities(["e"])["e"].description == "The longest, from c."

    def test_a_failing_orphan_handler_rolls_everything_back(self, store):
        self.write(store, small_graph())
        before = store.counts()

        def refuse(removed: RemovedFacts) -> None:
            raise RuntimeError("the vector store could not delete")

        with pytest.raises(RuntimeError):
            store.delete_documents(["b"], on_orphans=refuse)
        assert store.counts() == before
        assert set(store.get_entities(["acme"])) == {"acme"}
        with pytest.raises(RuntimeError):
            self.write(store, Draft(entities=(Entity("new", "New", evidence=evidence("c:1")),)), replace_documents=["b"], on_orphans=refuse)
        assert store.counts() == before and store.get_entities(["new"]) == {}

    # --- hostile and unicode input --------------------------------------------------------

    def test_hostile_ids_and_text_are_data(self, store):
        entities = tuple(Entity(f"id {s}", s, s, s, {s: s}, (s,), (Evidence(f"{s}:1", s, s),)) for s in HOSTILE_STRINGS)
        relations = tuple(
            Relation(f"rel {a.id}", a.id, b.id, "t", a.name, b.name, a.evidence) for a, b in itertools.pairwise(entities)
        )
        self.write(store, Draft(entities, relations))
        found = store.get_entities([e.id for e in entities])
        for entity in entities:
            assert found[entity.id] == StoredEntity(entity.id, entity.name, entity.type, entity.description, entity.attributes, entity.aliases)
            assert found[entity.id].attributes == dict(entity.attributes)
        assert len(store.get_relations([r.id for r in relations])) == len(relations)
        assert store.evidence("entity", [entities[0].id]) == {entities[0].id: [(f"{HOSTILE_STRINGS[0]}:1", HOSTILE_STRINGS[0], HOSTILE_STRINGS[0])]}
        store.delete_documents([HOSTILE_STRINGS[0]])
        assert entities[0].id not in store.get_entities([entities[0].id])
        assert store.counts()["entities"] == len(entities) - 1

    def test_unicode_and_cjk(self, store):
        entities = tuple(Entity(f"{lang}-e", text, "地名", text, {"语言": lang}, evidence=evidence(f"{lang}:1")) for lang, text in UNICODE_TEXTS.items())
        self.write(store, Draft(entities))
        stored = store.get_entities([e.id for e in entities])
        assert {e.name for e in stored.values()} == set(UNICODE_TEXTS.values())
        assert stored["zh-e"].attributes == {"语言": "zh"} and stored["zh-e"].type == "地名"

    # --- persistence, size, threads --------------------------------------------------------

    def test_persists_across_reopen(self, store, reopen):
        self.write(store, small_graph())
        store.delete_documents(["b"])
        before = (store.counts(), store.get_entities(["alice", "bob"]), store.evidence("entity", ["bob"]))
        store = reopen(store)
        assert (store.counts(), store.get_entities(["alice", "bob"]), store.evidence("entity", ["bob"])) == before

    def test_large_batch(self, store):
        n = 3000
        entities = tuple(Entity(f"e{i}", f"Entity {i}", evidence=evidence(f"d{i % 30}:{i % 7}")) for i in range(n))
        relations = tuple(Relation(f"r{i}", f"e{i}", f"e{(i + 1) % n}", evidence=evidence(f"d{i % 30}:{i % 7}")) for i in range(n))
        self.write(store, Draft(entities, relations))
        assert store.counts()["entities"] == n and store.counts()["relations"] == n
        assert len(store.get_entities([e.id for e in entities])) == n
        assert len(store.relations_touching([e.id for e in entities[:1000]])) == 1001
        assert len(store.evidence("entity", [e.id for e in entities])) == n
        store.delete_documents([f"d{i}" for i in range(30)])
        assert store.counts() == {"entities": 0, "relations": 0, "evidence": 0, "chunks": 0}

    def test_concurrent_reads_agree_with_sequential_ones(self, store):
        self.write(store, small_graph())
        ids = ["alice", "bob", "acme"]

        def read(i: int) -> Any:
            entity = ids[i % 3]
            return (store.get_entities([entity]), sorted(r.id for r in store.relations_touching([entity])), store.evidence("entity", [entity]))

        expected = [read(i) for i in range(12)]
        assert run_in_threads(read, 12) == expected

    # --- the optional chunk_links (memory_search's related) ----------------------------------

    def test_chunk_links_count_one_hop(self, store):
        if not hasattr(store, "chunk_links"):
            pytest.skip("chunk_links is optional: heta_framework.contracts.graph_links reads the store instead")
        self.write(store, small_graph())
        # from a:1, the seeds are alice and bob; b:1 is bob's evidence, bob-acme's and acme's (bob's neighbour)
        assert store.chunk_links(["a:1"], ["a"], 10) == [ChunkLink("b:1", 3, "bob", "")]
        # from b:1, the seeds are acme and bob; a:1 is bob's evidence, alice-bob's and alice's
        assert store.chunk_links(["b:1"], ["b"], 10) == [ChunkLink("a:1", 3, "bob", "")]
        assert store.chunk_links(["a:1", "b:1"], ["a", "b"], 10) == []  # every linked chunk is a result
        assert store.chunk_links(["a:1"], ["a"], 0) == [] and store.chunk_links(["nowhere:1"], ["nowhere"], 10) == []

    def test_chunk_links_equal_the_reads_answer(self, store):
        if not (hasattr(store, "chunk_links") and hasattr(store, "facts_of_documents")):
            pytest.skip("chunk_links and facts_of_documents are optional")
        draft = tangled_graph()
        self.write(store, draft)
        document_of = {e.chunk_id: e.document_id for fact in (*draft.entities, *draft.relations) for e in fact.evidence}
        rng = random.Random(3)
        checked = 0
        for size in (1, 2, 4):
            for _ in range(4):
                chosen = rng.sample(sorted(document_of), size)
                documents = sorted({document_of[c] for c in chosen})
                for limit in (1, 4, 50):
                    expected = chunk_links_from_reads(store, chosen, documents, limit)
                    assert store.chunk_links(chosen, documents, limit) == expected
                    checked += bool(expected)
        assert checked > 20  # the sample reaches other chunks: the comparison is not of empty lists
