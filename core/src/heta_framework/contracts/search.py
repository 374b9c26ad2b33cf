"""Query protocols: search assets, query engines, requests, responses and the context an engine runs in.

A build step *publishes* ``SearchAsset``s; a query engine *requires*
``SearchAssetRef``s (and optionally components). A mode is available exactly
when the knowledge base has built every asset its engine requires
(``heta_framework.plugins.query_engines`` keeps the engines and says why a mode is not).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs
import cattrs
from cattrs.gen import make_dict_unstructure_fn

from heta_framework.contracts.access import AccessScope
from heta_framework.contracts.components import ComponentAccessors
from heta_framework.contracts.query_input import check_filters, check_text, check_top_k
from heta_framework.contracts.query_memo import QueryMemo
from heta_framework.errors import QueryRecursionError

if TYPE_CHECKING:
    from heta_framework.contracts.components import ComponentRef


def _frozen_dict(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return dict(value or {})


@attrs.frozen
class SearchAsset:
    """A queryable thing a step built: where it lives and what shape it has. It never runs queries."""

    kind: str
    name: str
    store: str
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_dict, eq=False, hash=False)


@attrs.frozen
class SearchAssetRef:
    """A query engine's dependency on an asset. ``name=None`` matches any asset of that kind."""

    kind: str
    name: str | None = None

    def matches(self, asset: SearchAsset) -> bool:
        return asset.kind == self.kind and (self.name is None or asset.name == self.name)

    def __str__(self) -> str:
        return self.kind if self.name is None else f"{self.kind}:{self.name}"


@attrs.frozen
class QueryRequest:
    """One query as an engine receives it (``QueryEngineProtocol.query(request, context)``)."""

    text: str
    mode: str
    #: how many results to return at most
    top_k: int = 10
    #: metadata equality filters (``{"document_id": [...]}``, ``{"source": ...}``); a list value means any of them
    filters: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_dict)
    #: the mode's own options, already checked against its ``options_type`` (``query_options(engine, request)``)
    options: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_dict)
    #: whether the caller asked for ``response.trace``
    trace: bool = False
    #: who asks and what they may read (``heta_framework.contracts.access``); ``None``: no restriction
    #: (the build's own queries). The knowledge base sets it on every query a caller makes, narrows the
    #: ``document_id`` filter the engine sees to it, and nested queries inherit it.
    access: AccessScope | None = attrs.field(default=None, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # checked here, once, so every mode (and every engine a composed mode calls) sees the same clean input
        # a NUL is no part of any language: refused in every mode alike (libraries differ in what they make of it)
        check_text("The query text", self.text)
        check_top_k(self.top_k)
        check_filters(self.filters)


@attrs.frozen
class QueryResult:
    """One hit. ``id`` is the fusion key: a chunk id for chunks, ``entity:...``/``relation:...`` for graph facts.

    ``evidence`` holds the chunks a graph fact came from (themselves ``QueryResult``s of kind ``chunk``).
    ``metadata`` carries provenance: ``document_id``, ``source``, ``start``, ``end``, ``page``.
    """

    id: str
    text: str
    #: higher is better; comparable only within one response
    score: float
    #: ``chunk``, ``entity``, ``relation``, or a plugin's own kind (``community``, ``wiki_section``, ...)
    kind: str = "chunk"
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_dict)
    #: for a graph fact or a summary: the chunks it came from
    evidence: tuple[QueryResult, ...] = ()
    #: for a fused result: the base modes that found it
    sources: tuple[str, ...] = ()

    @property
    def document_id(self) -> str | None:
        return self.metadata.get("document_id")

    @property
    def location(self) -> str:
        """Where the hit came from, for people: ``report.pdf p.3``, ``sales.xlsx sheet Q1 rows 2-40``."""
        from heta_framework.contracts.provenance import describe_location

        return describe_location(self.metadata)


@attrs.frozen
class Citation:
    """Maps a marker in an answer (``[1]``) to the result that supports it."""

    marker: str
    result_id: str
    text: str = ""


