"""Where communities and reports live: JSON objects in the knowledge base's object store (``objects/graphrag/``).

JSON, never pickles: nothing is unpickled from a knowledge-base folder. The
report vectors go to the vector store's ``graphrag_reports`` collection.
"""

from __future__ import annotations

from typing import Any

from heta_framework.kb.search import SearchAsset

from heta_plugin_graphrag.communities import Detection

PREFIX = "graphrag/"
COMMUNITIES_KEY = f"{PREFIX}communities.json"
REPORTS_KEY = f"{PREFIX}reports.json"
REPORT_COLLECTION = "graphrag_reports"
COMMUNITIES_ARTIFACT = "graphrag_communities"
REPORTS_ARTIFACT = "graphrag_reports"
GLOBAL_MODE = "graphrag_global_search"
LOCAL_MODE = "graphrag_local_search"

#: published by ``community_reports``; both modes require it, so they exist only once reports are built
REPORTS_ASSET = SearchAsset(
    kind="graphrag_community_reports",
    name="default",
    store="stores.objects",
    metadata={"reports": REPORTS_KEY, "communities": COMMUNITIES_KEY, "vectors": {"store": "stores.vector", "collection": REPORT_COLLECTION}},
)


def load_detection(objects: Any) -> Detection:
    return Detection.from_json(objects.get_json(COMMUNITIES_KEY) if objects.exists(COMMUNITIES_KEY) else None)


def save_detection(objects: Any, detection: Detection) -> None:
    objects.put_json(COMMUNITIES_KEY, detection.to_json())


def load_reports(objects: Any) -> dict[str, dict[str, Any]]:
    """community id -> ``{"content_hash", "level", "source", "stale", "report", "chunk_ids", "entity_ids"}``."""
    return dict(objects.get_json(REPORTS_KEY)["reports"]) if objects.exists(REPORTS_KEY) else {}


def save_reports(objects: Any, reports: dict[str, dict[str, Any]]) -> None:
    objects.put_json(REPORTS_KEY, {"format": 1, "reports": reports})
