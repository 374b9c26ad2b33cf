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


def test_contended_says_whether_a_caller_waited_for_another_call_lately(monkeypatch):
    import heta_plugin_local.batching as batching

    running, release = threading.Event(), threading.Event()

    def held(texts):
        running.set()
        release.wait(10)
        return np.zeros((len(texts), 1), dtype=np.float32)

    encoder = CombiningEncoder(held)
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(encoder.encode, ["first"])
        assert running.wait(10)
        assert not encoder.contended()  # the first caller found the model free
        second = pool.submit(encoder.encode, ["second"])  # arrives while the first call runs: it waits
        while not encoder.contended():
            pass
        release.set()
        first.result(), second.result()
    assert encoder.contended()
    monkeypatch.setattr(batching, "CONTENTION_MEMORY_S", 0.0)  # the moment is past the memory
    assert not encoder.contended()
    one_at_a_time = CombiningEncoder(lambda texts: np.zeros((len(texts), 1), dtype=np.float32))
    for n in range(5):
        one_at_a_time.encode([f"query {n}"])
    assert not one_at_a_time.contended()


@pytest.mark.parametrize(
    ("contended", "texts", "option", "threads"),
    [
        (False, 1, None, "default"),  # a query alone: every core
        (True, 1, None, 1),  # queries waiting for each other: one thread each call
        (True, 16, None, 1),
        (True, 17, None, "default"),  # bigger than queries: a build's batch keeps every core
        (True, 1, 2, 2),  # an explicit threads option is always obeyed
    ],
)
def test_query_sized_calls_run_on_one_torch_thread_while_callers_contend(minilm, monkeypatch, contended, texts, option, threads):
    import torch
    from heta_plugin_local.embedding import default_torch_threads

    default = default_torch_threads()
    model = minilm.model()
    seen: list[int] = []
    encode = model.encode
    monkeypatch.setattr(model, "encode", lambda batch: (seen.append(torch.get_num_threads()), encode(batch))[1])
    monkeypatch.setattr(CombiningEncoder, "contended", lambda self: contended)
    monkeypatch.setattr(minilm, "threads", option)
    try:
        minilm._encode_now([f"question {n}" for n in range(texts)])
    finally:
        torch.set_num_threads(default)
    assert seen and set(seen) == {default if threads == "default" else threads}
