"""The persistent embedding cache: ``(model name, sha256(text)) -> float32 vector``.

A rebuild, a resumed build or a document that comes back unchanged costs no
embedding call for a text some earlier build already embedded with the same
model. The vectors live in the knowledge base's ``embeddings`` cache
(``CacheProtocol``: the folder's ``embeddings/cache.sqlite``, or a table on the
server the recipe's ``[stores.state]`` names) as raw float32 bytes (never pickle).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from heta_framework.kb.state import CacheProtocol

CACHE_NAME = "embeddings"


def _key(model: str, text_hash: str) -> str:
    return f"{model}\x1f{text_hash}"


class EmbeddingCache:
    """A typed view over one ``CacheProtocol``; the knowledge base's state owns (and closes) the cache."""

    def __init__(self, cache: CacheProtocol):
        self._cache = cache

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def known(self, model: str, text_hashes: Sequence[str]) -> set[str]:
        """The hashes among ``text_hashes`` that already have a vector for ``model``."""
        return set(self.get_many(model, text_hashes))

    def get_many(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found = self._cache.get_many([_key(model, h) for h in text_hashes])
        prefix = len(model) + 1
        return {key[prefix:]: np.frombuffer(blob, dtype=np.float32) for key, blob in found.items()}

    def put_many(self, model: str, text_hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store one batch at once, so an interrupted build keeps every finished batch."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._cache.put_many({_key(model, h): vectors[i].tobytes() for i, h in enumerate(text_hashes)})

    def dimension(self, model: str, text_hashes: Sequence[str]) -> int | None:
        """The dimension of ``model``'s vectors, read from the first of ``text_hashes`` that is cached."""
        for text_hash in text_hashes:
            found = self.get_many(model, [text_hash])
            if found:
                return int(next(iter(found.values())).shape[0])
        return None
