"""Helper processes that take Whoosh searches while this process's own searcher is busy.

Whoosh is pure Python: two searches in one process only take turns on the GIL,
so 8 queries in flight were answered no faster than one at a time. A helper is a
separate interpreter with its own GIL. It opens the same index folder read-only
and answers searches the parent has already analysed (terms and filter groups),
so its hits are exactly the parent's. Helpers start on the first search that
finds the parent's searcher busy; a process that queries one at a time never
starts one.

The protocol is one JSON object per line over the helper's stdin and stdout:

- request: ``{"generation": int, "terms": [...], "groups": [[...], ...], "top_k": int}``
- answer: ``{"hits": [[chunk_id, text, record, score], ...]}`` or ``{"error": "..."}``

A helper reopens its searcher when the generation differs from the one it last
searched (the parent's store bumps it on every commit). A helper that fails or
exits is dropped and the search runs in the parent, so helpers can make
searches faster but never lose one. The helper runs as
``python -m heta_plugin_fulltext.search_processes FOLDER SETTINGS``, not through
``multiprocessing``, which would import the parent's ``__main__`` again.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import weakref
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from heta_plugin_fulltext.whoosh_search import HitRow

log = logging.getLogger(__name__)

#: how long a helper may take to open the index before it is given up
START_TIMEOUT_S = 60.0


class _Helper:
    """One helper process; its lock makes it answer one search at a time."""

    def __init__(self, process: subprocess.Popen[str]):
        self.process = process
        self.lock = threading.Lock()
        self.alive = True

    def search(self, request: Mapping[str, Any]) -> list[HitRow] | None:
        """The helper's hits, or None when it failed (then it is marked dead and never asked again)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()  # blocks without the GIL: the parent's own searcher goes on
            answer = json.loads(line) if line else None
        except (OSError, ValueError):  # a closed pipe, or a line that is not the protocol's: the helper is lost
            answer = None
        if answer is None:
            self.alive = False
            log.warning("a full-text helper process exited (code %s); its searches run in this process",
                        self.process.poll())
            return None
        if "error" in answer:
            # the parent searches again itself: a real problem with the index then raises there, with its traceback
            log.warning("a full-text helper process failed a search (%s); searching in this process", answer["error"])
            return None
        return [(chunk_id, text, record, float(score)) for chunk_id, text, record, score in answer["hits"]]

    def stop(self) -> None:
        self.alive = False
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()  # the helper's loop ends on end of input
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            if self.process.stdout is not None:
                self.process.stdout.close()


def _stop_all(helpers: list[_Helper]) -> None:
    for helper in list(helpers):
        helper.stop()
    helpers.clear()


class HelperSearches:
    """Up to ``count`` helper processes for one Whoosh index folder, started on first need."""

    def __init__(self, count: int, folder: Path, settings: Mapping[str, Any]):
        self._count = count
        self._command = [sys.executable, "-m", __name__, str(folder), json.dumps(dict(settings))]
        self._helpers: list[_Helper] = []
        self._starting: threading.Thread | None = None
        self._start_lock = threading.Lock()
        #: searches the helpers answered (the parent answered the rest)
        self.served = 0
        # a store dropped without close() must not leave processes behind
        self._finalizer = weakref.finalize(self, _stop_all, self._helpers)

    def search(self, generation: int, terms: Sequence[str], groups: Sequence[Collection[str]], top_k: int) -> list[HitRow] | None:
        """Hits from a free helper, or None when none is free (still starting, all busy, or gone)."""
        self._start_once()
        for helper in list(self._helpers):
            if helper.alive and helper.lock.acquire(blocking=False):
                try:
                    rows = helper.search({"generation": generation, "terms": list(terms),
                                          "groups": [list(group) for group in groups], "top_k": top_k})
                finally:
                    helper.lock.release()
                if rows is not None:
                    self.served += 1
                    return rows
        return None

    def wait_started(self, timeout: float = START_TIMEOUT_S) -> bool:
        """Start the helpers if they are not yet and wait until they are (True when at least one is ready)."""
        self._start_once()
        starting = self._starting
        if starting is not None:
            starting.join(timeout)
        return any(helper.alive for helper in self._helpers)

    def processes(self) -> list[subprocess.Popen[str]]:
        return [helper.process for helper in self._helpers]

    def stop(self) -> None:
        """Stop every helper; the next search that finds the parent busy starts them again."""
        with self._start_lock:
            starting, self._starting = self._starting, None
        if starting is not None:
            starting.join(START_TIMEOUT_S)
        _stop_all(self._helpers)

    def _start_once(self) -> None:
        if self._starting is not None:
            return
        with self._start_lock:
            if self._starting is None:
                # in the background: the search that asked goes on in the parent meanwhile
                self._starting = threading.Thread(target=self._start, name="heta-fulltext-helpers", daemon=True)
                self._starting.start()

    def _start(self) -> None:
        package_root = str(Path(__file__).resolve().parent.parent)  # the helper imports this very package
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        for _ in range(self._count):
            try:
                process = subprocess.Popen(
                    self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    text=True, encoding="utf-8", env=environment,
                )
            except OSError as exc:
                log.warning("could not start a full-text helper process (%s); searches run in this process", exc)
                return
            helper = _Helper(process)
            ready = _read_line_within(process, START_TIMEOUT_S)
            if ready != "ready\n":
                helper.stop()
                log.warning("a full-text helper process did not start (exit code %s); searches run in this process",
                            process.poll())
                return
            self._helpers.append(helper)


def _read_line_within(process: subprocess.Popen[str], timeout: float) -> str:
    """The process's next stdout line, or "" when none comes within ``timeout`` seconds (the process is killed)."""
    assert process.stdout is not None
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        process.kill()
        reader.join()
        return ""
    return line[0] if line else ""


def serve(folder: str, settings: Mapping[str, Any]) -> None:
    """The helper's loop: answer requests from stdin on stdout until stdin ends."""
    from whoosh import index as whoosh_index
    from whoosh.scoring import BM25F

    from heta_plugin_fulltext.whoosh_search import search_rows, whoosh_schema

    answers = sys.stdout
    sys.stdout = sys.stderr  # nothing printed by a library may reach the protocol
    index = whoosh_index.open_dir(folder, schema=whoosh_schema(settings["analyzer"]))
    weighting = BM25F(B=settings["b"], K1=settings["k1"])
    searcher = index.searcher(weighting=weighting)
    generation = None
    answers.write("ready\n")
    answers.flush()
    for line in sys.stdin:
        try:
            request = json.loads(line)
            if request["generation"] != generation:
                # a new searcher, not searcher.refresh(): a refreshed one reuses its segment readers and with
                # them their deletions from before the commit
                searcher.close()
                searcher = index.searcher(weighting=weighting)
                generation = request["generation"]
            answer: dict[str, Any] = {"hits": search_rows(searcher, request["terms"], request["groups"], request["top_k"])}
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which searches itself
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        answers.write(json.dumps(answer, ensure_ascii=False) + "\n")
        answers.flush()
    searcher.close()


if __name__ == "__main__":
    serve(sys.argv[1], json.loads(sys.argv[2]))
