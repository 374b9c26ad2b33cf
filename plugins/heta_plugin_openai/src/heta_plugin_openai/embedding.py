"""``openai/<model>`` embedding models: batched ``/embeddings`` calls, float32 arrays."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
import openai
from heta_framework.common.models import EmbeddingModel
from heta_framework.common.remote import MalformedResponseError
from heta_framework.common.usage import report_tokens
from heta_framework.errors import ModelError
from openai.types import CreateEmbeddingResponse

from heta_plugin_openai.connection import OpenAIConnection, require_fields
from heta_plugin_openai.options import OpenAIOptions


class OpenAIEmbeddingClient:
    """Satisfies ``EmbeddingClient``. Created without touching the network.

    ``dimension`` is ``options.dimension`` when the recipe gives it; otherwise it
    is learned from the first ``embed`` call, and asking for it before then is an
    error that says to set ``options.dimension``.
    """

    def __init__(self, config: EmbeddingModel):
        self.config = config
        self.model_name = config.model_name
        self.options = OpenAIOptions.from_config(config.model_name, config.options)
        self.connection = OpenAIConnection(config, self.options)
        self._dimension: int | None = self.options.dimension

    def __repr__(self) -> str:
        return f"OpenAIEmbeddingClient({self.model_name!r}, base_url={self.config.base_url!r})"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            raise ModelError(
                f"The vector size of {self.model_name} is not known before its first embed call. "
                f"Set options.dimension in the recipe's embedding model table (e.g. 1536 for text-embedding-3-small)."
            )
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        size = self.options.batch_size
        batches = [texts[start : start + size] for start in range(0, len(texts), size)]
        # the connection's concurrency gate bounds how many batches are in flight
        arrays = await asyncio.gather(*(self._embed_batch(batch) for batch in batches))
        vectors = np.concatenate(arrays, axis=0) if len(arrays) > 1 else arrays[0]
        if self._dimension is None:
            self._dimension = int(vectors.shape[1])
        return vectors

    async def _embed_batch(self, batch: list[str]) -> np.ndarray:
        request: dict[str, Any] = {"model": self.config.model, "encoding_format": "float"}
        if self.options.send_dimensions and self.options.dimension:
            request["dimensions"] = self.options.dimension
        if self.options.extra_body:
            request["extra_body"] = dict(self.options.extra_body)

        async def create(client: openai.AsyncOpenAI) -> Any:
            response = await client.embeddings.create(input=batch, **request)
            require_fields(response, CreateEmbeddingResponse, ("data",))
            if not all(isinstance(getattr(item, "embedding", None), list) for item in response.data):
                raise MalformedResponseError("JSON whose data items have no embedding list")
            return response

        response = await self.connection.call("embeddings", create)
        tokens = getattr(getattr(response, "usage", None), "prompt_tokens", None)
        if isinstance(tokens, int):  # an OpenAI-compatible server may leave usage out: then the tokens stay unknown
            report_tokens(input_tokens=tokens)
        items = sorted(response.data, key=lambda item: item.index)
        if len(items) != len(batch):
            raise ModelError(
                f"{self.connection.where} returned {len(items)} embeddings for {len(batch)} texts with {self.model_name}. "
                f"Lower options.batch_size; the server may cap inputs per request."
            )
        vectors = np.asarray([item.embedding for item in items], dtype=np.float32)
        expected = self._dimension
        if vectors.ndim != 2 or (expected is not None and vectors.shape[1] != expected):
            raise ModelError(
                f"{self.model_name} returned vectors of shape {vectors.shape}, expected (n, {expected}). "
                f"Fix options.dimension in the recipe, or the model name."
            )
        return vectors

    async def aclose(self) -> None:
        await self.connection.aclose()

    def close(self) -> None:
        self.connection.forget()
