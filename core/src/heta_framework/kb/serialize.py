"""One converter between query responses and the JSON the CLI and HTTP API print.

``QueryResponse.to_dict()`` / ``QueryResponse.from_dict()`` go through here, so the
CLI's ``--json``, a server's body and a client reading either agree on one shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cattrs
from cattrs.gen import make_dict_unstructure_fn

from heta_framework.kb.search import QueryResponse, QueryResult, TraceNode

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
    """JSON-able: ``results`` (each with ``evidence`` and ``location``), ``answer``, ``citations``, ``metadata``, ``trace``."""
    return _converter.unstructure(response)


def response_from_dict(data: Mapping[str, Any]) -> QueryResponse:
    """The inverse of :func:`response_to_dict` (a missing key takes its default)."""
    return _converter.structure(dict(data), QueryResponse)


