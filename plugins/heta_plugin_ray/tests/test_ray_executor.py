"""The ray executor on a real local Ray cluster: the same knowledge base as a local build, failing work,
a worker killed mid-batch, an unreachable cluster."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from heta_framework.errors import ExecutorError
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.kb.documents import content_hash, iter_chunks
from heta_framework.kb.executor import BatchFailure
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing.conformance import ExecutorSuite
from heta_plugin_ray import RayExecutor, RayExecutorConfig
from heta_plugin_vector.cache import CACHE_NAME, EmbeddingCache
from ray import cloudpickle as ray_cloudpickle

sys.path.insert(0, str(Path(__file__).parent))
import heta_ray_test_work as work  # noqa: E402

ray_cloudpickle.register_pickle_by_value(work)  # the workers cannot import the tests folder

MODEL = "local/all-MiniLM-L6-v2"
# a Ray cluster per module, a knowledge base built twice with a real model: every test on it is marked slow (conftest.py)

DOCUMENTS = Path(__file__).resolve().parents[3] / "examples" / "documents"
QUERIES = ("marine mammals", "ocean currents and climate", "coral reefs", "the deepest place on Earth", "plankton in the food chain")
RECIPE = """
{executor}
[models.embedding]
model_name = "{model}"

[[steps]]
step = "parse_documents"
[[steps]]
step = "split_documents"
[[steps]]
step = "persist_chunks"
[[steps]]
step = "embed_chunks"
batch_size = 16
[[steps]]
step = "index_vectors"
"""


class TestRayExecutor(ExecutorSuite):
    @pytest.fixture
    def executor(self, local_cluster):
        return RayExecutor(RayExecutorConfig(num_workers=2))


class NoModels:
    """A ``ModelSource`` for work that needs no model."""

    def model_config(self, key):
        raise KeyError(key)

    def open_model(self, key):
        raise KeyError(key)


def build(path: Path, executor: str, documents: Path) -> dict:
    registry = PluginRegistry.from_entry_points()
    kb = KnowledgeBase.create(path, Recipe.from_toml(RECIPE.format(executor=executor, model=MODEL), registry), registry=registry)
    try:
        report = kb.sync.build([documents])
        chunks = list(iter_chunks(kb.objects, list(kb.objects.keys("chunks/"))))
        with EmbeddingCache(kb.state.cache(CACHE_NAME)) as cache:
            found = cache.get_many(MODEL, [content_hash(c.text) for c in chunks])
        vectors = {c.id: found[content_hash(c.text)] for c in chunks if content_hash(c.text) in found}
        rankings = {
            (mode, q): [r.id for r in kb.sync.query(q, mode=mode, top_k=10).results]
            for q in QUERIES for mode in ("vector_search", "sql_text_search")
        }
        return {
            "documents": sorted(kb.documents), "chunks": sorted(c.id for c in chunks), "vectors": vectors,
            "rankings": rankings, "counts": kb.executor.counts(), "report": report, "path": path,
        }
    finally:
        kb.close()


@pytest.fixture(scope="module")
def builds(tmp_path_factory, local_cluster):
    """Bundled articles built by the local executor and by the ray executor (once for the module)."""
    folder = tmp_path_factory.mktemp("builds")
    documents = folder / "docs"  # the ocean articles: enough chunks for several batches on each worker, quick to build
    documents.mkdir()
    for article in sorted((DOCUMENTS / "ocean").glob("*.md")):
        shutil.copy(article, documents / article.name)
    return build(folder / "local", "", documents), build(folder / "ray", '[executor]\ntype = "ray"\nnum_workers = 2', documents)


def test_a_ray_build_is_the_local_build(builds):
    local, ray_built = builds
    assert ray_built["documents"] == local["documents"] and len(local["documents"]) >= 8
    assert ray_built["chunks"] == local["chunks"]
    assert ray_built["rankings"] == local["rankings"]
    assert ray_built["vectors"].keys() == local["vectors"].keys()
    for chunk_id, vector in local["vectors"].items():
        np.testing.assert_allclose(ray_built["vectors"][chunk_id], vector, atol=1e-6)
    counts = ray_built["counts"]
    embed = next(s for s in ray_built["report"].steps if s.name == "embed_chunks")
    assert counts["executor"] == "ray" and counts["tasks"] == embed.stats["executor_tasks"] > 1
    assert len(counts["workers"]) == 2 and sum(counts["workers"].values()) == counts["tasks"]  # both workers took batches
    assert counts["failed"] == 0


def test_a_rebuild_on_the_other_executor_reuses_the_cache(builds):
    local = builds[0]
    embedded = next(s for s in local["report"].steps if s.name == "embed_chunks").stats["embedded_texts"]
    registry = PluginRegistry.from_entry_points()
    recipe = Recipe.from_toml(RECIPE.format(executor='[executor]\ntype = "ray"', model=MODEL), registry)
    with KnowledgeBase(local["path"], recipe, registry) as kb:
        report = kb.sync.build(rebuild=True)
        stats = next(s for s in report.steps if s.name == "embed_chunks").stats
        assert stats["cache_hits"] == embedded and stats.get("embedded_texts", 0) == 0 and stats["executor_tasks"] == 0
        assert report.executor["executor"] == "ray"


async def test_work_that_raises_fails_its_batch_and_the_others_finish(local_cluster):
    executor = RayExecutor(RayExecutorConfig(num_workers=2))
    seen = []

    async def on_result(index, result):
        seen.append(index)

    try:
        results = await executor.map(work.Square(fail_on=5), [[1, 2], [3, 4], [5, 6], [7]], models=NoModels(), on_result=on_result)
    finally:
        executor.close()
    assert results[0] == [1, 4] and results[1] == [9, 16] and results[3] == [49]
    assert isinstance(results[2], BatchFailure) and results[2].index == 2
    assert "ValueError: cannot square 5" in results[2].error
    assert sorted(seen) == [0, 1, 2, 3]  # every batch handed over once
    assert executor.counts()["failed"] == 1


async def test_a_killed_worker_is_replaced_and_its_batch_runs_again_once(tmp_path, local_cluster):
    executor = RayExecutor(RayExecutorConfig(num_workers=1, max_retries=2))
    handed = []

    async def on_result(index, result):
        handed.append((index, result))

    batches = [[2], [3], [4]]
    started = time.monotonic()
    running = asyncio.ensure_future(
        executor.map(work.Square(hold=str(tmp_path), hold_on=2, seconds=30.0), batches, models=NoModels(), on_result=on_result)
    )
    try:
        marker = tmp_path / "2.pid"
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert time.monotonic() < deadline, "the worker never started the first batch"
            await asyncio.sleep(0.1)
        os.kill(int(marker.read_text()), signal.SIGKILL)  # the worker dies inside the batch
        results = await asyncio.wait_for(running, 120)
    finally:
        executor.close()
    assert results == [[4], [9], [16]]
    assert time.monotonic() - started < 25  # the killed batch did not wait out its 30 s: it ran again at once
    assert sorted(handed) == [(0, [4]), (1, [9]), (2, [16])]  # each batch once, the killed one included
    assert executor.counts()["retried"] >= 1


async def test_an_unreachable_cluster_names_its_address():
    executor = RayExecutor(RayExecutorConfig(address="127.0.0.1:9", connect_timeout_s=2))
    started = time.monotonic()
    with pytest.raises(ExecutorError, match=r"could not reach 127\.0\.0\.1:9.*ray start --head"):
        await executor.map(work.Square(), [[1]], models=NoModels())
    assert time.monotonic() - started < 30


def test_a_recipe_names_the_executor_and_its_options_are_checked():
    registry = PluginRegistry.from_entry_points()
    recipe = Recipe.from_toml(RECIPE.format(model=MODEL, executor='[executor]\ntype = "ray"\nnum_workers = 3\n[executor.resources.embed_chunks]\nnum_gpus = 1'), registry)
    assert recipe.executor.type == "ray" and recipe.to_dict()["executor"]["num_workers"] == 3
    from heta_framework.errors import RecipeError

    with pytest.raises(RecipeError, match=r"num_wrkers.*\$\.executor"):
        Recipe.from_toml(RECIPE.format(model=MODEL, executor='[executor]\ntype = "ray"\nnum_wrkers = 3'), registry)
    with pytest.raises(RecipeError, match=r"Unknown executor 'dask'"):
        Recipe.from_toml(RECIPE.format(model=MODEL, executor='[executor]\ntype = "dask"'), registry)
