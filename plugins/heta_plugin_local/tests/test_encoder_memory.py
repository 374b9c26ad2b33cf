"""Model calls run on one thread, whichever thread asks (one malloc arena for every activation; issue 14)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from heta_plugin_local.batching import CombiningEncoder


def test_every_model_call_runs_on_the_encoder_thread_whoever_asks():
    seen: set[str] = set()

    def encode(texts):
        seen.add(threading.current_thread().name)
        return np.ones((len(texts), 2), dtype=np.float32)

    encoder = CombiningEncoder(encode)
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda n: encoder.encode([f"text {n}"] * (n + 1)), range(24)))
    assert [r.shape[0] for r in results] == [n + 1 for n in range(24)]
    assert len(seen) == 1 and next(iter(seen)).startswith("heta-encoder")  # one malloc arena for every activation


def test_a_failing_model_call_reaches_its_caller():
    def encode(texts):
        raise RuntimeError("model exploded")

    with pytest.raises(RuntimeError, match="model exploded"):
        CombiningEncoder(encode).encode(["a"])


def test_callers_that_queue_during_a_call_share_the_next_one():
    import time

    def slow(texts):
        time.sleep(0.02)  # a forward pass: callers arriving meanwhile queue up
        return np.arange(len(texts), dtype=np.float32).reshape(-1, 1)

    encoder = CombiningEncoder(slow)

    def client(n: int) -> list[np.ndarray]:  # a caller that keeps asking, as a server under load does
        return [encoder.encode([f"query {n}.{k}"]) for k in range(5)]

    with ThreadPoolExecutor(8) as pool:
        answers = [a for batch in pool.map(client, range(8)) for a in batch]
    assert len(answers) == 40 and all(a.shape == (1, 1) for a in answers)
    assert encoder.calls <= 15  # 40 requests from 8 busy callers: about one call per round, never one per request


def test_a_call_of_many_passes_releases_freed_memory_after_each_pass(minilm, monkeypatch):
    # a merged call (several callers' batches) runs many passes: trimming only at its end let them pile up
    import heta_plugin_local.embedding as embedding

    released: list[int] = []
    monkeypatch.setattr(embedding, "release_freed_memory", lambda: released.append(1))
    texts = [f"sentence number {n} about a topic" for n in range(300)]
    passes = len(embedding.token_budget_batches(texts, minilm.batch_size))
    assert passes > 1
    vectors = minilm._encode_now(texts)
    assert len(released) == passes
    assert vectors.shape == (300, 384)
    released.clear()
    minilm._encode_now(["one query"])  # a query is too small to be worth a trim
    assert released == []
