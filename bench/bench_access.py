"""Query latency under an access scope that hides most of the knowledge base (issue #39).

Target: a query whose caller may read 10% of the documents (a ``document_id`` filter hiding 90%)
answers within 1.5× of the unfiltered query's p50 at the 10k tier, in ``vector_search``,
``full_text_search`` and ``heta_graph_search`` (``hybrid_search`` and ``sql_text_search`` are
measured for information), timed in turns on the same queries (``common.alternating``).

The knowledge base is bench_modes.py's 10k tier (the offline defaults: MiniLM + FAISS, Whoosh, the
nlp graph), copied so access lists can change without touching the original. Each document falls in
one of ten buckets by a hash of its id; two cases:

``90% hidden``  buckets 1-9 get ``["group:restricted"]``, bucket 0 stays public. The filtered query
                (no principals) sees 10% of the documents; the unfiltered one
                (``principals=["group:restricted"]``) may read every document, so no filter is applied.
``10% hidden``  bucket 0 alone is restricted: the filtered query's allow-list holds 90% of the documents,
                the other extreme (a long list pushed into every store).

Each side runs the same known-item queries (bench_modes' set), ``top_k=10``. Checked on every filtered
response: no result, and no evidence chunk of a graph fact, comes from a hidden document; the share of
full top-10 lists (a store that filtered after ranking would come back short); recall@10 of the queries
whose answer is visible. vector_search and heta_graph_search are also timed with the query vectors precomputed
(``without_model``), the model's ~10 ms taken out of both sides (on a busy machine the model takes far
longer and dilutes the ratio). For a target mode over 1.5×, with the model or without it, the stores' own
calls under the filter are timed apart (``filter_calls``) and the filtered query is profiled (``profile``).

Two runs on one --work folder would change each other's access lists mid-measurement: run one at a time.

Writes bench/results/access.json.

    python bench/bench_access.py --work /tmp/bm-access   # builds DIR/kb-10k when absent (~10 minutes idle, 35 loaded), else reuses it
    python bench/bench_access.py --work /tmp/bm --queries 100   # a quick look (writes DIR/access.json)
    python bench/bench_access.py --work /tmp/bm-access --only filter-calls   # the stores' calls again, into the results
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import faulthandler
import hashlib
import json
import logging
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_modes import CountedEmbeddings, kb_folder  # noqa: E402
from common import (  # noqa: E402
    RESULTS,
    Timer,
    alternating,
    known_item_queries,
    load_articles,
    machine_load,
    peak_memory_mb,
    percentiles_ms,
    write_result,
)

TARGET_MODES = ("vector_search", "full_text_search", "heta_graph_search")
INFO_MODES = ("hybrid_search", "sql_text_search")
EMBEDDING_MODES = ("vector_search", "heta_graph_search")  # timed again without the model (the target modes that embed)
TARGET_RATIO = 1.5
TOP_K = 10
DEFAULT_QUERIES = 400  # bench_modes' known-item set
RESTRICTED = "group:restricted"
CASES = {"90% hidden": lambda bucket: bucket != 0, "10% hidden": lambda bucket: bucket == 0}
PROFILE_QUERIES = 60
CHUNKS = "chunks"  # heta_plugin_vector's chunk collection; the graph's two below
GRAPH_COLLECTIONS = {"entities": "graph_entities", "relations": "graph_relations"}


def bucket(document_id: str) -> int:
    """0-9 from a hash of the id: the same documents are restricted on every run and machine."""
    return int.from_bytes(hashlib.sha256(document_id.encode("utf-8")).digest()[:8], "big") % 10


def built(folder: Path) -> bool:
    """A knowledge base whose last build finished."""
    record = folder / "run_record.json"
    runs = json.loads(record.read_text()).get("runs", []) if record.exists() else []
    return bool(runs) and runs[-1].get("status") == "done"


def prepare(work: Path) -> Path:
    """DIR/kb-10k-access: a copy of bench_modes' 10k knowledge base (built first when DIR has none)."""
    source = kb_folder(work, "10k")
    if not built(source):
        print(f"== no 10k knowledge base in {work}: building it with bench_modes.py's build-10k stage (~10 minutes)", flush=True)
        subprocess.run([sys.executable, str(BENCH / "bench_modes.py"), "--stage", "build-10k", "--work", str(work)], check=True)
    copy = work / "kb-10k-access"
    if not built(copy):
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("writer.lock"))
    return copy


