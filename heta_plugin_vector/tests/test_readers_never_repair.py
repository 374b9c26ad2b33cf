"""A collection opened while another process holds the knowledge base's writer lock repairs nothing.

The collection writes metadata rows (SQLite, at once) and vectors (index.faiss, on flush) at
different moments. Opening it reconciles the two, which repairs a crashed writer's leftovers,
but in a reader the same mismatch is a live writer between its two writes: deleting those rows
(or writing index.faiss on close) destroyed the writer's work (issue 13: FAISS and metadata
counts diverged after concurrent use).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
from heta_plugin_vector.store import FaissVectorStore

HOLD = textwrap.dedent(
    """
    import sys, time
    from heta_framework.kb.lock import WriterLock
    WriterLock(sys.argv[1], "built").acquire()
    print("locked", flush=True)
    time.sleep(600)
    """
)


def _vectors(count: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(count, 8)).astype(np.float32)


def test_a_reader_neither_deletes_a_writers_fresh_rows_nor_writes_the_index(tmp_path):
    writer = FaissVectorStore.open(None, tmp_path).collection("chunks", dimension=8)
    writer.upsert([f"a{i}" for i in range(3)], _vectors(3, 1), [{"document_id": "a"}] * 3)
    writer.flush()
    # the writer between its two writes: 2 more rows committed, their vectors not flushed yet
    writer.upsert(["b0", "b1"], _vectors(2, 2), [{"document_id": "b"}] * 2)
    index_file = tmp_path / "vectors" / "chunks" / "index.faiss"
    before = index_file.stat().st_mtime_ns
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        reader = FaissVectorStore.open(None, tmp_path)
        seen = reader.collection("chunks")
        assert len(seen) == 3  # the flushed vectors
        assert seen.search(_vectors(1, 1)[:1], top_k=5)[0]
        reader.close()
        assert index_file.stat().st_mtime_ns == before  # the reader wrote nothing
    finally:
        holder.kill()
        holder.wait()
    writer.flush()
    writer.close()
    again = FaissVectorStore.open(None, tmp_path).collection("chunks")
    assert len(again) == 5  # nothing the writer wrote was lost
    assert set(again.get_metadata(["a0", "b0", "b1"])) == {"a0", "b0", "b1"}
