"""A build fanned out on Ray into a knowledge base on PostgreSQL, read by another process that shares only the DSN.

The recipe is `heta init --backend postgres`'s (every slot and the state on the server) plus
``[executor] type = "ray"``; the builder's folder holds only that recipe. A second process, in a folder of
its own with the same recipe minus the executor, lists the documents and answers every mode the build made.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.kb.starter import starter_recipe_toml
from heta_framework.plugins.registry import PluginRegistry
from heta_plugin_postgres.testing import drop_schema, postgres_dsn  # noqa: F401  (the session's server)

pytestmark = pytest.mark.slow
DOCUMENTS = Path(__file__).resolve().parents[1] / "examples" / "documents"
QUERIES = ("coral reefs", "whales in the ocean")

# the reader: load the knowledge base from its recipe alone and answer every available mode
READER = textwrap.dedent(
    """
    import json, sys
    from heta_framework.kb import KnowledgeBase
    queries = json.loads(sys.argv[2])
    with KnowledgeBase.load(sys.argv[1]) as kb:
        modes = [m for m in ("vector_search", "full_text_search", "sql_text_search", "heta_graph_search") if m in kb.available_queries]
        print(json.dumps({
            "documents": sorted(kb.documents),
            "rankings": {f"{m}|{q}": [r.id for r in kb.sync.query(q, mode=m, top_k=5).results] for m in modes for q in queries},
        }))
    """
)


def recipe_text(namespace: str, executor: str) -> str:
    text = starter_recipe_toml(PluginRegistry.from_entry_points(strict=True), backend="postgres")
    text = text.replace('dsn_env = "HETA_POSTGRES_DSN"\n', f'dsn_env = "HETA_POSTGRES_DSN"\nnamespace = "{namespace}"\n')
    return executor + text


def test_a_ray_build_on_postgres_is_read_by_another_process(postgres_dsn, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HETA_POSTGRES_DSN", postgres_dsn)
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    namespace = f"ray_{uuid.uuid4().hex[:8]}"
    documents = tmp_path / "ocean"
    documents.mkdir()
    for article in sorted((DOCUMENTS / "ocean").glob("*.md"))[:5]:
        shutil.copy(article, documents / article.name)
    registry = PluginRegistry.from_entry_points(strict=True)
    builder = tmp_path / "builder"
    try:
        recipe = Recipe.from_toml(recipe_text(namespace, '[executor]\ntype = "ray"\nnum_workers = 1\n'), registry)
        with KnowledgeBase.create(builder, recipe, registry=registry) as kb:
            report = kb.sync.build([documents])
            built = {
                "documents": sorted(kb.documents),
                "rankings": {f"{m}|{q}": [r.id for r in kb.sync.query(q, mode=m, top_k=5).results]
                             for m in ("vector_search", "full_text_search", "sql_text_search", "heta_graph_search")
                             if m in kb.available_queries for q in QUERIES},
            }
        assert report.executor["executor"] == "ray" and report.executor["tasks"] > 0 and report.executor["failed"] == 0
        assert len(built["documents"]) == 5 and len(built["rankings"]) >= 6  # at least three modes answered
        assert sorted(p.name for p in builder.iterdir()) == ["recipe.toml"]  # everything is on the server

        reader = tmp_path / "reader"
        reader.mkdir()
        (reader / "recipe.toml").write_text(recipe_text(namespace, ""))
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        done = subprocess.run([sys.executable, "-c", READER, str(reader), json.dumps(QUERIES)], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout.strip().splitlines()[-1]) == built
    finally:
        import ray

        ray.shutdown()
        drop_schema(postgres_dsn, namespace)
