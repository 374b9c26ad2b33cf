"""``local/<folder>`` rerankers: a sentence-transformers ``CrossEncoder`` saved in a folder.

The model part of the name is the folder path, so an absolute path gives two
slashes: ``local//srv/models/ms-marco-MiniLM-L-6-v2``. A relative path
(``local/models/my-cross-encoder``) is resolved against the working directory;
``~`` is expanded. The folder is what ``CrossEncoder.save(folder)`` writes.

Nothing is ever downloaded: the folder must exist, and loading uses
``local_files_only=True``. The model is loaded on the first ``rerank`` call
(not when the client is created) and scoring runs in a worker thread so the
event loop stays responsive.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heta_framework.common.models import RerankHit, RerankModel
from heta_framework.errors import ModelError

from heta_plugin_rerank.hits import best_first
from heta_plugin_rerank.options import LocalCrossEncoderOptions, parse_options


def model_folder(config: RerankModel) -> Path:
    """The folder named by ``local/<folder>``."""
    return Path(config.model).expanduser().resolve()


class LocalCrossEncoderReranker:
    """Satisfies ``RerankClient``. Created without loading anything."""

    def __init__(self, config: RerankModel):
        self.config = config
        self.model_name = config.model_name
        self.folder = model_folder(config)
        self.options = parse_options(LocalCrossEncoderOptions, config.model_name, config.options)
        self._model: Any = None
        # one forward pass at a time: the torch model is shared, and threads would only fight over the cores
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalCrossEncoderReranker({str(self.folder)!r})"

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        if not self.folder.is_dir():
            raise ModelError(
                f"No cross-encoder folder at {self.folder} (from model_name {self.model_name!r}). "
                f"The local reranker never downloads: save a model there with CrossEncoder(...).save(folder), "
                f"or fix the path (an absolute path is written local//abs/path)."
            )
        from sentence_transformers import CrossEncoder  # heavy: imported only when a local reranker is used
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # a library logs; it does not draw bars on the user's terminal

        try:
            self._model = CrossEncoder(
                str(self.folder), local_files_only=True, device=self.options.device, max_length=self.options.max_length
            )
        except Exception as exc:
            raise ModelError(
                f"Could not load the cross-encoder in {self.folder}: {type(exc).__name__}: {exc}. "
                f"The folder must hold a sentence-transformers CrossEncoder or a transformers sequence-classification "
                f"model with its tokenizer."
            ) from exc
        return self._model

    def _score(self, query: str, documents: list[str]) -> list[float]:
        with self._lock:
            model = self._load()
            scores = model.predict(
                [(query, document) for document in documents],
                batch_size=self.options.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        # one-label models give one score per pair; two-label (irrelevant, relevant) classifiers: use "relevant"
        return [float(score) for score in scores.reshape(len(documents), -1)[:, -1]]

    async def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[RerankHit]:
        documents = list(documents)
        top_n = min(top_n, len(documents))
        if top_n <= 0:
            return []
        scores = await asyncio.to_thread(self._score, query, documents)
        return best_first(enumerate(scores), top_n)

    def close(self) -> None:
        self._model = None
