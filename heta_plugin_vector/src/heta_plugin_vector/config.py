"""``[stores.vector] type = "faiss"`` options."""

from __future__ import annotations

from typing import Any

import attrs
from heta_framework.common.validators import positive_whole_number, whole_number

INDEX_KINDS = ("flat", "hnsw", "ivf")


def _index_kind(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if value not in INDEX_KINDS:
        raise ValueError(f"index must be one of {', '.join(INDEX_KINDS)}, got {value!r}")


@attrs.frozen
class FaissStoreConfig:
    """Options of the FAISS vector store.

    ``index``: ``"flat"`` (exact, default), ``"hnsw"`` or ``"ivf"`` (approximate).
    The index kind of a collection is fixed when the collection is created.

    HNSW: ``hnsw_m`` links per node, ``ef_construction`` build-time beam,
    ``ef_search`` query-time beam (raised to ``top_k`` when smaller).

    IVF: ``nlist`` clusters, ``nprobe`` clusters visited per query,
    ``train_threshold`` vectors needed before the clusters are trained
    (0 = ``39 * nlist``, FAISS's own minimum); until then the collection stays
    exact (flat) and switches over by itself. ``train_sample`` caps the number
    of vectors k-means trains on.

    Filters: when a filter selects at most ``filter_exact_limit`` records, those
    vectors are scored exactly (fast, and never misses a match); larger selections
    search the index with a FAISS ID selector.
    """

    path: str = "vectors"
    index: str = attrs.field(default="flat", validator=_index_kind)
    hnsw_m: int = attrs.field(default=32, validator=positive_whole_number)
    ef_construction: int = attrs.field(default=100, validator=positive_whole_number)
    ef_search: int = attrs.field(default=128, validator=positive_whole_number)
    nlist: int = attrs.field(default=1024, validator=positive_whole_number)
    nprobe: int = attrs.field(default=16, validator=positive_whole_number)
    train_threshold: int = attrs.field(default=0, validator=whole_number(0))
    train_sample: int = attrs.field(default=65536, validator=positive_whole_number)
    filter_exact_limit: int = attrs.field(default=20000, validator=positive_whole_number)

    @property
    def ivf_train_threshold(self) -> int:
        return self.train_threshold if self.train_threshold > 0 else 39 * self.nlist
