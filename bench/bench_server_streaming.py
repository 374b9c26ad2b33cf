"""``heta serve`` under load with streaming clients in the mix (issue #38).

bench_server.py's mix of five modes, plus streamed answers (``/api/v1/query`` with ``stream`` and ``answer``)
and streamed chat completions (``/v1/chat/completions`` with ``stream``); the language model is the scripted
OpenAI-compatible server on 127.0.0.1 streaming 20 pieces 5 ms apart. Every request checks its whole stream
(results, 20 tokens, done; chat ending in ``[DONE]`` without an error). Counts errors and the latency of each kind.

    python bench/bench_server_streaming.py [--seconds 45] [--clients 8]

Writes bench/results/server_streaming.json.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_server as bs  # noqa: E402
import httpx  # noqa: E402
from common import machine_load, percentiles_ms, write_result  # noqa: E402
from heta_framework.testing.http import ScriptedServer, chat_completion_body, chat_stream_reply  # noqa: E402

KINDS = (*bs.MODES, "stream_answer", "chat_stream")


def responder(request):
    if (request.json or {}).get("stream"):
        return chat_stream_reply([f"word{i} " for i in range(19)] + ["[1]."], interval=0.005)
    return chat_completion_body(json.dumps({"answer": "x [1].", "sufficient": True, "citations": [1]}))


async def main(seconds: float, clients: int, work: Path) -> dict:
    base = work / "bench-kb"
    if not base.exists():
        print("built in", round(bs.build(base), 1), "s", flush=True)
    with ScriptedServer() as model:
        model.respond("chat/completions", responder)
        kb = work / "kb-llm"
        shutil.rmtree(kb, ignore_errors=True)
        shutil.copytree(base, kb)
        recipe = kb / "recipe.toml"
        recipe.write_text(recipe.read_text() + f'\n[models.language]\nmodel_name = "openai/test-model"\nbase_url = "{model.base_url}"\napi_key = "sk-load"\n')
        port = bs.free_port()
        server = subprocess.Popen([bs.HETA, "--kb", str(kb), "serve", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}"
        try:
            while True:
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert server.poll() is None, server.stderr.read().decode()[-800:]
                await asyncio.sleep(0.2)
            pairs = [(kind, q) for q in bs.QUESTIONS for kind in KINDS]
            latencies = {kind: [] for kind in KINDS}
            errors = []
            deadline = time.perf_counter() + seconds
            async with httpx.AsyncClient(base_url=url, timeout=120, limits=httpx.Limits(max_connections=clients * 2)) as http:
                async def one(kind, question):
                    if kind == "stream_answer":
                        async with http.stream("POST", "/api/v1/query", json={"text": question, "mode": "hybrid_search", "answer": True, "stream": True}) as r:
                            r.raise_for_status()
                            events = [line async for line in r.aiter_lines() if line.startswith("event: ")]
                        assert events[0] == "event: results" and events[-1] == "event: done" and events.count("event: token") == 20, events[-3:]
                    elif kind == "chat_stream":
                        async with http.stream("POST", "/v1/chat/completions", json={"model": "heta:hybrid_search", "stream": True,
                                                "messages": [{"role": "user", "content": question}]}) as r:
                            r.raise_for_status()
                            data = [line async for line in r.aiter_lines() if line.startswith("data: ")]
                        assert data[-1] == "data: [DONE]" and not any('"error"' in d for d in data), data[-2:]
                    else:
                        r = await http.post("/api/v1/query", json={"text": question, "mode": kind, "top_k": 10, "options": bs.options_for(kind)})
                        r.raise_for_status()

                async def client(offset):
                    for kind, question in itertools.islice(itertools.cycle(pairs), offset * 7, None):
                        if time.perf_counter() >= deadline:
                            return
                        started = time.perf_counter()
                        try:
                            await one(kind, question)
                        except Exception as exc:
                            errors.append(f"{kind}: {type(exc).__name__}: {str(exc)[:160]}")
                            continue
                        latencies[kind].append(time.perf_counter() - started)

                started = time.perf_counter()
                await asyncio.gather(*(client(i) for i in range(clients)))
                elapsed = time.perf_counter() - started
            total = sum(len(v) for v in latencies.values())
            return {"seconds": round(elapsed, 1), "clients": clients, "requests": total, "errors": len(errors), "error_samples": errors[:5],
                    "throughput_rps": round(total / elapsed, 2), "model_requests": len(model.requests), "model_errors": model.errors[:3],
                    "per_kind": {k: {"requests": len(v), **(percentiles_ms(v) if v else {})} for k, v in latencies.items()},
                    "load_average": machine_load()}
        finally:
            server.terminate()
            server.wait(timeout=60)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=45.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--work", type=Path, help="keep the knowledge base here (default: a temporary folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-server-streaming-"))
    try:
        result = asyncio.run(main(args.seconds, args.clients, work))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=1))
    print(f"wrote {write_result('server_streaming', result)}")
