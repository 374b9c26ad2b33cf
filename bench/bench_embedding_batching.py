"""Token-budget batching of the local provider vs sentence-transformers' own batches, and embed_chunks vs raw encode.

Texts from the bench articles, three kinds: entity names (``Title (TYPE)``, ~8 tokens), relation sentences
(one article sentence of 100-220 characters, ~29 tokens) and chunk texts (an article's first 150 words).

``batching``       per kind, alternating in one process: ``SentenceTransformer.encode(texts, batch_size=32)``
                   (what every caller got before) vs ``LocalEmbeddingClient`` (token-budget batches); texts/s,
                   the ratio, and the largest difference between the two vectors of a text.
``embed_chunks``   a build of ParseDocuments, SplitDocuments, EmbedChunks on the chunk texts (one chunk per
                   document; a fresh KB each round) vs ``SentenceTransformer.encode`` on the same texts,
                   alternating; the step's own seconds against the raw call.

Writes bench/results/embedding_batching.json.

    python bench/bench_embedding_batching.py --names 2000 --sentences 1000 --chunks 300 --rounds 2   # ~2 min
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Timer, load_articles, machine_load, write_result  # noqa: E402

MODEL = "local/all-MiniLM-L6-v2"
SENTENCE = re.compile(r"[^.!?]{100,220}[.!?]")


def texts_of(articles: list[dict], names: int, sentences: int, chunks: int) -> dict[str, list[str]]:
    name_texts = [f"{a['title']} ({a['description'] or 'THING'})"[:80] for a in articles[:names]]
    sentence_texts: list[str] = []
    for article in articles:
        sentence_texts += [s.strip() for s in SENTENCE.findall(article["text"])]
        if len(sentence_texts) >= sentences:
            break
    chunk_texts = [" ".join(a["text"].split()[:150]) for a in articles if len(a["text"].split()) >= 60][:chunks]
    return {"entity_names": name_texts, "relation_sentences": sentence_texts[:sentences], "chunk_texts": chunk_texts}


def raw_encode(model, texts: list[str]) -> np.ndarray:
    return np.asarray(model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                                   show_progress_bar=False), dtype=np.float32)


def sentence_transformer(client):
    """The raw reference: ``SentenceTransformer`` on the client's folder (the client itself runs transformers alone)."""
    from heta_plugin_local import load_sentence_transformer

    return load_sentence_transformer(client.folder)


def batching(client, kinds: dict[str, list[str]], rounds: int) -> dict:
    model = sentence_transformer(client)
    out = {}
    for kind, texts in kinds.items():
        before, after, diff = [], [], 0.0
        for _ in range(rounds):
            with Timer() as t:
                reference = raw_encode(model, texts)
            before.append(t.seconds)
            with Timer() as t:
                vectors = client.encode(texts)
            after.append(t.seconds)
            diff = max(diff, float(np.abs(vectors - reference).max()))
        b, a = min(before), min(after)
        out[kind] = {"texts": len(texts), "batch32_texts_per_s": round(len(texts) / b, 1),
                     "token_budget_texts_per_s": round(len(texts) / a, 1), "speedup": round(b / a, 2),
                     "max_abs_vector_difference": diff}
        print(f"  {kind:20s} batch 32 {out[kind]['batch32_texts_per_s']:>7} texts/s, token budget "
              f"{out[kind]['token_budget_texts_per_s']:>7} ({out[kind]['speedup']}x), max diff {diff:.1e}", flush=True)
    return out


async def embed_chunks_vs_raw(client, texts: list[str], rounds: int) -> dict:
    from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
    from heta_framework.common.models import EmbeddingModel
    from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument

    from heta_plugin_vector import EmbedChunks

    documents = [SourceDocument(id=f"c{n}", name=f"c{n}.txt", text=text) for n, text in enumerate(texts)]
    recipe = Recipe(models=KnowledgeModels(embedding=EmbeddingModel(model_name=MODEL)),
                    steps=[ParseDocuments(), SplitDocuments(chunk_size=200, chunk_overlap=0), EmbedChunks()])
    step_seconds, raw_seconds, embedded = [], [], 0
    model = sentence_transformer(client)
    with tempfile.TemporaryDirectory(prefix="heta-bench-batching-") as work:
        for n in range(rounds):
            kb = KnowledgeBase.create(Path(work) / f"kb{n}", recipe)
            report = await kb.build(documents)
            kb.close()
            step = next(s for s in report.steps if s.name == "embed_chunks")
            step_seconds.append(step.seconds)
            embedded = step.stats["embedded_texts"]
            with Timer() as t:
                raw_encode(model, texts)
            raw_seconds.append(t.seconds)
    s, r = min(step_seconds), min(raw_seconds)
    result = {"texts": len(texts), "embedded_texts": embedded, "embed_chunks_s": round(s, 2), "raw_encode_s": round(r, 2),
              "embed_chunks_texts_per_s": round(embedded / s, 1), "raw_texts_per_s": round(len(texts) / r, 1),
              "ratio_vs_raw": round((embedded / s) / (len(texts) / r), 2)}
    print(f"  embed_chunks {result['embed_chunks_texts_per_s']} texts/s vs raw encode {result['raw_texts_per_s']} "
          f"({result['ratio_vs_raw']}x)", flush=True)
    return result


async def main(args: argparse.Namespace) -> dict:
    from heta_framework.common.models import EmbeddingModel
    from heta_plugin_local import create_client

    client = create_client(EmbeddingModel(model_name=MODEL))
    client.encode(["warm up"])
    kinds = texts_of(load_articles(), args.names, args.sentences, args.chunks)
    return {"machine": machine_load(), "rounds": args.rounds, "batching": batching(client, kinds, args.rounds),
            "embed_chunks": await embed_chunks_vs_raw(client, kinds["chunk_texts"], args.rounds)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=2000)
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(f"wrote {write_result('embedding_batching', asyncio.run(main(args)))}")