@attrs.frozen
class TraceNode:
    """One query in the call tree of a (possibly composed) query."""

    mode: str
    text: str
    top_k: int
    options: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_dict)
    result_count: int = 0
    duration_ms: float = 0.0
    children: tuple[TraceNode, ...] = ()
    issues: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "text": self.text,
            "top_k": self.top_k,
            "options": dict(self.options),
            "result_count": self.result_count,
            "duration_ms": round(self.duration_ms, 3),
            "issues": [dict(i) for i in self.issues],
            "children": [c.to_dict() for c in self.children],
        }


# typed converters (``converter=tuple`` works at run time, but a type checker then rejects a list argument)
def _results(items: Iterable[QueryResult]) -> tuple[QueryResult, ...]:
    return tuple(items)


def _citations(items: Iterable[Citation]) -> tuple[Citation, ...]:
    return tuple(items)


@attrs.frozen
class QueryResponse:
    """What a mode answers: results best first, and an answer when one was asked for."""

    results: tuple[QueryResult, ...] = attrs.field(default=(), converter=_results)
    #: the language model's answer (``answer=True``, or modes that always answer)
    answer: str | None = None
    #: which results the answer cites
    citations: tuple[Citation, ...] = attrs.field(default=(), converter=_citations)
    #: the tree of nested mode calls, with ``trace=True``
    trace: TraceNode | None = None
    #: ``mode`` (set by the knowledge base), ``issues`` (recoverable problems, each with a stable ``code``), and the mode's own keys (``fusion``, ``ranking``, ...)
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_dict)
    #: the model calls the query made, by model (``heta_framework.common.usage``): set on the caller's
    #: response, empty on the responses of the modes a composed mode calls (their calls are in the caller's)
    usage: Mapping[str, Any] = attrs.field(factory=dict, converter=_frozen_dict)

    @property
    def issues(self) -> list[Mapping[str, Any]]:
        return list(self.metadata.get("issues", ()))

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape the CLI's ``--json`` prints (``response_to_dict``)."""
        return response_to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QueryResponse:
        return response_from_dict(data)


def query_issue(code: str, message: str, action: str, **details: Any) -> dict[str, Any]:
    """A ``metadata["issues"]`` entry: a stable ``code``, a readable ``message``, the ``action`` taken."""
    issue: dict[str, Any] = {"code": code, "message": message, "action": action}
    if details:
        issue["details"] = details
    return issue


@runtime_checkable
class QueryEngineProtocol(Protocol):
    """A query mode. Optional: ``required_components`` (a frozenset of ``ComponentRef``) and
    ``options_type``, the attrs class of the mode's options (``heta_framework.contracts.query_options``;
    without it the mode takes no options, and any option given is an error).
    """

    @property
    def mode(self) -> str: ...

    @property
    def required_assets(self) -> frozenset[SearchAssetRef]: ...

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse: ...


def required_components(engine: QueryEngineProtocol) -> frozenset[ComponentRef]:
    return frozenset(getattr(engine, "required_components", frozenset()) or frozenset())


class QueryHost(Protocol):
    """What a ``QueryContext`` needs of the knowledge base it queries (the ``KnowledgeBase`` is one)."""

    @property
    def search_assets(self) -> list[SearchAsset]: ...

    @property
    def available_queries(self) -> list[str]: ...

    def get_component(self, key: str) -> Any: ...

    def has_component(self, key: str) -> bool: ...

    async def _run_query(self, request: QueryRequest, *, stack: Sequence[str], memo: QueryMemo | None = None) -> QueryResponse:
        """Run ``request`` as given, inside the top-level query that ``stack`` leads to."""
        ...


