"""``[stores.vector] type = "milvus"`` options: where Milvus is, how to log in, which index."""

from __future__ import annotations

import re
from typing import Any

import attrs
from heta_framework.common.validators import number, one_of, positive_whole_number

INDEX_TYPES = ("AUTOINDEX", "HNSW", "IVF_FLAT", "FLAT")
SERVER_SCHEMES = ("http://", "https://", "tcp://", "grpc://")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Milvus collection names: a letter or _, then letters, digits and _; the collection's own name is appended
_PREFIX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")


def _env_name(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if value and not _ENV_NAME.match(value):
        raise ValueError(f"token_env must be an environment variable name (letters, digits, _), got {value!r}")


def _prefix(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if value and not _PREFIX.match(value):
        raise ValueError(
            f"collection_prefix {value!r} is not a usable Milvus name: use letters, digits and _, "
            "starting with a letter or _, at most 100 characters"
        )


@attrs.frozen
class MilvusVectorConfig:
    """Options of the Milvus vector store.

    ``uri``: a file path for Milvus Lite (relative paths are inside the knowledge-base
    folder; default ``milvus/vectors.db``), or ``http://host:19530`` (``https://`` for
    TLS) for a Milvus server or cluster. ``token_env``: the environment variable that
    holds the credentials (``user:password`` or an API key); the token itself is never
    in the recipe, and never logged, recorded or shown in an error. ``db_name``: the
    server's database (empty: the server's default). ``collection_prefix``: put before
    every collection's name (empty: ``heta_`` + the knowledge-base folder's name); give
    each knowledge base on a shared server its own. ``index``: ``AUTOINDEX`` (default),
    ``HNSW``, ``IVF_FLAT`` or ``FLAT`` (exact), fixed when a collection is created; the
    metric is always cosine. HNSW: ``hnsw_m``, ``ef_construction``, ``ef_search``
    (raised to ``top_k`` when smaller). IVF_FLAT: ``ivf_nlist``, ``ivf_nprobe``.
    ``batch_size``: rows per upsert request. ``timeout``: seconds per request.
    """

    uri: str = "milvus/vectors.db"
    token_env: str = attrs.field(default="", validator=_env_name)
    db_name: str = ""
    collection_prefix: str = attrs.field(default="", validator=_prefix)
    index: str = attrs.field(default="AUTOINDEX", validator=one_of(INDEX_TYPES))
    hnsw_m: int = attrs.field(default=16, validator=positive_whole_number)
    ef_construction: int = attrs.field(default=200, validator=positive_whole_number)
    ef_search: int = attrs.field(default=100, validator=positive_whole_number)
    ivf_nlist: int = attrs.field(default=128, validator=positive_whole_number)
    ivf_nprobe: int = attrs.field(default=16, validator=positive_whole_number)
    batch_size: int = attrs.field(default=1000, validator=positive_whole_number)
    timeout: float = attrs.field(default=30.0, validator=number(above=0))

    @property
    def is_server(self) -> bool:
        return self.uri.lower().startswith(SERVER_SCHEMES)
