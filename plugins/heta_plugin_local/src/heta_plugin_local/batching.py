"""``CombiningEncoder``: concurrent ``encode`` calls on one model become one model call.

Eight queries arriving together each used to run their own forward pass, from
eight worker threads, each asking torch for every core: the passes fought over
the cores (one query's encode took ~955 ms under load instead of ~33 ms). Here
callers queue their texts and wait; one worker thread (``heta-encoder``) takes
every text waiting when it is free, runs them in one model call and hands each
caller its rows. While a call runs, the next callers queue up for the one after.
One model call at a time means torch's thread pool is never oversubscribed.

``contended()`` tells the model's owner whether callers have been waiting for each
other lately (a server answering several queries at once), which the local client
uses to run small calls on one torch thread (``LocalEmbeddingClient``).

Every model call runs on that one thread, whoever asks: called from whichever
worker thread asked, torch's activations were allocated in that thread's malloc
arena and each arena kept its freed blocks (at 1,000 chunks the process held
~400 MB more than the same calls from one thread: 1,410 vs 1,015 MB peak).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

import numpy as np

#: texts one combined call takes at most; the rest wait for the next call (a build's big batches are not merged)
MAX_COMBINED_TEXTS = 256
#: seconds after a caller last had to wait for another's model call during which ``contended()`` says so
CONTENTION_MEMORY_S = 1.0


class _Job:
    __slots__ = ("texts", "vectors", "error", "finished")

    def __init__(self, texts: Sequence[str]):
        self.texts = list(texts)
        self.vectors: np.ndarray | None = None
        self.error: BaseException | None = None
        self.finished = threading.Event()


class CombiningEncoder:
    """Runs ``encode(texts) -> (n, d) array`` for many threads, merging the calls waiting at the same moment."""

    def __init__(self, encode: Callable[[Sequence[str]], np.ndarray]):
        self._encode = encode
        self._waiting: list[_Job] = []
        self._has_work = threading.Condition()  # guards _waiting and _worker
        self._model_lock = threading.Lock()  # held while a model call runs
        self._worker: threading.Thread | None = None
        self._contended_at = float("-inf")
        #: model calls made (a test counts them)
        self.calls = 0

    def contended(self) -> bool:
        """Whether a caller had to wait for another caller's model call in the last ``CONTENTION_MEMORY_S`` seconds."""
        return time.monotonic() - self._contended_at < CONTENTION_MEMORY_S

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        job = _Job(texts)
        with self._has_work:
            if self._waiting or self._model_lock.locked():
                self._contended_at = time.monotonic()
            self._waiting.append(job)
            if self._worker is None or not self._worker.is_alive():  # first use, or a forked child (no threads)
                self._worker = threading.Thread(target=self._serve, name="heta-encoder", daemon=True)
                self._worker.start()
            self._has_work.notify()
        job.finished.wait()
        if job.error is not None:
            raise job.error
        assert job.vectors is not None
        return job.vectors

    def _serve(self) -> None:
        while True:
            with self._has_work:
                while not self._waiting:
                    self._has_work.wait()
                jobs = self._take()
            with self._model_lock:
                self._run(jobs)

    def _take(self) -> list[_Job]:
        """The waiting jobs, oldest first, up to MAX_COMBINED_TEXTS texts (at least one job); called holding _has_work."""
        taken, total = [], 0
        while self._waiting and (not taken or total + len(self._waiting[0].texts) <= MAX_COMBINED_TEXTS):
            job = self._waiting.pop(0)
            taken.append(job)
            total += len(job.texts)
        return taken

    def _run(self, jobs: list[_Job]) -> None:
        self.calls += 1
        try:
            vectors = self._encode([text for job in jobs for text in job.texts])
        except BaseException as exc:  # every caller whose texts were in the batch gets the failure
            for job in jobs:
                job.error = exc
                job.finished.set()
            return
        start = 0
        for job in jobs:
            job.vectors = vectors[start : start + len(job.texts)]
            start += len(job.texts)
            job.finished.set()
