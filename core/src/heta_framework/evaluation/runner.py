"""Run an evaluation set through knowledge bases and modes; one result line per (recipe, mode, query).

Every finished query is appended to ``results.jsonl`` in the output folder at once, so
an evaluation that is killed and started again skips what it already measured (the
lines are the state; ``run.json`` beside them records what they were measured on).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any

import attrs

from heta_framework.errors import EvaluationError, HetaError
from heta_framework.evaluation.datasets import EvalQuery, EvalSet
from heta_framework.evaluation.metrics import answer_metrics, document_metrics, evidence_recall_at_k, ranked_documents
from heta_framework.runtime.step_context import ProgressFactory, no_progress

log = logging.getLogger(__name__)

RESULTS_FILE = "results.jsonl"
RUN_FILE = "run.json"


def result_documents(result: Any) -> list[str]:
    """The documents a result speaks for: its own, or (a graph fact) those of its evidence chunks."""
    if result.document_id:
        return [result.document_id]
    return [e.document_id for e in result.evidence if e.document_id]


def result_texts(result: Any) -> list[str]:
    return [result.text, *(e.text for e in result.evidence)]


class GoldResolver:
    """Maps the names a user gives gold documents (id, file name, path suffix, stem) to a knowledge base's ids."""

    def __init__(self, documents: Mapping[str, Any]):
        self._aliases: dict[str, set[str]] = {}
        for document_id, record in documents.items():
            names = {document_id, record.name, PurePath(record.name).stem}
            parts = PurePath(record.source).parts if record.source else ()
            names |= {"/".join(parts[i:]) for i in range(len(parts))}
            for name in names:
                if name:
                    self._aliases.setdefault(name, set()).add(document_id)
        self.unmatched: set[str] = set()

    def relevance(self, query: EvalQuery) -> dict[str, float]:
        resolved: dict[str, float] = {}
        for gold, grade in query.relevance.items():
            ids = self._aliases.get(gold) or self._aliases.get(gold.strip("/"))
            if not ids:
                self.unmatched.add(gold)
                ids = {gold}  # stays a miss: no result can carry it
            for document_id in ids:
                resolved[document_id] = max(grade, resolved.get(document_id, 0.0))
        return resolved


