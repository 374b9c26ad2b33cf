"""``LocalEmbeddingClient``: a sentence-transformers model on the CPU, offline, loaded on first use.

Loaded models are shared by every client in the process (keyed by folder and
device): a knowledge base opens a fresh client per ``KnowledgeBase`` object, and
loading weights is the slow part.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from heta_framework.common.memory import release_freed_memory
from heta_framework.errors import ModelError

from heta_plugin_local.batching import CombiningEncoder
from heta_plugin_local.encoder import Encoder, SentenceTransformerEncoder, TransformerEncoder, plain_pooling

_loaded: dict[tuple[str, str], Encoder] = {}
_load_lock = threading.Lock()
#: one combining encoder per loaded model and batch size: every client of that model shares its queue
_encoders: dict[tuple[str, str, int], CombiningEncoder] = {}


def set_torch_threads(threads: int | None) -> None:
    """torch's intra-op threads for the whole process (torch has no per-model setting); None keeps its default."""
    if threads is None:
        return
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


@functools.cache
def default_torch_threads() -> int:
    """torch's thread count as the process had it before this plugin first changed it (one per core by default)."""
    import torch

    return torch.get_num_threads()


#: calls of at most this many texts (queries, not a build's batches) run on one torch thread while callers contend
#: (CombiningEncoder.contended) and the client has no ``threads`` option. Two threads help one query alone
#: (vector_search 9.5 ms against 11.5-11.8 on one, 10k bench), but beside other queries the second thread's
#: OpenMP spin between and after passes burned CPU the other queries' FAISS scans and Python needed: 31-36% of
#: the process's CPU time was in libgomp with 8 graph queries in flight, and on one thread heta_graph_search
#: answered 73 queries/s against 58 (2 cores)
ONE_THREAD_CALL_TEXTS = 16


def _offline() -> None:
    # never reach a hub: the weights are on disk or the load fails
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # a library logs; it does not draw bars on the user's terminal


def _load_error(folder: Path, exc: Exception) -> ModelError:
    return ModelError(
        f"Could not load the sentence-transformers model in {folder}: {exc}. "
        "The folder must hold a complete sentence-transformers model (modules.json, config.json, weights)."
    )


def load_sentence_transformer(folder: Path, device: str = "cpu") -> Any:
    """``SentenceTransformer`` for the model in ``folder``, with every hub access switched off (not shared)."""
    _offline()
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(str(folder), device=device, local_files_only=True)
    except Exception as exc:
        raise _load_error(folder, exc) from exc


def load_encoder(folder: Path, device: str = "cpu") -> Encoder:
    """The model in ``folder``, shared per process: transformers alone for a plain pipeline, else
    sentence-transformers (``heta_plugin_local.encoder``)."""
    key = (str(folder), device)
    with _load_lock:
        model = _loaded.get(key)
        if model is None:
            try:
                plain = plain_pooling(folder)
            except ValueError as exc:  # a settings file that is not JSON: no loader can read this folder
                raise _load_error(folder, exc) from exc
            if plain is None:
                model = SentenceTransformerEncoder(load_sentence_transformer(folder, device))
            else:
                _offline()
                try:
                    model = TransformerEncoder(folder, *plain, device=device)
                except Exception as exc:
                    raise _load_error(folder, exc) from exc
            _loaded[key] = model
    return model


#: padded tokens per forward pass for each unit of ``batch_size``: the default 32 gives passes of 2,048 tokens,
#: 8 chunks of 256 tokens, 64 sentences of 32, and names (~8 tokens) up to the cap of 4 x batch_size = 128.
#: Measured on MiniLM, 2 cores, 1,000 chunks of ~250 tokens: batch 32 took 20.9 s and +393 MB of activations,
#: batch 8 took 19.4 s and +170 MB; names at 128 a batch took 0.54x the time of 32 a batch (issue 14)
TOKENS_PER_BATCH_UNIT = 64
#: calls of at least this many texts (a build's batches, not a query) hand freed activations back (``memory``)
#: after every forward pass: the encoder merges concurrent calls (build_graph keeps 4 batches of 256 texts in
#: flight), and trimming only at the end of such a call let one call's passes pile up fragments. At 3k
#: articles the relation sentences peaked 305 MB above where they started, trimmed per pass 71 MB, same time
RELEASE_AFTER_TEXTS = 16
_CHARS_PER_TOKEN = 4  # WordPiece on English; only the batch size depends on it, never a vector


def token_budget_batches(texts: Sequence[str], batch_size: int) -> list[list[int]]:
    """Row numbers of ``texts`` in batches, longest first, each of about ``batch_size * 64`` padded tokens.

    A batch holds between 1 and ``4 * batch_size`` texts: short texts go many at
    a time (fewer passes), long ones few at a time, so no pass needs more memory
    for its attention than a pass of 64-token texts. Padding is masked, so the
    vectors are those of any other batching (within float rounding, 1e-6).
    """
    budget = batch_size * TOKENS_PER_BATCH_UNIT
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    batches: list[list[int]] = []
    start = 0
    while start < len(order):
        longest = len(texts[order[start]]) // _CHARS_PER_TOKEN + 2  # + [CLS] and [SEP]
        size = max(1, min(4 * batch_size, budget // longest))
        batches.append(order[start : start + size])
        start += size
    return batches


class LocalEmbeddingClient:
    """Satisfies ``EmbeddingClient``. Options: ``batch_size`` (default 32), ``device`` (default ``"cpu"``),
    ``threads`` (torch's threads for the process; default: torch's own, one per core).

    Concurrent ``embed`` calls (several queries at once) are merged into one model
    call (``heta_plugin_local.batching``), so torch's threads are never
    oversubscribed. Without ``threads``, a query-sized call made while callers
    contend runs on one thread (``ONE_THREAD_CALL_TEXTS``), others on torch's default.
    """

    def __init__(self, model_name: str, folder: Path, *, batch_size: int = 32, device: str = "cpu", threads: int | None = None,
                 languages: frozenset[str] | None = None):
        self.model_name = model_name
        self.folder = folder
        #: ISO 639-1 codes the model knows (None: not declared); fusion calibration reads it
        self.languages = languages
        self.batch_size = batch_size
        self.device = device
        self.threads = threads

    def model(self) -> Encoder:
        set_torch_threads(self.threads)
        return load_encoder(self.folder, self.device)

    @property
    def encoder(self) -> CombiningEncoder:
        key = (str(self.folder), self.device, self.batch_size)
        with _load_lock:
            encoder = _encoders.get(key)
            if encoder is None:
                encoder = _encoders[key] = CombiningEncoder(self._encode_now)
        return encoder

    @property
    def dimension(self) -> int:
        return self.model().dimension

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Blocking: unit-length float32 vectors, one row per text (merged with concurrent callers' texts)."""
        set_torch_threads(self.threads)  # the shared encoder may belong to another client of this model
        return self.encoder.encode(texts)

    def _encode_now(self, texts: Sequence[str]) -> np.ndarray:
        model = self.model()
        if self.threads is None:
            busy = len(texts) <= ONE_THREAD_CALL_TEXTS and self.encoder.contended()
            set_torch_threads(1 if busy else default_torch_threads())
        out: np.ndarray | None = None
        for rows in token_budget_batches(texts, self.batch_size):
            vectors = model.encode([texts[i] for i in rows])
            if out is None:  # one output matrix, filled in place: no concatenation copy
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
            if len(texts) >= RELEASE_AFTER_TEXTS:
                release_freed_memory()
        return out if out is not None else np.empty((0, self.dimension), dtype=np.float32)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        return await asyncio.to_thread(self.encode, texts)