def documents_of(result) -> list[str]:
    """Every document a result rests on: its own and, recursively, its evidence chunks' (graph facts)."""
    own = [result.document_id] if result.document_id else []
    return own + [d for evidence in result.evidence for d in documents_of(evidence)]


def set_case(kb, hidden: Callable[[int], bool]) -> dict:
    """Restrict the documents ``hidden`` picks (by bucket), every other document back to the default (public)."""
    ids = sorted(kb.documents)
    restricted = [d for d in ids if hidden(bucket(d))]
    public = [d for d in ids if not hidden(bucket(d))]
    with Timer() as t:
        kb.set_access(public, None)
        kb.set_access(restricted, [RESTRICTED])
    everyone, anonymous = kb.access_scope([RESTRICTED]), kb.access_scope()
    if everyone.visible is not None:
        raise SystemExit(f"{RESTRICTED} should read every document (no filter), but its scope hides some")
    visible = anonymous.visible
    if visible is None or len(visible) != len(public):
        raise SystemExit(f"the anonymous scope should see the {len(public)} public documents, sees {visible and len(visible)}")
    return {"documents": len(ids), "visible_documents": len(visible), "hidden_documents": len(restricted),
            "set_access_seconds": round(t.seconds, 3)}


def check(responses: Sequence, visible: frozenset[str], gold: Sequence[str]) -> dict:
    """What the filtered side returned: leaks (must be 0), full and empty lists, recall of visible answers."""
    leaked_results = leaked_evidence = 0
    full = empty = 0
    found = answerable = 0
    for response, answer in zip(responses, gold):
        results = response.results
        full += len(results) >= TOP_K
        empty += not results
        for result in results:
            if result.document_id and result.document_id not in visible:
                leaked_results += 1
            leaked_evidence += sum(d not in visible for evidence in result.evidence for d in documents_of(evidence))
            if not result.document_id and not result.evidence:
                leaked_results += 1  # a result that names no document cannot be shown to be readable
        if answer in visible:
            answerable += 1
            found += any(answer in documents_of(r) for r in results)
    n = len(responses)
    return {
        "results_from_hidden_documents": leaked_results,
        "evidence_from_hidden_documents": leaked_evidence,
        "full_top10_share": round(full / n, 3),
        "empty_share": round(empty / n, 3),
        "mean_results": round(statistics.mean(len(r.results) for r in responses), 2),
        "queries_with_visible_answer": answerable,
        "recall@10_visible_answers": round(found / answerable, 3) if answerable else None,
    }


def recall(responses: Sequence, gold: Sequence[str], among: frozenset[str] | None = None) -> float | None:
    pairs = [(r, g) for r, g in zip(responses, gold) if among is None or g in among]
    if not pairs:
        return None
    return round(sum(any(g in documents_of(x) for x in r.results) for r, g in pairs) / len(pairs), 3)


def side_by_side(unfiltered: Sequence[float], filtered: Sequence[float]) -> dict:
    u, f = percentiles_ms(unfiltered), percentiles_ms(filtered)
    return {
        "unfiltered_p50_ms": u["p50_ms"], "unfiltered_p95_ms": u["p95_ms"],
        "filtered_p50_ms": f["p50_ms"], "filtered_p95_ms": f["p95_ms"],
        "ratio_p50": round(f["p50_ms"] / u["p50_ms"], 3) if u["p50_ms"] else None,
        "ratio_p95": round(f["p95_ms"] / u["p95_ms"], 3) if u["p95_ms"] else None,
        "difference_p50_ms": round(f["p50_ms"] - u["p50_ms"], 3),
    }


async def measure_mode(kb, mode: str, texts: Sequence[str], gold: Sequence[str], visible: frozenset[str]) -> dict:
    kept: dict[str, list] = {"unfiltered": [], "filtered": []}

    def side(name: str, principals: list[str] | None):
        async def search(text: str):
            response = await kb.query(text, mode=mode, top_k=TOP_K, principals=principals)
            kept[name].append(response)

        return search

    unfiltered_s, filtered_s = await alternating(side("unfiltered", [RESTRICTED]), side("filtered", None), texts)
    unfiltered, filtered = kept["unfiltered"][-len(texts):], kept["filtered"][-len(texts):]  # not the warm-up
    entry = side_by_side(unfiltered_s, filtered_s)
    if mode in TARGET_MODES:
        entry["meets_target"] = entry["ratio_p50"] is not None and entry["ratio_p50"] <= TARGET_RATIO
    entry["correctness"] = check(filtered, visible, gold)
    entry["correctness"]["unfiltered_recall@10_visible_answers"] = recall(unfiltered, gold, visible)
    entry["correctness"]["unfiltered_full_top10_share"] = round(sum(len(r.results) >= TOP_K for r in unfiltered) / len(unfiltered), 3)
    return entry