class LanguageCallCounter:
    """Counts calls to the knowledge base's language models (every ``models.language*`` component)."""

    def __init__(self, kb: Any):
        self.calls = 0
        self.active = False
        for key in sorted(kb.component_keys):
            if key.startswith("models.language"):
                self._wrap(kb.get_component(key))

    def _wrap(self, client: Any) -> None:
        original = client.complete

        async def complete(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return await original(*args, **kwargs)

        try:
            client.complete = complete
        except (AttributeError, TypeError):  # a client that refuses new attributes: its calls go uncounted
            log.warning("cannot count the calls of %s", type(client).__name__)
            return
        self.active = True


def fingerprint(eval_set: EvalSet, k: int, answer: bool) -> str:
    digest = hashlib.sha256(json.dumps([k, answer, [(q.id, q.text) for q in eval_set.queries]]).encode("utf-8"))
    return digest.hexdigest()[:16]


class ResultLog:
    """``results.jsonl``: read what an earlier run finished; append each new result and flush it."""

    def __init__(self, folder: Path, eval_set: EvalSet, k: int, answer: bool, fresh: bool = False):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / RESULTS_FILE
        run = {"dataset": eval_set.name, "queries": len(eval_set.queries), "k": k, "answer": answer, "fingerprint": fingerprint(eval_set, k, answer)}
        run_file = folder / RUN_FILE
        if fresh:
            self.path.unlink(missing_ok=True)
        elif run_file.exists() and self.path.exists():
            before = json.loads(run_file.read_text(encoding="utf-8"))
            if before.get("fingerprint") != run["fingerprint"]:
                raise EvaluationError(
                    f"{folder} holds results of another evaluation ({before.get('dataset')}, k={before.get('k')}). "
                    "Choose another output folder, or start again with --fresh."
                )
        run_file.write_text(json.dumps(run, indent=2) + "\n", encoding="utf-8")
        self.rows: list[dict[str, Any]] = []
        if self.path.exists():
            with self.path.open(encoding="utf-8") as lines:
                for line in lines:
                    try:
                        self.rows.append(json.loads(line))
                    except json.JSONDecodeError:  # the last line of a killed run may be cut short
                        continue
        self.done = {(r["recipe"], r["mode"], r["query_id"]) for r in self.rows}
        self.resumed = len(self.rows)
        self._file = self.path.open("a", encoding="utf-8")
        if self.path.stat().st_size and not self.path.read_bytes().endswith(b"\n"):
            self._file.write("\n")

    def append(self, row: dict[str, Any]) -> None:
        self._file.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._file.flush()
        self.rows.append(row)
        self.done.add((row["recipe"], row["mode"], row["query_id"]))

    def close(self) -> None:
        self._file.close()


async def measure_query(kb: Any, query: EvalQuery, relevance: Mapping[str, float], mode: str, k: int, answer: bool,
                        counter: LanguageCallCounter) -> dict[str, Any]:
    """One query in one mode: its metrics, latency and language-model calls."""
    calls_before = counter.calls
    started = time.perf_counter()
    try:
        response = await kb.query(query.text, mode=mode, top_k=k, options={"answer": True} if answer else {})
    except HetaError as exc:
        return {"error": str(exc), "latency_s": time.perf_counter() - started}
    seconds = time.perf_counter() - started
    pairs = [(document_id, result.score) for result in response.results for document_id in result_documents(result)]
    ranking = ranked_documents(pairs)
    texts = [" ".join(result_texts(result)) for result in response.results]
    row: dict[str, Any] = {"latency_s": round(seconds, 6), "ranking": ranking[:k]}
    row["metrics"] = {
        **(document_metrics(ranking, relevance, k) if relevance else {}),
        **({f"evidence_recall@{k}": evidence_recall_at_k(texts, query.evidence, k)} if query.evidence else {}),
        **(answer_metrics(response.answer, query.answer) if answer else {}),
    }
    if counter.active:
        row["llm_calls"] = counter.calls - calls_before
    if response.usage.get("models"):  # the query's model calls, tokens and cost (summed per mode in the report)
        row["usage"] = dict(response.usage)
    issues = response.metadata.get("issues") or ()
    if issues:
        row["issues"] = sorted({issue.get("code", "") for issue in issues})
    return row


@attrs.frozen
class Target:
    """A knowledge base to evaluate, under the name its results carry (a recipe's name)."""

    name: str
    kb: Any


async def run_evaluation(
    eval_set: EvalSet,
    targets: Sequence[Target],
    output: Path,
    *,
    modes: Sequence[str] = (),
    k: int = 10,
    answer: bool = False,
    fresh: bool = False,
    progress: ProgressFactory = no_progress,
    on_skip: Callable[[str, str, str], None] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Measure every query of ``eval_set`` in every mode of every target; returns (rows, notes)."""
    results = ResultLog(output, eval_set, k, answer, fresh=fresh)
    notes: dict[str, Any] = {"resumed": results.resumed, "skipped": {}, "unmatched_gold": {}}
    try:
        for target in targets:
            kb = target.kb
            resolver = GoldResolver(kb.documents)
            relevance = {q.id: resolver.relevance(q) for q in eval_set.queries}
            if resolver.unmatched and kb.documents:  # an empty catalog (results from elsewhere) has nothing to match
                notes["unmatched_gold"][target.name] = sorted(resolver.unmatched)[:20]
            counter = LanguageCallCounter(kb)
            available = list(kb.available_queries)
            for mode in modes or available:
                if mode not in available:
                    reason = "; ".join(kb.unavailable_queries().get(mode, [])) or "no plugin provides it"
                    notes["skipped"].setdefault(target.name, {})[mode] = reason
                    if on_skip:
                        on_skip(target.name, mode, reason)
                    continue
                pending = [q for q in eval_set.queries if (target.name, mode, q.id) not in results.done]
                task = progress(f"{target.name} {mode}", len(eval_set.queries))
                task.advance(len(eval_set.queries) - len(pending))
                for query in pending:
                    row = await measure_query(kb, query, relevance[query.id], mode, k, answer, counter)
                    results.append({"recipe": target.name, "mode": mode, "query_id": query.id, **row})
                    task.advance()
                task.close()
    finally:
        results.close()
    wanted = {(t.name, m) for t in targets for m in (modes or t.kb.available_queries)}
    query_ids = {q.id for q in eval_set.queries}
    rows = [r for r in results.rows if (r["recipe"], r["mode"]) in wanted and r["query_id"] in query_ids]
    return rows, notes

