"""``GraphStore``: the contract of the ``stores.graph`` slot (entities, relations and their evidence).

These are exactly the calls the graph steps (``BuildGraph``,
``MergeGraphIntoStore``, document deletion) and ``heta_graph_search`` make;
the default backend is ``sqlite_graph`` in heta-plugin-graph. A backend passes
``heta_framework.testing.conformance.GraphStoreSuite``.

What goes in is a *draft*: any object shaped like ``GraphFacts`` (the graph
plugin's ``GraphDraft`` is one). What comes out are the frozen ``Stored*``
values below, so callers never see a backend's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

FactKind = Literal["entity", "relation"]


# --- what a draft looks like (read-only, structural) ------------------------------


class FactEvidence(Protocol):
    """One chunk supporting a fact, with what that chunk said about it."""

    @property
    def chunk_id(self) -> str: ...

    @property
    def document_id(self) -> str: ...

    @property
    def description(self) -> str: ...


class EntityFact(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def attributes(self) -> Mapping[str, Any]: ...

    @property
    def aliases(self) -> Sequence[str]: ...

    @property
    def evidence(self) -> Sequence[FactEvidence]: ...


class RelationFact(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def source_id(self) -> str: ...

    @property
    def target_id(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def evidence(self) -> Sequence[FactEvidence]: ...


class GraphFacts(Protocol):
    """Deduplicated entities and relations, each with its evidence."""

    @property
    def entities(self) -> Sequence[EntityFact]: ...

    @property
    def relations(self) -> Sequence[RelationFact]: ...


# --- what comes out ----------------------------------------------------------------


@attrs.frozen
class StoredEntity:
    id: str
    name: str
    type: str
    description: str
    attributes: Mapping[str, Any] = attrs.field(factory=dict, converter=dict, eq=False, hash=False)
    aliases: tuple[str, ...] = ()


@attrs.frozen
class StoredRelation:
    id: str
    source_id: str
    target_id: str
    type: str
    name: str
    description: str


@attrs.frozen
class StoredChunk:
    """The text of an evidence chunk, kept in the graph store so search shows evidence without another store."""

    id: str
    document_id: str
    text: str
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=dict, eq=False, hash=False)


@attrs.frozen
class ChunkLink:
    """A chunk one graph hop from some result chunks (``memory_search``'s ``related``): how many links reach it
    and the first of them (see ``GraphStore``, "Optional")."""

    chunk_id: str
    links: int
    via_entity: str
    #: the relation crossed; "" when the chunk is evidence of a seed entity itself
    via_relation: str = ""


@attrs.frozen
class RemovedFacts:
    entity_ids: tuple[str, ...] = ()
    relation_ids: tuple[str, ...] = ()
    evidence_rows: int = 0


#: called inside the write transaction with the facts about to disappear; raising rolls everything back
OrphanHandler = Callable[[RemovedFacts], None]


@runtime_checkable
class GraphStore(Protocol):
    """Entities and relations, each alive exactly as long as one evidence row (a chunk) supports it.

    Semantics every backend keeps:

    - ``write_draft`` and ``delete_documents`` are each one transaction, which
      also covers ``on_orphans``: if the handler raises (say, deleting the facts'
      vectors failed) nothing of the call is written.
    - ``write_draft`` first drops the evidence ``replace_documents`` gave before,
      then upserts chunks, entities, relations and evidence (one row per fact and
      chunk). An entity already stored keeps its name, and its description and
      aliases unless they were empty; a stored relation keeps its description.
      Facts left without evidence are removed, and returned.
    - ``delete_documents`` removes those documents' evidence and chunks, then every
      fact no other chunk supports; a relation goes with either endpoint. A
      surviving entity whose description came only from a deleted chunk takes the
      longest description its remaining evidence gives.
    - Readers (``get_*``, ``relations_touching``, ``evidence``, ``fact_types``, ``entity_ids``) return what they
      find among the ids asked for; missing ids are simply absent. Any string is a
      valid id (values are parameters, never spliced into queries).
    - ``flush`` makes writes durable (a no-op when every call commits);
      ``close`` releases the connection. One writer at a time (the knowledge
      base's writer lock); reads from several threads at once are safe.

    Optional (callers check with ``hasattr`` and compute it from the calls above otherwise):

    - ``facts_of_documents(document_ids) -> (entity ids, relation ids)`` with evidence in those documents.
    - ``chunk_links(chunk_ids, document_ids, limit) -> list[ChunkLink]``: the chunks one hop from
      ``chunk_ids`` (whose documents are ``document_ids``). The seeds are the entities with evidence
      in those chunks. A link is a seed's evidence row, an evidence row of a relation touching a
      seed, or an evidence row of such a relation's other endpoint when that endpoint is not a seed
      (each neighbour once, reached by its touching relation of smallest id). Counted per chunk,
      ``chunk_ids`` left out, most links first then by chunk id, at most ``limit``. The first link
      is the smallest seed id, else the smallest relation id, else the smallest neighbour id. It must
      equal ``heta_framework.contracts.graph_links.chunk_links_from_reads`` (the same count from the
      reads above), in one query: at the 10k bench tier 30 result chunks reach ~70,000 evidence
      rows, and fetching them into Python took 213 ms a query against 80 in SQLite.
    """

    def write_draft(
        self,
        draft: GraphFacts,
        chunks: Iterable[StoredChunk],
        *,
        replace_documents: Sequence[str] = (),
        on_orphans: OrphanHandler | None = None,
    ) -> RemovedFacts: ...

    def delete_documents(self, document_ids: Sequence[str], on_orphans: OrphanHandler | None = None) -> RemovedFacts: ...

    def get_entities(self, ids: Sequence[str]) -> dict[str, StoredEntity]: ...

    def get_relations(self, ids: Sequence[str]) -> dict[str, StoredRelation]: ...

    def relations_touching(self, entity_ids: Sequence[str]) -> list[StoredRelation]:
        """Every relation with an endpoint in ``entity_ids`` (the one-hop neighbourhood)."""
        ...

    def evidence(self, fact_kind: FactKind, fact_ids: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
        """fact id -> ``[(chunk_id, document_id, description)]``, sorted by chunk id."""
        ...

    def get_chunks(self, ids: Sequence[str]) -> dict[str, StoredChunk]: ...

    def entity_ids(self) -> list[str]:
        """Every stored entity id, sorted: the whole graph, for steps that read all of it (community detection).

        ``relations_touching(entity_ids())`` then gives every relation.
        """
        ...

    def fact_types(self) -> dict[FactKind, dict[str, int]]:
        """How many stored facts have each type: ``{"entity": {type: n}, "relation": {type: n}}``.

        The graph's vocabulary of labels (LightRAG's offline high-level keywords match against it).
        """
        ...

    def counts(self) -> dict[str, int]:
        """Rows per kind: ``{"entities", "relations", "evidence", "chunks"}`` (recorded in the build's artifacts)."""
        ...

    def relative_paths(self) -> list[str]:
        """The files this store owns, relative to the knowledge-base folder (for cleanup plans)."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None: ...
