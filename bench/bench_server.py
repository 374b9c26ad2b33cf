"""``heta serve`` under load on loopback, beside in-process ``kb.query`` on the same queries.

1. Builds (or reuses, ``--kb``) a knowledge base of examples/documents (49 articles) with every
   offline leg: local MiniLM vectors (FAISS), Whoosh full text, an nlp-extracted graph.
2. CLI per-call cost: ``heta query --mode vector_search`` as a fresh process, wall time (it
   loads the embedding model each time), and ``full_text_search`` for contrast.
3. Starts ``heta serve`` as its own process: seconds until ``/healthz`` answers (the models
   load at start-up), then the first query.
4. ``--clients`` (8) concurrent HTTP clients (httpx, one connection each) for ``--seconds``
   (60) of mixed modes:
   errors, p50/p95 per mode, requests per second. ``memory_search`` runs with
   ``update_access`` off, so the runs do not change each other's recency.
5. The same mix for the same time through ``kb.query`` in this process, with the same number
   of concurrent tasks: the in-process throughput the server is held to (target: server >= 0.8x).
   The two take turns, A B B A, half the time each, so the shared machine's load drifts over both.

Writes bench/results/server.json.

    python bench/bench_server.py                  # ~3 minutes on 2 cores (most of it the build)
    python bench/bench_server.py --kb /tmp/bench-kb   # build there once, reuse it on the next runs
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import httpx  # noqa: E402
from common import machine_load, percentiles_ms, write_result  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ROOT / "examples" / "documents"
HETA = str(Path(sys.executable).parent / "heta")
MODES = ("vector_search", "full_text_search", "heta_graph_search", "hybrid_search", "memory_search")
QUESTIONS = (
    "Who discovered penicillin?", "animals that breathe air but live in the sea", "Alan Turing and codebreaking",
    "first humans on the Moon", "how do volcanoes erupt", "coral reef ecosystems", "the theory of evolution",
    "what is photosynthesis", "ancient Egyptian pyramids", "black holes and gravity", "the printing press",
    "how vaccines work",
)


def build(kb_path: Path) -> float:
    from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
    from heta_framework.common.models import EmbeddingModel
    from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    recipe = Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[ParseDocuments(), SplitDocuments(), EmbedChunks(), IndexVectors(), IndexFullText(), HetaGraphProcedure(extractor="nlp")],
    )
    started = time.perf_counter()
    with KnowledgeBase.create(kb_path, recipe) as kb:
        kb.sync.build([DOCUMENTS])
    return time.perf_counter() - started


def workload() -> list[tuple[str, str]]:
    """(mode, question) pairs, every mode with every question, interleaved so each client mixes modes."""
    return [(mode, question) for question in QUESTIONS for mode in MODES]


def options_for(mode: str) -> dict:
    return {"update_access": False} if mode == "memory_search" else {}


def cli_query_seconds(kb_path: Path, mode: str, runs: int) -> list[float]:
    seconds = []
    for run in range(runs):
        started = time.perf_counter()
        subprocess.run([HETA, "--kb", str(kb_path), "query", QUESTIONS[run % len(QUESTIONS)], "--mode", mode, "--json"],
                       check=True, capture_output=True)
        seconds.append(time.perf_counter() - started)
    return seconds


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def load(call, clients: int, seconds: float) -> dict:
    """``clients`` concurrent loops of ``call(mode, question)`` over the mix for ``seconds``."""
    pairs = workload()
    latencies: dict[str, list[float]] = {mode: [] for mode in MODES}
    errors: list[str] = []
    deadline = time.perf_counter() + seconds

    async def client(offset: int) -> None:
        for mode, question in itertools.islice(itertools.cycle(pairs), offset * 7, None):
            if time.perf_counter() >= deadline:
                return
            started = time.perf_counter()
            try:
                await call(mode, question)
            except Exception as exc:  # counted, not raised: the target is 0
                errors.append(f"{mode}: {type(exc).__name__}: {str(exc)[:120]}")
                continue
            latencies[mode].append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    elapsed = time.perf_counter() - started
    total = sum(len(v) for v in latencies.values())
    return {
        "seconds": round(elapsed, 1),
        "requests": total,
        "errors": len(errors),
        "error_samples": errors[:5],
        "throughput_rps": round(total / elapsed, 2),
        "_latencies": latencies,
    }


def merged(runs: list[dict]) -> dict:
    """One ``load`` result from several segments: requests and seconds summed, percentiles over every latency."""
    latencies: dict[str, list[float]] = {mode: [] for mode in MODES}
    for run in runs:
        for mode, values in run.pop("_latencies").items():
            latencies[mode] += values
    seconds = sum(r["seconds"] for r in runs)
    total = sum(r["requests"] for r in runs)
    return {
        "seconds": round(seconds, 1),
        "segments": len(runs),
        "requests": total,
        "errors": sum(r["errors"] for r in runs),
        "error_samples": [e for r in runs for e in r["error_samples"]][:5],
        "throughput_rps": round(total / seconds, 2) if seconds else 0.0,
        "per_segment_rps": [r["throughput_rps"] for r in runs],
        "per_mode": {mode: {"requests": len(v), **(percentiles_ms(v) if v else {})} for mode, v in latencies.items()},
    }


async def start_server(kb_path: Path) -> tuple[subprocess.Popen, str, dict]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    server = subprocess.Popen([HETA, "--kb", str(kb_path), "serve", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    async with httpx.AsyncClient(base_url=url, timeout=120) as probe:
        while True:
            try:
                if (await probe.get("/healthz")).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if server.poll() is not None:
                raise RuntimeError(f"heta serve exited: {server.stderr.read().decode()[-800:]}")
            await asyncio.sleep(0.05)
        ready = time.perf_counter() - started
        first_started = time.perf_counter()
        first = await probe.post("/api/v1/query", json={"text": QUESTIONS[0], "mode": "vector_search"})
        first.raise_for_status()
        first_query = time.perf_counter() - first_started
    return server, url, {"start_to_ready_s": round(ready, 2), "first_query_ms": round(first_query * 1000, 1)}


async def compare(kb_path: Path, clients: int, seconds: float) -> tuple[dict, dict]:
    """Server and in-process runs in the order A B B A (half the time each), so a change in the shared
    machine's load between the start and the end weighs on both alike."""
    from heta_framework.kb import KnowledgeBase

    server, url, startup = await start_server(kb_path)
    kb = KnowledgeBase.load(kb_path)
    connections = [httpx.AsyncClient(base_url=url, timeout=120) for _ in range(clients)]
    counter = itertools.count()

    async def over_http(mode: str, question: str) -> None:
        client = connections[next(counter) % clients]
        reply = await client.post("/api/v1/query", json={"text": question, "mode": mode, "top_k": 10, "options": options_for(mode)})
        if reply.status_code != 200:
            raise RuntimeError(f"HTTP {reply.status_code}: {reply.text[:200]}")

    async def in_process(mode: str, question: str) -> None:
        await kb.query(question, mode=mode, top_k=10, options=options_for(mode))

    try:
        await kb.query(QUESTIONS[0], mode="vector_search")  # load the model here too, as the server did at start-up
        served, local = [], []
        for runs, call in ((served, over_http), (local, in_process), (local, in_process), (served, over_http)):
            runs.append(await load(call, clients, seconds / 2))
        return {**startup, "load": merged(served)}, merged(local)
    finally:
        for connection in connections:
            await connection.aclose()
        kb.close()
        server.terminate()
        server.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", type=Path, help="a knowledge base to reuse, built there first if missing (default: a temporary one)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cli-runs", type=int, default=2)
    args = parser.parse_args()
    result: dict = {"clients": args.clients, "seconds_per_phase": args.seconds, "modes": list(MODES),
                    "questions": len(QUESTIONS), "machine_before": machine_load()}
    with tempfile.TemporaryDirectory() as scratch:
        kb_path = args.kb or Path(scratch) / "kb"
        if not (kb_path / "recipe.toml").exists():
            result["build_s"] = round(build(kb_path), 1)
        result["cli_per_call"] = {
            mode: percentiles_ms(cli_query_seconds(kb_path, mode, args.cli_runs)) for mode in ("vector_search", "full_text_search")
        }
        result["server"], result["in_process"] = asyncio.run(compare(kb_path, args.clients, args.seconds))
    served, local = result["server"]["load"]["throughput_rps"], result["in_process"]["throughput_rps"]
    result["throughput_ratio_server_vs_in_process"] = round(served / local, 3) if local else None
    result["machine_after"] = machine_load()
    path = write_result("server", result)
    print(f"wrote {path}")
    print(f"CLI vector query per call: {result['cli_per_call']['vector_search']['p50_ms'] / 1000:.1f} s; "
          f"server ready in {result['server']['start_to_ready_s']} s, first query {result['server']['first_query_ms']} ms")
    print(f"throughput: server {served} req/s, in-process {local} req/s, ratio {result['throughput_ratio_server_vs_in_process']}; "
          f"errors {result['server']['load']['errors']}")
    for mode in MODES:
        s, i = result["server"]["load"]["per_mode"][mode], result["in_process"]["per_mode"][mode]
        print(f"  {mode:18} server p50 {s.get('p50_ms')} ms p95 {s.get('p95_ms')} ms | in-process p50 {i.get('p50_ms')} ms p95 {i.get('p95_ms')} ms")


if __name__ == "__main__":
    main()
