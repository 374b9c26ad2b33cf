"""The Python API in scripts, threads, notebooks and servers: kb.sync, context managers, to_dict/from_dict."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading

import pytest
from heta_framework.errors import HetaError
from heta_framework.kb import KnowledgeBase
from heta_framework.kb.search import QueryResponse


@pytest.fixture
def built_kb(sql_kb, docs_dir):
    sql_kb.sync.build([docs_dir])
    return sql_kb


def names(response: QueryResponse) -> list[str]:
    return [r.metadata["name"] for r in response.results]


def test_sync_works_inside_a_running_event_loop(built_kb):
    """A notebook cell or a FastAPI handler: asyncio.run would fail there."""

    async def handler() -> QueryResponse:
        asyncio.get_running_loop()  # we really are inside a loop
        return built_kb.sync.query("whales", mode="sql_text_search")

    response = asyncio.run(handler())
    assert names(response)[0] == "whales.md"


def test_sync_from_many_threads_at_once(built_kb):
    results: dict[int, list[str]] = {}
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            results[index] = names(built_kb.sync.query("fox" if index % 2 else "whales", mode="sql_text_search"))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert all(results[i][0] == ("fox.txt" if i % 2 else "whales.md") for i in range(8))


def test_sync_called_from_its_own_loop_says_to_await(built_kb):
    async def inside() -> None:
        built_kb.sync.query("whales", mode="sql_text_search")

    with pytest.raises(HetaError, match="await"):
        built_kb.sync.run(inside())


def test_context_manager_closes_stores_and_the_loop_thread(sql_kb, docs_dir):
    before = set(threading.enumerate())
    with KnowledgeBase.load(sql_kb.path, registry=sql_kb.registry) as kb:
        kb.sync.build([docs_dir])
        assert kb._components.opened  # stores were opened
        loop_threads = [t for t in set(threading.enumerate()) - before if t.name.startswith("heta-kb-")]
        assert len(loop_threads) == 1
    assert kb._components.opened == {}
    for thread in loop_threads:
        thread.join(timeout=10)
        assert not thread.is_alive()


async def test_async_context_manager(sql_kb, docs_dir):
    async with KnowledgeBase.load(sql_kb.path, registry=sql_kb.registry) as kb:
        await kb.build([docs_dir])
        assert names(await kb.query("fox", mode="sql_text_search"))[0] == "fox.txt"
    assert kb._components.opened == {}


def test_response_round_trips_through_json(built_kb):
    response = built_kb.sync.query("whales fox", mode="sql_text_search", trace=True)
    data = json.loads(json.dumps(response.to_dict()))
    assert data["metadata"]["mode"] == "sql_text_search"
    assert data["trace"]["mode"] == "sql_text_search"
    again = QueryResponse.from_dict(data)
    assert again.results == response.results
    assert again.trace.mode == response.trace.mode and again.trace.result_count == response.trace.result_count
    assert again.to_dict() == data


def test_readme_style_script_without_an_event_loop(sql_kb, docs_dir, tmp_path):
    """A plain script: load by path (plugins from entry points), build, query, no asyncio in sight."""
    kb_path = tmp_path / "script-kb"
    sql_kb.recipe.save(tmp_path / "recipe.toml")
    script = textwrap.dedent(
        f"""
        from heta_framework.kb import KnowledgeBase, Recipe
        from heta_framework.plugins.registry import PluginRegistry

        recipe = Recipe.from_toml(open({str(tmp_path / "recipe.toml")!r}).read(), PluginRegistry.from_entry_points())
        KnowledgeBase.create({str(kb_path)!r}, recipe).close()

        with KnowledgeBase.load({str(kb_path)!r}) as kb:
            kb.sync.build([{str(docs_dir)!r}])
            response = kb.sync.query("whales", mode="sql_text_search", top_k=3)
            print(response.results[0].metadata["name"])
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "whales.md"