async def without_model(kb, counted: CountedEmbeddings, vectors: dict, mode: str, texts: Sequence[str]) -> dict:
    """Both sides with the query vector precomputed: the filter's cost beside Heta's and FAISS's own path."""
    counted.precomputed = vectors
    try:
        unfiltered_s, filtered_s = await alternating(
            lambda t: kb.query(t, mode=mode, top_k=TOP_K, principals=[RESTRICTED]), lambda t: kb.query(t, mode=mode, top_k=TOP_K), texts)
    finally:
        counted.precomputed = None  # the other measurements run with the model, as a user's query does
    return side_by_side(unfiltered_s, filtered_s)


# --- where a filtered query's time goes --------------------------------------------------------------


def median_ms(function: Callable[[], object], repeat: int = 30) -> float:
    function()
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        seconds.append(time.perf_counter() - started)
    return round(statistics.median(seconds) * 1000, 3)


def turns_ms(unfiltered: Callable[[str], object], filtered: Callable[[str], object], texts: Sequence[str]) -> tuple[float, float]:
    """Median ms of two plain calls taking turns on the same texts (as ``common.alternating``)."""
    first, second = _turns(unfiltered, filtered, texts)
    return round(statistics.median(first) * 1000, 3), round(statistics.median(second) * 1000, 3)


def _turns(first: Callable[[str], object], second: Callable[[str], object], texts: Sequence[str]) -> tuple[list[float], list[float]]:
    first(texts[0]), second(texts[0])
    a: list[float] = []
    b: list[float] = []
    for position, text in enumerate(texts):
        order = ((first, a), (second, b))
        for function, seconds in order if position % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            function(text)
            seconds.append(time.perf_counter() - started)
    return a, b


def filter_calls(kb, texts: Sequence[str], vectors: dict) -> dict:
    """The stores' own calls under the anonymous caller's filter, each timed alone (median ms): what a filtered
    query adds, and where. Each store gets the filter object a query hands it (the scope's own, once per scope),
    so the stores' per-filter caches behave as they do for a query."""
    from heta_framework.contracts.access import VisibleDocuments

    scope = kb.access_scope()
    allow = getattr(scope, "visible_filter", None) or VisibleDocuments(scope.visible)
    out: dict = {"visible_documents": len(allow)}
    documents = sorted(allow)
    sample = list(texts[:100])
    if kb.has_component("stores.vector") and (chunks := _collection(kb.get_component("stores.vector"), CHUNKS)) is not None:
        keys = np.fromiter((key for key, _ in chunks._records.matching({"document_id": allow})), dtype=np.int64)
        out["vector_allowed_keys"], out["vector_collection_size"] = len(keys), len(chunks._records)
        out["vector_metadata_matching_document_id_ms"] = median_ms(lambda: chunks._records.matching({"document_id": allow}), repeat=10)
        plain, narrowed = turns_ms(lambda t: chunks.search(vectors[t], TOP_K), lambda t: chunks.search(vectors[t], TOP_K, {"document_id": allow}), sample)
        out["vector_collection_search_unfiltered_ms"], out["vector_collection_search_filtered_ms"] = plain, narrowed
        out["vector_filter_exact_limit"] = getattr(getattr(chunks, "_config", None), "filter_exact_limit", None)
        out.update(_vector_paths(chunks, keys, vectors, sample, "vector"))
    if kb.has_component("stores.text"):
        text = kb.get_component("stores.text")
        plain, narrowed = turns_ms(lambda t: text.search(t, TOP_K), lambda t: text.search(t, TOP_K, {"document_id": allow}), sample)
        out["text_store_search_unfiltered_ms"], out["text_store_search_filtered_ms"] = plain, narrowed
        out.update(_whoosh_parts(text, allow))
    if kb.has_component("stores.graph"):
        from heta_plugin_graph.visibility import FactVisibility

        graph = kb.get_component("stores.graph")
        # once per scope in a query (the scope remembers it), so this is the first query's cost after a catalog change
        out["graph_facts_of_documents_ms"] = median_ms(lambda: graph.facts_of_documents(documents), repeat=3)
        entities, relations = graph.facts_of_documents(documents)
        facts = FactVisibility(frozenset(entities), frozenset(relations))  # the filters the engine hands the collections
        out["graph_visible_entities"], out["graph_visible_relations"] = len(entities), len(relations)
        store = kb.get_component("stores.vector") if kb.has_component("stores.vector") else None
        for name, wanted in (("entities", facts.entity_filter), ("relations", facts.relation_filter)):
            collection = _collection(store, GRAPH_COLLECTIONS[name]) if store is not None else None
            if collection is None or not wanted:
                continue
            key = f"graph_{name}"
            try:
                keys = np.fromiter((k for k, _ in collection._records.matching(wanted)), dtype=np.int64)
                out[f"{key}_allowed_keys"], out[f"{key}_collection_size"] = len(keys), len(collection._records)
                out[f"{key}_metadata_matching_id_ms"] = median_ms(lambda c=collection, w=wanted: c._records.matching(w), repeat=5)
                plain, narrowed = turns_ms(lambda t, c=collection: c.search(vectors[t], TOP_K),
                                           lambda t, c=collection, w=wanted: c.search(vectors[t], TOP_K, w), sample[:50])
                out[f"{key}_collection_search_unfiltered_ms"], out[f"{key}_collection_search_filtered_ms"] = plain, narrowed
                out.update(_vector_paths(collection, keys, vectors, sample[:50], key))
            except Exception as exc:  # e.g. more ids than SQLite's host parameters
                out[f"{key}_error"] = f"{type(exc).__name__}: {exc}"[:300]
    return out


