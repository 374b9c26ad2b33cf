"""The local encoder's forward pass traced (TorchScript) against eager, alone and beside a busy Python thread.

An eager transformers forward pass goes back to Python between its ops and needs
the GIL each time; a server's other queries hold the GIL for their own Python
(graph hydration, Whoosh, result objects). The trace runs the pass in C++. Here
the same MiniLM encoder runs its query batches both ways, alternating in one
process: alone, then with a thread spinning pure Python beside it (what a
concurrent query's Python looks like to the GIL). Vectors are compared too.

    python bench/bench_encoder_beside_python.py [--rounds 3]

Writes bench/results/encoder_beside_python.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import known_item_queries, load_articles, machine_load, write_result  # noqa: E402

MODEL = "local/all-MiniLM-L6-v2"


class BusyPython:
    """A thread running pure Python until stopped."""

    def __enter__(self) -> BusyPython:
        self._stop = False
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()
        return self

    def _spin(self) -> None:
        total = 0
        while not self._stop:
            for number in range(1000):
                total += number

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self._thread.join()


def timed_ms(encode, batches: list[list[str]]) -> list[float]:
    seconds = []
    for batch in batches:
        started = time.perf_counter()
        encode(batch)
        seconds.append((time.perf_counter() - started) * 1000)
    return seconds


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=40, help="batches of each size per round and way")
    args = parser.parse_args()

    import torch
    from heta_framework.common.models import EmbeddingModel
    from heta_plugin_local import create_client
    from heta_plugin_local.encoder import TransformerEncoder

    encoder = create_client(EmbeddingModel(model_name=MODEL)).model()
    if not isinstance(encoder, TransformerEncoder) or not isinstance(encoder.forward, torch.jit.ScriptModule):
        raise SystemExit("the MiniLM encoder is not running a trace: nothing to compare")
    trace, eager = encoder.forward, encoder.model

    def encode_with(forward):
        def encode(batch: list[str]) -> np.ndarray:
            encoder.forward = forward
            try:
                return encoder.encode(batch)
            finally:
                encoder.forward = trace

        return encode

    texts = [text for text, _ in known_item_queries(load_articles(), 8 * args.queries)]
    batches = {
        "1 query": [[text] for text in texts[: args.queries]],
        "8 queries": [texts[i : i + 8] for i in range(0, 8 * args.queries, 8)],
    }
    difference = max(float(np.abs(encode_with(trace)(b) - encode_with(eager)(b)).max()) for b in batches["8 queries"][:5])
    load = machine_load()
    rows: dict[str, dict[str, list[float]]] = {}
    for _ in range(args.rounds):
        for setting in ("alone", "beside a busy Python thread"):
            for size, group in batches.items():
                for way, forward in (("traced", trace), ("eager", eager)):
                    key = f"{size}, {setting}"
                    if setting == "alone":
                        spent = timed_ms(encode_with(forward), group)
                    else:
                        with BusyPython():
                            spent = timed_ms(encode_with(forward), group)
                    rows.setdefault(key, {}).setdefault(way, []).extend(spent)
    result = {
        "model": MODEL,
        "torch_threads": torch.get_num_threads(),
        "max_vector_difference": difference,
        "load_before": load,
        "load_after": machine_load(),
        "p50_ms": {
            key: {
                "traced": round(statistics.median(ways["traced"]), 2),
                "eager": round(statistics.median(ways["eager"]), 2),
                "eager_over_traced": round(statistics.median(ways["eager"]) / statistics.median(ways["traced"]), 2),
            }
            for key, ways in rows.items()
        },
    }
    for key, row in result["p50_ms"].items():
        print(f"{key}: traced {row['traced']} ms, eager {row['eager']} ms", flush=True)
    print("written", write_result("encoder_beside_python", result))
    return result


if __name__ == "__main__":
    main()
