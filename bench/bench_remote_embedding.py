"""Remote embedding throughput against a loopback OpenAI-compatible server answering after 200 ms per call.

Two paths, each at concurrency 1, 4 and 16 (the bound on batches in flight):

``embed_chunks``  a build of ParseDocuments, SplitDocuments, EmbedChunks(batch_size=8, concurrency=N) with
                  ``openai/bench-embedding`` (the real openai client on 127.0.0.1); the provider's own gate
                  (``options.concurrency``) is set to N too, so the step's option is the bound measured.
``graph_texts``   ``heta_plugin_graph.vectors.embed_texts`` (what build_graph, dedup and merge embed through)
                  on short entity-like texts, 8 per call (the provider's ``batch_size``), same server.

Throughput is texts per second; ``server_max_in_flight`` is the largest number of requests the server saw at
once (it must equal the bound while there are enough batches). Writes bench/results/remote_embedding.json.

    python bench/bench_remote_embedding.py            # ~15 s
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Timer, write_result  # noqa: E402

DELAY = 0.2  # seconds the server takes per call
LEVELS = (1, 4, 16)
BATCH = 8  # texts per call on both paths


def answer(request):
    from heta_framework.testing.http import Reply, embeddings_body

    # a vector that depends on the text, so a mix-up of batches would show in the index (the tests check it)
    return Reply(body=embeddings_body([[float(len(text)), 1.0, 0.5] for text in request.json["input"]]), delay=DELAY)


def model(server, level: int):
    from heta_framework.common.models import EmbeddingModel

    return EmbeddingModel(model_name="openai/bench-embedding", base_url=server.base_url, api_key="sk-bench",
                          options={"timeout": 30, "concurrency": level, "batch_size": BATCH, "dimension": 3})


async def embed_chunks(work: Path, level: int, texts: int) -> dict:
    from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
    from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
    from heta_framework.testing.http import ScriptedServer

    from heta_plugin_vector import EmbedChunks

    documents = [SourceDocument(id=f"d{n}", name=f"d{n}.txt", text=f"Document {n} is about topic number {n * 7}.") for n in range(texts)]
    with ScriptedServer() as server:
        server.respond("embeddings", answer)
        recipe = Recipe(models=KnowledgeModels(embedding=model(server, level)),
                        steps=[ParseDocuments(), SplitDocuments(), EmbedChunks(batch_size=BATCH, concurrency=level)])
        kb = KnowledgeBase.create(work / f"chunks-{level}", recipe)
        report = await kb.build(documents)
        kb.close()
        step = next(s for s in report.steps if s.name == "embed_chunks")
        return {"concurrency": level, "texts": step.stats["embedded_texts"], "calls": len(server.requests),
                "seconds": round(step.seconds, 2), "texts_per_s": round(step.stats["embedded_texts"] / step.seconds, 1),
                "server_max_in_flight": server.max_in_flight}


async def graph_texts(level: int, texts: int) -> dict:
    from heta_framework.testing.http import ScriptedServer
    from heta_plugin_graph.vectors import embed_texts
    from heta_plugin_openai.embedding import OpenAIEmbeddingClient

    names = [f"Entity number {n} (person)" for n in range(texts)]
    with ScriptedServer() as server:
        server.respond("embeddings", answer)
        client = OpenAIEmbeddingClient(model(server, level))
        with Timer() as timer:
            # one batch per call, ``level`` of them at once: the graph's own bound, as build_graph uses it
            vectors = await embed_texts(client, names, batch_size=BATCH, concurrency=level)
        await client.aclose()
        assert vectors.shape == (texts, 3)
        return {"concurrency": level, "texts": texts, "calls": len(server.requests), "seconds": round(timer.seconds, 2),
                "texts_per_s": round(texts / timer.seconds, 1), "server_max_in_flight": server.max_in_flight}


async def main(texts: int) -> dict:
    result: dict = {"delay_s": DELAY, "texts_per_call": BATCH, "embed_chunks": [], "graph_texts": []}
    with tempfile.TemporaryDirectory(prefix="heta-bench-remote-") as work:
        for level in LEVELS:
            result["embed_chunks"].append(await embed_chunks(Path(work), level, texts))
            result["graph_texts"].append(await graph_texts(level, texts))
            for path in ("embed_chunks", "graph_texts"):
                row = result[path][-1]
                print(f"  {path:12s} concurrency {level:>2}: {row['texts_per_s']:>7} texts/s "
                      f"({row['calls']} calls, max in flight {row['server_max_in_flight']})", flush=True)
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=256, help="texts per run (256 at 8 per call: 32 calls)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(f"wrote {write_result('remote_embedding', asyncio.run(main(args.texts)))}")