class QueryContext(ComponentAccessors):
    """What an engine gets: components (typed: ``context.store("vector")``, ``context.reranker()``), and
    ``query()`` — the only way to call another mode.

    ``query()`` refuses a mode already on the call stack (A→B→A), checks that the
    mode is available, and records a nested trace node when tracing.
    """

    def __init__(self, kb: QueryHost, request: QueryRequest, stack: Sequence[str] = (), memo: QueryMemo | None = None):
        self._kb = kb
        self.request = request
        self.stack: tuple[str, ...] = (*stack, request.mode)
        self.children: list[TraceNode] = []
        #: shared by every engine this top-level request runs (nested contexts get the same one)
        self.memo = memo if memo is not None else QueryMemo()

    @property
    def knowledge_base(self) -> Any:
        return self._kb

    def get_component(self, key: str) -> Any:
        return self._kb.get_component(key)

    def has_component(self, key: str) -> bool:
        return self._kb.has_component(key)

    def find_asset(self, ref: SearchAssetRef) -> SearchAsset | None:
        return next((a for a in self._kb.search_assets if ref.matches(a)), None)

    def is_available(self, mode: str) -> bool:
        return mode in self._kb.available_queries

    async def embed_query(self, text: str, model_key: str = "models.embedding") -> Any:
        """The embedding of ``text`` by the model ``model_key``, computed once per request.

        Engines use this rather than ``client.embed`` so a composed mode whose
        base modes all embed the query pays for one model call.
        """
        return await self.memo.embed(self.get_component(model_key), text)

    async def query(
        self,
        text: str,
        *,
        mode: str,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> QueryResponse:
        if mode in self.stack:
            chain = " -> ".join((*self.stack, mode))
            raise QueryRecursionError(
                f"Query mode {mode!r} calls itself through {chain}. "
                "A composed engine must only call modes that do not call it back."
            )
        request = QueryRequest(
            text=text,
            mode=mode,
            top_k=self.request.top_k if top_k is None else top_k,
            filters=self.request.filters if filters is None else filters,
            options=options or {},
            trace=self.request.trace,
            access=self.request.access,  # a composed mode cannot widen what its caller may read
        )
        response = await self._kb._run_query(request, stack=self.stack, memo=self.memo)
        if response.trace is not None:
            self.children.append(response.trace)
        return response


def elapsed_ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def chunk_result(chunk: Any, score: float, mode: str) -> QueryResult:
    """A ``QueryResult`` for a ``Chunk``: text, score, provenance, and the mode that found it."""
    return QueryResult(
        id=chunk.id,
        text=chunk.text,
        score=float(score),
        kind="chunk",
        metadata=chunk.provenance(),
        sources=(mode,),
    )


# --- one converter between responses and the JSON the CLI and HTTP API print -----------------
#
# ``QueryResponse.to_dict()`` / ``from_dict()`` go through it, so the CLI's ``--json``, a server's
# body and a client reading either agree on one shape.

_converter = cattrs.Converter()
_converter.register_unstructure_hook(TraceNode, lambda node: node.to_dict())
_result_fields = make_dict_unstructure_fn(QueryResult, _converter)
# each result also says where it came from in words ("planets.xlsx sheet Planets rows 2-9"); reading a
# response back ignores the key, since it follows from the metadata
_converter.register_unstructure_hook(QueryResult, lambda result: {**_result_fields(result), "location": result.location})


def _structure_trace(data: Mapping[str, Any], _type: Any) -> TraceNode:
    return TraceNode(
        mode=data["mode"],
        text=data["text"],
        top_k=data["top_k"],
        options=data.get("options", {}),
        result_count=data.get("result_count", 0),
        duration_ms=data.get("duration_ms", 0.0),
        children=tuple(_structure_trace(child, TraceNode) for child in data.get("children", ())),
        issues=tuple(dict(issue) for issue in data.get("issues", ())),
    )


_converter.register_structure_hook(TraceNode, _structure_trace)


def response_to_dict(response: QueryResponse) -> dict[str, Any]:
    """JSON-able: ``results`` (each with ``evidence`` and ``location``), ``answer``, ``citations``, ``metadata``, ``trace``, ``usage``."""
    return _converter.unstructure(response)


def response_from_dict(data: Mapping[str, Any]) -> QueryResponse:
    """The inverse of :func:`response_to_dict` (a missing key takes its default)."""
    return _converter.structure(dict(data), QueryResponse)
