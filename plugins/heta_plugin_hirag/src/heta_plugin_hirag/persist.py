"""Where the hierarchy, the communities, the reports and the bridges live: JSON in the object store (``hirag/``).

Nothing of HiRAG is written to the graph's tables or to its vector collections, so
the other graph modes (``heta_graph_search``, GraphRAG, LightRAG) never see a summary
entity. JSON, never pickles: nothing is unpickled from a knowledge-base folder. The
summary entities' vectors go to a collection of their own, ``hirag_summary_entities``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any

from heta_framework.kb.search import SearchAsset

PREFIX = "hirag/"
HIERARCHY_KEY = f"{PREFIX}hierarchy.json"
COMMUNITIES_KEY = f"{PREFIX}communities.json"
REPORTS_KEY = f"{PREFIX}reports.json"
BRIDGES_KEY = f"{PREFIX}bridges.json"
SUMMARY_COLLECTION = "hirag_summary_entities"

HIERARCHY_ARTIFACT = "hirag_hierarchy"
COMMUNITIES_ARTIFACT = "hirag_communities"
BRIDGES_ARTIFACT = "hirag_bridges"

HI_MODE = "hi_rag_query"
NOBRIDGE_MODE = "hi_rag_nobridge_query"
LOCAL_MODE = "hi_rag_local_query"
GLOBAL_MODE = "hi_rag_global_query"
BRIDGE_MODE = "hi_rag_bridge_query"

#: published by ``hirag_hierarchical_aggregation``: the summary entities and their vectors
HIERARCHY_ASSET = SearchAsset(
    kind="hirag_summary_entities",
    name="default",
    store="stores.objects",
    metadata={"hierarchy": HIERARCHY_KEY, "vectors": {"store": "stores.vector", "collection": SUMMARY_COLLECTION}},
)
#: published by ``hirag_community``: communities of the layered graph and their reports
REPORTS_ASSET = SearchAsset(
    kind="hirag_community_reports", name="default", store="stores.objects",
    metadata={"communities": COMMUNITIES_KEY, "reports": REPORTS_KEY},
)
#: published by ``hirag_bridges``: the paths between key entities of different communities
BRIDGES_ASSET = SearchAsset(kind="hirag_bridge_paths", name="default", store="stores.objects", metadata={"bridges": BRIDGES_KEY})


def load(objects: Any, key: str) -> Any:
    """The JSON at ``key``, or ``None`` when there is none yet."""
    return objects.get_json(key) if objects.exists(key) else None


def save(objects: Any, key: str, value: Any) -> None:
    objects.put_json(key, value)


#: parsed files by the SHA-256 of their bytes: a query hashes the bytes instead of parsing the JSON again;
#: a build that changes a file changes its hash
_PARSED: OrderedDict[str, Any] = OrderedDict()
_PARSED_KEPT = 8
_LOCK = threading.Lock()


def load_parsed(objects: Any, key: str, parse: Any) -> Any:
    """``parse(json)`` of the file at ``key`` (``parse(None)`` when missing), kept while the file is unchanged."""
    if not objects.exists(key):
        return parse(None)
    raw = objects.get_bytes(key)
    digest = key + ":" + hashlib.sha256(raw).hexdigest()
    with _LOCK:
        if digest in _PARSED:
            _PARSED.move_to_end(digest)
            return _PARSED[digest]
    parsed = parse(json.loads(raw))
    with _LOCK:
        _PARSED[digest] = parsed
        while len(_PARSED) > _PARSED_KEPT:
            _PARSED.popitem(last=False)
    return parsed
