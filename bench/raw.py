"""The raw libraries doing Heta's work, written the way a user would write them by hand.

Every benchmark compares a Heta step or mode with one of these, on the same
texts in the same run: SQLite FTS5 for ``persist_chunks`` / ``sql_text_search``,
Whoosh and tantivy for ``index_full_text`` / ``full_text_search``,
sentence-transformers + ``faiss.IndexFlatIP`` for ``embed_chunks`` /
``index_vectors`` / ``vector_search``, and bm25s as the plain-library quality
reference.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

TOP_K = 10


# --- SQLite FTS5 -------------------------------------------------------------------------------


def sqlite_index(path: Path, chunks: Sequence[tuple[str, str]]) -> sqlite3.Connection:
    """The chunk store's own schema and FTS5 table, written with plain sqlite3 in one transaction."""
    from heta_framework.builtin.stores.sqlite_chunks import _SCHEMA, fts_body

    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(_SCHEMA)
    db.execute("BEGIN")
    for chunk_id, text in chunks:
        rowid = db.execute(
            "INSERT INTO chunks (id, document_id, chunk_index, text, start, end, source, page, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (chunk_id, "d", 0, text, 0, len(text), "s", None, "{}"),
        ).lastrowid
        db.execute("INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)", (rowid, fts_body(text)))
    db.execute("COMMIT")
    return db


def sqlite_searcher(db: sqlite3.Connection, k: int = TOP_K) -> Callable[[str], list]:
    from heta_framework.builtin.stores.sqlite_chunks import fts_match_expression

    def search(text: str) -> list:
        return db.execute(
            "SELECT chunks.id, chunks.text, bm25(chunks_fts) AS r FROM chunks_fts JOIN chunks ON chunks.rowid = chunks_fts.rowid"
            " WHERE chunks_fts MATCH ? ORDER BY r LIMIT ?",
            (fts_match_expression(text), k),
        ).fetchall()

    return search


# --- Whoosh and tantivy --------------------------------------------------------------------------


def whoosh_index(folder: Path, chunks: Sequence[tuple[str, str]]):
    from whoosh import index
    from whoosh.analysis import StemmingAnalyzer
    from whoosh.fields import ID, TEXT, Schema

    schema = Schema(id=ID(stored=True, unique=True), text=TEXT(analyzer=StemmingAnalyzer(), stored=True))
    folder.mkdir(parents=True)
    ix = index.create_in(folder, schema)
    writer = ix.writer(limitmb=256)
    for chunk_id, text in chunks:
        writer.add_document(id=chunk_id, text=text)
    writer.commit()
    return ix


def open_whoosh(folder: Path):
    """The index ``whoosh_index`` wrote, opened again (the query stage runs in another process)."""
    from whoosh import index

    return index.open_dir(folder)


def whoosh_searcher(ix, k: int = TOP_K) -> Callable[[str], list]:
    from whoosh.qparser import OrGroup, QueryParser
    from whoosh.scoring import BM25F

    parser = QueryParser("text", ix.schema, group=OrGroup)
    searcher = ix.searcher(weighting=BM25F())

    def search(text: str) -> list:
        return [(hit["id"], hit["text"], hit.score) for hit in searcher.search(parser.parse(text), limit=k)]

    return search


def tantivy_index(folder: Path, chunks: Sequence[tuple[str, str]]):
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("text", stored=True, tokenizer_name="en_stem")
    schema = builder.build()
    folder.mkdir(parents=True)
    ix = tantivy.Index(schema, path=str(folder))
    writer = ix.writer(heap_size=128_000_000)
    for chunk_id, text in chunks:
        writer.add_document(tantivy.Document(id=chunk_id, text=text))
    writer.commit()
    writer.wait_merging_threads()
    ix.reload()
    return ix


def tantivy_searcher(ix) -> Callable[[str], list]:
    searcher = ix.searcher()

    def search(text: str) -> list:
        query, _errors = ix.parse_query_lenient(text, ["text"])
        found = []
        for score, address in searcher.search(query, limit=TOP_K, count=False).hits:
            document = searcher.doc(address)
            found.append((document.get_first("id"), document.get_first("text"), score))
        return found

    return search


# --- bm25s -----------------------------------------------------------------------------------------


def bm25s_index(texts: Sequence[str]):
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(list(texts), stopwords="en", show_progress=False), show_progress=False)
    return retriever


def bm25s_search(retriever, queries: Sequence[str], k: int) -> np.ndarray:
    """Row i: indices of the texts best matching query i."""
    import bm25s

    found, _scores = retriever.retrieve(bm25s.tokenize(list(queries), stopwords="en", show_progress=False), k=k, show_progress=False, n_threads=1)
    return found


# --- sentence-transformers + FAISS ---------------------------------------------------------------------


def sentence_transformer():
    from heta_plugin_local import load_sentence_transformer, resolve_model_folder

    return load_sentence_transformer(resolve_model_folder("all-MiniLM-L6-v2"))


def encode(model, texts: Sequence[str]) -> np.ndarray:
    return np.asarray(model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)


def faiss_flat(vectors: np.ndarray, path: Path | None = None):
    """An exact inner-product index of ``vectors``, written to ``path`` when given (as a persisted index is)."""
    import faiss

    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    if path is not None:
        faiss.write_index(index, str(path))
    return index


def faiss_read(path: Path):
    import faiss

    return faiss.read_index(str(path))


def rrf(rankings: Sequence[Sequence[str]], k: int = 60, depth: int = 30) -> list[str]:
    """Plain reciprocal rank fusion, the one-liner a user would write."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking[:depth], start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda item: -scores[item])