def _vector_paths(collection, keys, vectors: dict, sample: Sequence[str], prefix: str) -> dict:
    """A filtered FAISS search's two paths on the same allowed keys: exact scoring of the reconstructed vectors
    (taken up to ``filter_exact_limit`` keys) and the index search with a selector (the selector built once)."""
    import faiss

    from heta_plugin_vector import indexes

    if not len(keys) or not hasattr(collection, "_exact_among") or not hasattr(collection, "_index_search"):
        return {}
    selector = faiss.IDSelectorBatch(keys)

    def exact(text: str) -> None:
        with indexes.single_threaded():  # as collection.search runs one query vector
            collection._exact_among(_row(vectors[text]), keys, TOP_K)

    def selected(text: str) -> None:
        with indexes.single_threaded():
            collection._index_search(_row(vectors[text]), TOP_K, selector)

    exact_ms, selected_ms = turns_ms(exact, selected, sample)
    return {f"{prefix}_exact_among_allowed_ms": exact_ms, f"{prefix}_index_search_with_selector_ms": selected_ms}


def _row(vector) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(1, -1))


def _whoosh_parts(store, allow) -> dict:
    """Whoosh's filtered search in parts: turning the filter into terms, then into what the searcher is handed."""
    try:
        from heta_plugin_fulltext import whoosh_search
        from heta_plugin_fulltext.records import filter_groups
    except ImportError:
        return {}
    out = {"text_filter_groups_ms": median_ms(lambda: filter_groups({"document_id": allow}), repeat=10)}
    restriction = getattr(whoosh_search, "_restriction", None)
    searcher = getattr(store, "_current_searcher", None)
    if restriction is not None and searcher is not None:
        groups = filter_groups({"document_id": allow})
        out["text_restriction_ms"] = median_ms(lambda: restriction(searcher(), groups), repeat=10)
    return out


def _collection(store, name: str):
    """A FAISS collection of the vector store (its metadata table is what is timed), or None (another backend)."""
    if not store.has_collection(name):
        return None
    collection = store.collection(name)
    return collection if hasattr(collection, "_records") else None


async def _inline(function, /, *args, **kwargs):
    return function(*args, **kwargs)


