"""One huge document against many small ones: does full-text indexing time per chunk grow with a document's size?

The same text (Wikipedia articles from the bench data set, repeated to the size asked for)
is built twice with parse_documents, split_documents and index_full_text: once as a single
file, once as files of about 128 KB each. Reported: seconds and milliseconds per chunk of
each step, for both layouts, and their ratio. Whoosh is the default store; ``--backend
tantivy`` measures the other one.

    python bench/bench_big_document.py                # about 40k chunks (a 50 MB file in issue 13)
    python bench/bench_big_document.py --mb 12        # quicker
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

import heta_plugin_fulltext
from common import load_articles, machine_load, write_result
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, StoreConfig
from heta_framework.testing import make_registry
from heta_plugin_fulltext import IndexFullText

FILE_BYTES = 128 * 1024


def corpus(megabytes: float) -> str:
    articles = [a["text"] for a in load_articles()]
    wanted = int(megabytes * 1024 * 1024)
    pieces, size, index = [], 0, 0
    while size < wanted:
        text = articles[index % len(articles)]
        pieces.append(text)
        size += len(text.encode("utf-8")) + 2
        index += 1
    return "\n\n".join(pieces)


def write_layout(text: str, folder: Path, single: bool) -> None:
    folder.mkdir(parents=True)
    if single:
        (folder / "everything.txt").write_text(text, encoding="utf-8")
        return
    data = text.encode("utf-8")
    for number, start in enumerate(range(0, len(data), FILE_BYTES)):
        # cut at a paragraph so no word is split between files
        piece = data[start:start + FILE_BYTES].decode("utf-8", errors="ignore")
        (folder / f"part{number:05d}.txt").write_text(piece, encoding="utf-8")


def build(folder: Path, work: Path, backend: str) -> dict:
    recipe = Recipe(
        stores={"text": StoreConfig(type=backend)},
        steps=[ParseDocuments(max_document_mb=1024), SplitDocuments(), IndexFullText()],
    )
    kb = KnowledgeBase.create(work, recipe, registry=make_registry(heta_plugin_fulltext))
    started = time.perf_counter()
    report = asyncio.run(kb.build([folder]))
    total = time.perf_counter() - started
    kb.close()
    chunks = next(s.stats["chunks"] for s in report.steps if s.name == "split_documents")
    steps = {s.name: {"seconds": round(s.seconds, 2), "ms_per_chunk": round(1000 * s.seconds / chunks, 3)} for s in report.steps}
    return {"documents": report.document_count, "chunks": chunks, "seconds": round(total, 2), "steps": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the text (default 50 MB, about 40k chunks)")
    parser.add_argument("--backend", default="whoosh", choices=("whoosh", "tantivy"))
    args = parser.parse_args()
    text = corpus(args.mb)
    results = {}
    with tempfile.TemporaryDirectory(prefix="heta-big-document-") as scratch:
        root = Path(scratch)
        for layout, single in (("one_file", True), ("many_files", False)):
            write_layout(text, root / layout / "docs", single)
            results[layout] = build(root / layout / "docs", root / layout / "kb", args.backend)
            shutil.rmtree(root / layout)
            print(layout, results[layout], flush=True)
    one = results["one_file"]["steps"]["index_full_text"]["ms_per_chunk"]
    many = results["many_files"]["steps"]["index_full_text"]["ms_per_chunk"]
    write_result("big_document", {
        "megabytes": args.mb,
        "backend": args.backend,
        "layouts": results,
        "index_full_text_ms_per_chunk_ratio_one_vs_many": round(one / many, 3),
        "machine_load": machine_load(),
    })


if __name__ == "__main__":
    main()