async def profile_mode(kb, counted: CountedEmbeddings | None, vectors: dict, mode: str, texts: Sequence[str], lines: int = 40) -> dict:
    """cProfile over the filtered and the unfiltered query on the same texts.

    The stores' calls run in worker threads (``asyncio.to_thread``), which cProfile does not see: here they run
    inline in the profiled thread, and the query vectors are precomputed, so what is profiled is the query path.
    Returns the functions whose cumulative and own time per query grow most under the filter.
    """
    real = asyncio.to_thread
    asyncio.to_thread = _inline
    if counted is not None:
        counted.precomputed = vectors
    sides = {}
    try:
        for name, principals in (("unfiltered", [RESTRICTED]), ("filtered", None)):
            await kb.query(texts[0], mode=mode, top_k=TOP_K, principals=principals)
            profiler = cProfile.Profile()
            started = time.perf_counter()
            profiler.enable()
            for text in texts:
                await kb.query(text, mode=mode, top_k=TOP_K, principals=principals)
            profiler.disable()
            sides[name] = (pstats.Stats(profiler).stats, (time.perf_counter() - started) * 1000 / len(texts))
    finally:
        asyncio.to_thread = real
        if counted is not None:
            counted.precomputed = None
    n = len(texts)

    def label(key) -> str:
        file, line, function = key
        return f"{Path(file).parent.name}/{Path(file).name}:{line}({function})" if file != "~" else function

    plain = sides["unfiltered"][0]
    rows = []
    for key, (_, calls, own, cumulative, _) in sides["filtered"][0].items():
        before = plain.get(key, (0, 0, 0.0, 0.0, None))
        rows.append({
            "function": label(key),
            "filtered_cumulative_ms": round(cumulative * 1000 / n, 3), "unfiltered_cumulative_ms": round(before[3] * 1000 / n, 3),
            "filtered_own_ms": round(own * 1000 / n, 3), "unfiltered_own_ms": round(before[2] * 1000 / n, 3),
            "filtered_calls": round(calls / n, 1), "unfiltered_calls": round(before[1] / n, 1),
        })
    return {
        "queries": n,
        "unfiltered_ms_per_query": round(sides["unfiltered"][1], 3), "filtered_ms_per_query": round(sides["filtered"][1], 3),
        "extra_by_cumulative": sorted(rows, key=lambda r: r["unfiltered_cumulative_ms"] - r["filtered_cumulative_ms"])[:lines],
        "extra_by_own": sorted(rows, key=lambda r: r["unfiltered_own_ms"] - r["filtered_own_ms"])[:lines],
    }


# --- the run -----------------------------------------------------------------------------------------


async def failing_as_entry(measurement) -> dict:
    """A mode whose query fails is reported with its error (the other modes are still measured)."""
    try:
        return await measurement
    except Exception as exc:
        logging.getLogger(__name__).exception("measurement failed")
        return {"error": f"{type(exc).__name__}: {exc}"[:500], "meets_target": False}


def save_partial(work: Path, out: dict) -> None:
    """The numbers so far, beside the knowledge bases: a run cut short still leaves them."""
    (work / "access.partial.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


async def run(work: Path, query_count: int, profile_all: bool) -> dict:
    from heta_framework.kb import KnowledgeBase

    folder = prepare(work)
    kb = KnowledgeBase.load(folder)
    pairs = known_item_queries(load_articles(), query_count)
    texts, gold = [t for t, _ in pairs], [g for _, g in pairs]
    available = kb.available_queries
    modes = [m for m in (*TARGET_MODES, *INFO_MODES) if m in available]
    counted = CountedEmbeddings(kb.get_component("models.embedding")) if kb.has_component("models.embedding") else None
    out: dict = {
        "knowledge_base": str(folder), "queries": len(texts), "top_k": TOP_K, "target": f"filtered p50 ≤ {TARGET_RATIO}× unfiltered p50",
        "target_modes": list(TARGET_MODES), "modes": modes, "unavailable": {m: r for m, r in kb.unavailable_queries().items() if m in (*TARGET_MODES, *INFO_MODES)},
        "load_before": machine_load(), "cases": {},
    }
    if kb.has_component("stores.graph"):
        out["graph_size"] = kb.get_component("stores.graph").counts()
    vectors = dict(zip(texts, await counted.real_embed(texts))) if counted is not None else {}
    for case, hidden in CASES.items():
        setup = set_case(kb, hidden)
        visible = kb.access_scope().visible
        entry: dict = {**setup, "modes": {}, "without_model": {}}
        print(f"== {case}: {setup}", flush=True)
        for mode in modes:
            entry["modes"][mode] = row = await failing_as_entry(measure_mode(kb, mode, texts, gold, visible))
            print(f"  {case} {mode:<18} {json.dumps(row)}", flush=True)
            save_partial(work, {**out, "cases": {**out["cases"], case: entry}})
        if counted is not None:
            for mode in (m for m in modes if m in EMBEDDING_MODES and "error" not in entry["modes"][m]):
                entry["without_model"][mode] = row = await failing_as_entry(without_model(kb, counted, vectors, mode, texts))
                print(f"  {case} {mode:<18} without the model {json.dumps(row)}", flush=True)
                save_partial(work, {**out, "cases": {**out["cases"], case: entry}})
        missed = [m for m in TARGET_MODES if m in entry["modes"] and not entry["modes"][m].get("meets_target")]
        entry["missed_target"] = missed
        # the model's time (more of it on a busy machine) dilutes the ratio: a mode whose path without the model is
        # over the target is profiled too, since that is where the filter's cost shows
        over_without_model = [m for m, row in entry["without_model"].items() if (row.get("ratio_p50") or 0) > TARGET_RATIO]
        entry["over_target_without_model"] = over_without_model
        profiled = [m for m in (modes if profile_all else TARGET_MODES) if m in missed or m in over_without_model or profile_all]
        if profiled:
            entry["filter_calls"] = await asyncio.to_thread(filter_calls, kb, texts, vectors)
            print(f"  {case} filter calls {json.dumps(entry['filter_calls'])}", flush=True)
            save_partial(work, {**out, "cases": {**out["cases"], case: entry}})
            entry["profile"] = {m: await failing_as_entry(profile_mode(kb, counted, vectors, m, texts[:PROFILE_QUERIES]))
                                for m in profiled if "error" not in entry["modes"][m]}
        out["cases"][case] = entry
    kb.set_access(sorted(kb.documents), None)  # the copy back to public, as built
    kb.close()
    out["load_after"] = machine_load()
    out["peak_rss_mb"] = peak_memory_mb()
    return out


async def filter_calls_again(work: Path, query_count: int, result_path: Path) -> None:
    """``--only filter-calls``: time the stores' calls again for both cases and replace just those entries."""
    from heta_framework.kb import KnowledgeBase

    result = json.loads(result_path.read_text())
    kb = KnowledgeBase.load(prepare(work))
    texts = [t for t, _ in known_item_queries(load_articles(), query_count)]
    counted = CountedEmbeddings(kb.get_component("models.embedding"))
    vectors = dict(zip(texts, await counted.real_embed(texts)))
    for case, hidden in CASES.items():
        set_case(kb, hidden)
        calls = await asyncio.to_thread(filter_calls, kb, texts, vectors)
        result["cases"].setdefault(case, {})["filter_calls"] = {**calls, "measured_apart": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                                                 "load_1m": machine_load()["load_1m"]}
        print(f"  {case} filter calls {json.dumps(calls)}", flush=True)
    kb.set_access(sorted(kb.documents), None)
    kb.close()
    result_path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")


def code_state() -> dict:
    """The commit measured and the files of the working tree that differ from it (others may be editing them)."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=BENCH.parent, capture_output=True, text=True, check=False)
        return done.stdout

    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
    return {"commit": git("rev-parse", "--short", "HEAD").strip(), "modified_files": [f for f in changed if not f.startswith(("bench/", "docs/"))]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True,
                        help="folder with bench_modes.py's kb-10k (built there when absent); the copy goes to DIR/kb-10k-access")
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES)
    parser.add_argument("--profile-all", action="store_true", help="time the filter's calls and profile every mode, not only those over the target")
    parser.add_argument("--only", choices=["filter-calls"],
                        help="filter-calls: time the stores' calls again (both cases) and replace only them in the existing results")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    faulthandler.enable()  # a crash in a native library (FAISS, SQLite) still says where
    if args.only == "filter-calls":
        path = RESULTS / "access.json" if args.queries == DEFAULT_QUERIES else args.work / "access.json"
        asyncio.run(filter_calls_again(args.work, args.queries, path))
        print(f"updated {path}")
        return
    started = time.perf_counter()
    code = code_state()  # at the start: the modules are imported now
    result = {"code": code, **asyncio.run(run(args.work, args.queries, args.profile_all))}
    result["seconds"] = round(time.perf_counter() - started, 1)
    if args.queries == DEFAULT_QUERIES:
        path = write_result("access", result)
    else:
        path = args.work / "access.json"
        path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
